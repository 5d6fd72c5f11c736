package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/schema"
)

// ToolCheck is the part of checking a tool manifest that only the server's
// runtimes can do (a handler is registered for the runtime; an in_process
// tool names a compiled-in function; a bwrap manifest asks for no raw flags).
// The tool dispatcher supplies it (Opts.ToolCheck); each problem names the
// content path it is about.
type ToolCheck func(ctx context.Context, in *ValidationInput) ([]problem.Detail, error)

// validateToolManifest checks what a tool's JSON Schema alone cannot: its input
// and output schemas compile, its id is its name and stays so, only admins
// register or change in_process tools (they run as the server), and the
// runtime accepts it.
func validateToolManifest(ctx context.Context, c *Checker, in *ValidationInput) ([]problem.Detail, error) {
	obj, _ := in.Decoded().(map[string]any)
	var out []problem.Detail
	for _, k := range []string{"input_schema", "output_schema"} {
		v, ok := obj[k]
		if !ok {
			continue
		}
		raw, _ := json.Marshal(v)
		if _, err := schema.CompileJSONSchema(raw); err != nil {
			out = append(out, problem.Field("content."+k, "tool_manifest_valid", "is not a valid JSON Schema: "+err.Error(), nil))
		}
	}
	name, _ := obj["name"].(string)
	if in.Prev == nil && name != "" && in.ID != name {
		out = append(out, problem.Field("id", "tool_id_is_name",
			fmt.Sprintf("a tool's id is its name: create it as tool:%s, not tool:%s", name, in.ID), in.ID))
	}
	if in.Prev != nil && name != "" && name != in.ID {
		out = append(out, problem.Field("content.name", "tool_name_fixed",
			fmt.Sprintf("a tool keeps its name; register %q as a new tool", name), name))
	}
	if runtime, _ := obj["runtime"].(string); runtime == "in_process" || (in.Prev != nil && prevRuntime(in.Prev) == "in_process") {
		if !in.Request.Actor.Has(auth.PermAdmin) {
			verb := "registering"
			if in.Prev != nil {
				verb = "changing"
			}
			return nil, problem.New(problem.PermissionDenied,
				"%s an in_process tool needs the admin permission: it runs inside the server", verb)
		}
	}
	if len(out) == 0 && c.s.toolCheck != nil {
		ps, err := c.s.toolCheck(ctx, in)
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	return out, nil
}

func prevRuntime(a *Artifact) string {
	var c struct {
		Runtime string `json:"runtime"`
	}
	_ = json.Unmarshal(a.Content, &c)
	return c.Runtime
}
