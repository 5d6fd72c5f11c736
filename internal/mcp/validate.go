package mcp

import (
	"encoding/json"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/schema"
)

// validatorSchema is a tool's compiled input schema. The SDK's raw tool
// handlers validate nothing, so every call's arguments are checked here,
// against the very schema the tool list shows, before anything runs.
type validatorSchema struct {
	compiled *jsonschema.Schema
}

func compileInput(tool string, in map[string]any) (*validatorSchema, error) {
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("tool %s: input schema: %w", tool, err)
	}
	c, err := schema.CompileJSONSchema(raw)
	if err != nil {
		return nil, fmt.Errorf("tool %s: input schema: %w", tool, err)
	}
	return &validatorSchema{compiled: c}, nil
}

// check returns one problem per rule the arguments break, each naming its
// path (`input.ref`, `input.content`); none when they are valid. Absent
// arguments are an empty object.
func (v *validatorSchema) check(args json.RawMessage) []problem.Detail {
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	return schema.ValidateJSON(v.compiled, "", args)
}
