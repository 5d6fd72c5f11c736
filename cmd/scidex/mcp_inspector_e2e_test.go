package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/e2e"
	"github.com/scidex/substrate/internal/mcp"
)

// The MCP inspector's CLI (@modelcontextprotocol/inspector-cli, pinned in
// e2e/mcp-inspector) against the real binary, over /mcp (streamable HTTP, the
// bearer token in an Authorization header) and `scidex mcp` (stdio, the token
// and the database in the server's environment, given with the inspector's
// -e), also beside a `scidex serve` on the embedded default, as a desktop
// agent runs it: it lists the tools, whose schemas are the generated ones; creates a
// hypothesis and reads it back; and has a malformed ref and a wrongly typed
// field refused with their argument paths named. Each run of the CLI is one
// connection and one method; its JSON output is decoded, not searched.
func TestMCPInspector(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary and node")
	}
	n := startForNode(t, "../../e2e/mcp-inspector", "mcp-inspector-secret-0123456789abcdef-0123")
	node, dir, srv, db, secret, tok := n.node, n.dir, n.srv, n.db, n.secret, n.token
	catalog := generatedTools(t)

	// The desktop set-up: `scidex serve` on the embedded default owns its
	// data dir's PostgreSQL, and the agent's stdio command names only that
	// data dir (no DATABASE_URL): `scidex mcp` joins the running cluster.
	besideDir := e2e.DataDir(t)
	beside := e2e.Start(t, e2e.Opts{DataDir: besideDir, Env: []string{"SCIDEX_JWT_SECRET=" + secret}})

	for _, tr := range []struct {
		name   string
		server []string // the inspector's arguments that name the server
		srv    *e2e.Proc
	}{
		{"http", []string{srv.URL + "/mcp", "--transport", "http", "--header", "Authorization: Bearer " + tok}, srv},
		// A data directory of its own, so that `scidex mcp` writes nothing
		// under the default /var/lib/scidex (and, were DATABASE_URL lost on the
		// way, starts its embedded cluster in a directory the test removes).
		{"stdio", []string{"-e", "SCIDEX_TOKEN=" + tok, "-e", "DATABASE_URL=" + db, "-e", "SCIDEX_JWT_SECRET=" + secret,
			"-e", "SCIDEX_DATA_DIR=" + e2e.DataDir(t), e2e.Binary(t), "mcp"}, srv},
		{"stdio beside serve", []string{"-e", "SCIDEX_TOKEN=" + tok, "-e", "SCIDEX_JWT_SECRET=" + secret,
			"-e", "SCIDEX_DATA_DIR=" + besideDir, e2e.Binary(t), "mcp"}, beside},
	} {
		t.Run(tr.name, func(t *testing.T) {
			srv := tr.srv
			in := inspector{node: node, dir: dir, server: tr.server, serverLog: srv.Log}
			checkListedTools(t, in.list(t), catalog)

			title := "TREM2 R47H impairs microglial uptake of amyloid-beta (inspector, " + tr.name + ")"
			content := map[string]any{
				"target_gene":     "TREM2",
				"disease":         "Alzheimer's disease",
				"hypothesis_type": "mechanistic",
				"confidence":      0.6,
				"evidence_for":    []any{map[string]any{"claim": "R47H carriers have about three times the risk.", "source": "Jonsson et al. 2013", "strength": "strong"}},
				"predictions":     []any{map[string]any{"statement": "R47H iPSC microglia take up less fibrillar amyloid-beta than isogenic controls."}},
			}
			input, _ := json.Marshal(map[string]any{"type": "hypothesis", "title": title, "content": content})
			created := in.call(t, "create_artifact", "input="+string(input))
			var ws struct {
				CreateArtifact struct {
					Typename    string `json:"__typename"`
					Ref         string
					ContentHash string
				}
			}
			created.data(t, &ws)
			w := ws.CreateArtifact
			if w.Typename != "WriteSuccess" || !strings.HasPrefix(w.Ref, "hypothesis:") || !strings.Contains(w.Ref, "@sha256:") {
				t.Fatalf("create_artifact: %s", created.raw)
			}
			ref, _, _ := strings.Cut(w.Ref, "@")

			var got struct {
				Artifact *struct {
					Ref, Type, Title, ContentHash string
					Content                       map[string]any
					CreatedBy                     struct{ ID, Kind string }
					IsLatest                      bool
				}
			}
			read := in.call(t, "get_artifact", "ref="+ref)
			read.data(t, &got)
			a := got.Artifact
			if a == nil {
				t.Fatalf("get_artifact %s: no artifact: %s", ref, read.raw)
			}
			if a.Ref != w.Ref || a.Type != "hypothesis" || a.Title != title || a.ContentHash != w.ContentHash || !a.IsLatest ||
				a.CreatedBy.ID != "ada" || a.CreatedBy.Kind != "ai_local" {
				t.Errorf("get_artifact %s: the envelope %+v, after a create that returned %+v", ref, *a, w)
			}
			if !equalAsJSON(t, a.Content, content) {
				t.Errorf("get_artifact %s: content %v, created with %v", ref, a.Content, content)
			}
			// The write is in the server's database: its own /graphql reads
			// it (over stdio, a `scidex mcp` on another database would have
			// read back its own write just as well).
			served, errs := srv.GraphQL(t, tok, `query($ref: Ref!) { artifact(ref: $ref) { contentHash } }`, map[string]any{"ref": ref})
			if art, _ := served["artifact"].(map[string]any); len(errs) > 0 || art == nil || art["contentHash"] != w.ContentHash {
				t.Errorf("the server's /graphql reads %s as %v (errors %v), not with the hash %s", ref, served, errs, w.ContentHash)
			}

			// Refused by the input schema before anything runs, each with the
			// argument's path: a malformed ref, and a title that is a number.
			malformed := ref + "@sha256:not-a-digest"
			in.call(t, "get_artifact", "ref="+malformed).refused(t, "ref", "pattern", malformed)
			in.call(t, "create_artifact", `input={"type":"hypothesis","title":7,"content":{}}`).refused(t, "input.title", "type", float64(7))
		})
	}
}

// inspector runs the inspector's CLI, as its package's bin does:
// `mcp-inspector-cli --cli <server> --method …`, which starts the CLI proper
// (build/index.js) with the same arguments under node.
type inspector struct {
	node, dir string
	server    []string
	serverLog func() string
}

// run runs one method and returns its standard output, the JSON the CLI
// prints; a non-zero exit (a failed connection, an unknown tool) fails the
// test with what the CLI and the server said.
func (in inspector) run(t *testing.T, method ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cli := filepath.Join(in.dir, "node_modules", "@modelcontextprotocol", "inspector-cli", "build", "cli.js")
	args := append(append([]string{cli, "--cli"}, in.server...), method...)
	cmd := exec.CommandContext(ctx, in.node, args...)
	// The CLI reads its own package.json for its client name: it imports
	// ../package.json beside its module, but only after checking that
	// ../package.json exists relative to the working directory (else it
	// imports ../../package.json, which the standalone package does not have,
	// and exits before connecting: inspector PR #839, issue #1503, closed
	// unfixed for v1). node_modules is a working directory whose parent has a
	// package.json.
	cmd.Dir = filepath.Join(in.dir, "node_modules")
	// Nothing of this test's own configuration reaches the stdio server but
	// what the inspector's -e flags pass.
	cmd.Env = []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DATABASE_URL=") && !strings.HasPrefix(kv, "SCIDEX_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcp-inspector-cli %s: %v\nstderr:\n%s\nstdout:\n%s\nserver log:\n%s",
			strings.Join(method, " "), err, stderr.String(), stdout.String(), in.serverLog())
	}
	return stdout.Bytes()
}

// listedTool is one tool of a tools/list result, its schemas kept as decoded
// JSON to compare with the generated catalog.
type listedTool struct {
	Name         string
	Description  string
	InputSchema  map[string]any
	OutputSchema map[string]any
	Annotations  map[string]any
}

// list runs tools/list.
func (in inspector) list(t *testing.T) []listedTool {
	t.Helper()
	out := in.run(t, "--method", "tools/list")
	var res struct{ Tools []listedTool }
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("tools/list: the output is not a result: %v\n%s", err, out)
	}
	return res.Tools
}

// toolResult is a tools/call result as the CLI prints it.
type toolResult struct {
	Content []struct {
		Type, Text string
	}
	StructuredContent json.RawMessage
	IsError           bool
	raw               []byte
}

// call runs tools/call of tool with --tool-arg key=value pairs (a value that
// is JSON is sent as that JSON).
func (in inspector) call(t *testing.T, tool string, args ...string) toolResult {
	t.Helper()
	method := []string{"--method", "tools/call", "--tool-name", tool}
	for _, a := range args {
		method = append(method, "--tool-arg", a)
	}
	out := in.run(t, method...)
	var res toolResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("tools/call %s: the output is not a result: %v\n%s", tool, err, out)
	}
	res.raw = out
	return res
}

// data decodes a successful result's structured content into v.
func (r toolResult) data(t *testing.T, v any) {
	t.Helper()
	if r.IsError || len(r.StructuredContent) == 0 {
		t.Fatalf("not a result with data: %s", r.raw)
	}
	if err := json.Unmarshal(r.StructuredContent, v); err != nil {
		t.Fatalf("structured content: %v\n%s", err, r.raw)
	}
}

// refused checks r is the input schema's refusal (an isError result, its text
// the error with code VALIDATION_FAILED) with one problem at path, of
// constraint, for the value received.
func (r toolResult) refused(t *testing.T, path, constraint string, value any) {
	t.Helper()
	if !r.IsError || len(r.Content) != 1 || r.Content[0].Type != "text" {
		t.Fatalf("want an isError result with one text, got %s", r.raw)
	}
	var body struct {
		Errors []struct {
			Code, Message string
			Problems      []struct {
				Path, Constraint string
				ValueReceived    any
			}
		}
	}
	if err := json.Unmarshal([]byte(r.Content[0].Text), &body); err != nil {
		t.Fatalf("the refusal's text is not the error body: %v\n%s", err, r.raw)
	}
	if len(body.Errors) != 1 || body.Errors[0].Code != "VALIDATION_FAILED" || len(body.Errors[0].Problems) != 1 {
		t.Fatalf("want one VALIDATION_FAILED error with one problem, got %s", r.Content[0].Text)
	}
	e, p := body.Errors[0], body.Errors[0].Problems[0]
	if p.Path != path || p.Constraint != constraint || !reflect.DeepEqual(p.ValueReceived, value) {
		t.Errorf("want the problem at %s (%s, %v), got %+v", path, constraint, value, p)
	}
	if !strings.Contains(e.Message, path+":") || !strings.Contains(e.Message, "Nothing ran") {
		t.Errorf("the message does not name %s or say nothing ran: %q", path, e.Message)
	}
}

// generatedTools is the tool list the server generates (the one
// tools.golden.json pins), by name.
func generatedTools(t *testing.T) map[string]listedTool {
	t.Helper()
	raw, err := mcp.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	var tools []listedTool
	if err := json.Unmarshal(raw, &tools); err != nil {
		t.Fatal(err)
	}
	byName := map[string]listedTool{}
	for _, tl := range tools {
		byName[tl.Name] = tl
	}
	return byName
}

// checkListedTools checks get_artifact and create_artifact are listed as
// generated, field for field, and that what was generated is what their
// callers need: a ref string with its pattern, required; an input object
// requiring type, title and content.
func checkListedTools(t *testing.T, listed []listedTool, catalog map[string]listedTool) {
	t.Helper()
	byName := map[string]listedTool{}
	var names []string
	for _, tl := range listed {
		byName[tl.Name] = tl
		names = append(names, tl.Name)
	}
	for _, name := range []string{"get_artifact", "create_artifact"} {
		got, ok := byName[name]
		if !ok {
			t.Fatalf("no %s among the listed tools %v", name, names)
		}
		want := catalog[name]
		for _, f := range []struct {
			field     string
			got, want any
		}{
			{"description", got.Description, want.Description},
			{"inputSchema", got.InputSchema, want.InputSchema},
			{"outputSchema", got.OutputSchema, want.OutputSchema},
			{"annotations", got.Annotations, want.Annotations},
		} {
			if !reflect.DeepEqual(f.got, f.want) {
				gotJSON, _ := json.Marshal(f.got)
				wantJSON, _ := json.Marshal(f.want)
				t.Errorf("%s's %s as listed:\n%s\nas generated:\n%s", name, f.field, gotJSON, wantJSON)
			}
		}
	}
	ref := schemaProp(byName["get_artifact"].InputSchema, "ref")
	if ref["type"] != "string" || ref["pattern"] == nil || !schemaRequires(byName["get_artifact"].InputSchema, "ref") {
		t.Errorf("get_artifact's input schema: %v", byName["get_artifact"].InputSchema)
	}
	input := schemaProp(byName["create_artifact"].InputSchema, "input")
	if input["type"] != "object" || !schemaRequires(byName["create_artifact"].InputSchema, "input") ||
		!schemaRequires(input, "type") || !schemaRequires(input, "title") || !schemaRequires(input, "content") {
		t.Errorf("create_artifact's input schema: %v", byName["create_artifact"].InputSchema)
	}
	if byName["get_artifact"].Annotations["readOnlyHint"] != true || byName["create_artifact"].Annotations["readOnlyHint"] != false {
		t.Errorf("annotations: get_artifact %v, create_artifact %v", byName["get_artifact"].Annotations, byName["create_artifact"].Annotations)
	}
}

// schemaProp is a JSON Schema object's property.
func schemaProp(schema map[string]any, name string) map[string]any {
	props, _ := schema["properties"].(map[string]any)
	p, _ := props[name].(map[string]any)
	return p
}

// schemaRequires says whether a JSON Schema object requires the property.
func schemaRequires(schema map[string]any, name string) bool {
	req, _ := schema["required"].([]any)
	for _, r := range req {
		if r == name {
			return true
		}
	}
	return false
}

// equalAsJSON compares two values by their JSON.
func equalAsJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	var va, vb any
	_ = json.Unmarshal(ja, &va)
	_ = json.Unmarshal(jb, &vb)
	return reflect.DeepEqual(va, vb)
}
