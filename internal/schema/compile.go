package schema

import (
	"bytes"
	"fmt"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/scidex/substrate/internal/ref"
)

// refFormat is the JSON Schema format "ref": an artifact reference, pinned or not.
var refFormat = &jsonschema.Format{
	Name: "ref",
	Validate: func(v any) error {
		s, ok := v.(string)
		if !ok {
			return nil // format only constrains strings
		}
		_, err := ref.Parse(s)
		return err
	},
}

// noLoader refuses every $ref to an outside resource. Schemas come from users and
// tools; letting them name file:// or http:// URLs would let a schema read the
// server's files or reach its network.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("$ref to %q: schemas may only reference themselves", url)
}

var compileSeq atomic.Int64

// CompileJSONSchema compiles a JSON Schema 2020-12 document with format assertions
// on, the "ref" format registered and no outside references allowed.
func CompileJSONSchema(raw []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.RegisterFormat(refFormat)
	c.UseLoader(noLoader{})
	loc := fmt.Sprintf("mem:///schema-%d.json", compileSeq.Add(1))
	if err := c.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("add schema: %w", err)
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("compile schema: %w", err)
	}
	return s, nil
}
