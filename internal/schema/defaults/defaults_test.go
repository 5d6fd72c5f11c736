package defaults_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/scidex/substrate/internal/schema/defaults"
)

// mustLoad returns every embedded document, keyed by file name.
func mustLoad(t *testing.T) map[string]document {
	t.Helper()
	docs, err := loadDocuments()
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// mustDoc returns a fresh copy of one default type's document, safe to mutate.
func mustDoc(t *testing.T, typ string) document {
	t.Helper()
	data, err := fs.ReadFile(defaults.FS, typ+".json")
	if err != nil {
		t.Fatal(err)
	}
	d, err := parseDocument(data)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// metaSchema compiles the content schema of schema.json: the schema of schema documents.
func metaSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	sch, err := compileSchema("schema", mustDoc(t, "schema").ContentSchema)
	if err != nil {
		t.Fatalf("meta-schema: %v", err)
	}
	return sch
}

func TestTypeSet(t *testing.T) {
	docs := mustLoad(t)
	var types []string
	for file, d := range docs {
		if err := checkFileName(file, d); err != nil {
			t.Error(err)
		}
		types = append(types, d.Type)
	}
	if err := checkTypeSet(types); err != nil {
		t.Error(err)
	}
}

func TestDocuments(t *testing.T) {
	for _, d := range mustLoad(t) {
		t.Run(d.Type, func(t *testing.T) {
			if err := checkDocument(d, defaultTypes); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestDocumentsMatchMetaSchema(t *testing.T) {
	meta := metaSchema(t)
	names, err := fs.Glob(defaults.FS, "*.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		data, err := fs.ReadFile(defaults.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := meta.Validate(v); err != nil {
			t.Errorf("%s: %v", name, explain(err))
		}
	}
}

// The examples of the schema type are documents of new types; they must pass
// the same checks as the defaults, with their own type as a link target too.
func TestSchemaExamplesPassDocumentChecks(t *testing.T) {
	for _, ex := range mustDoc(t, "schema").Examples {
		data, err := json.Marshal(ex.Content)
		if err != nil {
			t.Fatal(err)
		}
		d, err := parseDocument(data)
		if err != nil {
			t.Fatalf("%s: %v", ex.Title, err)
		}
		if ex.ID != d.Type {
			t.Errorf("%s: id %q is not the type name %q", ex.Title, ex.ID, d.Type)
		}
		if err := checkDocument(d, append(slices.Clone(defaultTypes), d.Type)); err != nil {
			t.Errorf("%s: %v", ex.Title, err)
		}
	}
}

func TestGraphQLEnumsAgree(t *testing.T) {
	if err := checkEnumsAgree(slices.Collect(maps.Values(mustLoad(t)))); err != nil {
		t.Error(err)
	}
}

// The GraphQL contract clients rely on names some typed fields and enums; the documents must produce them.
func TestContractNames(t *testing.T) {
	fields := map[string][]string{
		"hypothesis": {"target_gene", "mechanism"},
		"tool":       {"name", "version", "runtime", "input_schema", "output_schema"},
		"tool_call":  {"status", "result", "error"},
		"message":    {"recipient", "subject", "body", "priority", "ack_status", "in_reply_to"},
		"comment":    {"target", "body", "thread_parent", "kind"},
	}
	for typ, want := range fields {
		props := mustDoc(t, typ).ContentSchema["properties"].(map[string]any)
		for _, f := range want {
			if _, ok := props[f]; !ok {
				t.Errorf("%s: no content property %q", typ, f)
			}
		}
	}
	enums := []struct {
		typ, field, enum string
		values           []string
	}{
		{"message", "ack_status", "AckStatus", []string{"pending", "read", "completed", "rejected"}},
		{"tool_call", "status", "ToolCallStatus", []string{"queued", "running", "succeeded", "failed", "cancelled"}},
	}
	for _, e := range enums {
		d := mustDoc(t, e.typ)
		if d.GraphQL == nil || d.GraphQL.Fields[e.field].Enum != e.enum {
			t.Errorf("%s.%s: not exposed as GraphQL enum %s", e.typ, e.field, e.enum)
			continue
		}
		got, err := enumValues(d.ContentSchema["properties"].(map[string]any), e.field)
		if err != nil || !slices.Equal(got, e.values) {
			t.Errorf("%s.%s: values %v (%v), want %v", e.typ, e.field, got, err, e.values)
		}
	}
}

func TestRefFormat(t *testing.T) {
	hash := "@sha256:" + strings.Repeat("ab", 32)
	for _, s := range []string{"hypothesis:0193a7c2-5b1e-7cc1-9f00-0a1b2c3d4e5f", "paper:PMID:23150934", "schema:hypothesis" + hash} {
		if err := validateRef(s); err != nil {
			t.Errorf("%q refused: %v", s, err)
		}
	}
	for _, s := range []string{"", "hypothesis", "Hypothesis:x", "hypothesis:", "hypothesis:a b", "hypothesis:x@sha256:12", "hypothesis:x@y", ":x"} {
		if validateRef(s) == nil {
			t.Errorf("%q accepted", s)
		}
	}
}

// The tool example's own examples must satisfy its input_schema, and the
// tool_call example (a run of that tool) its input and output schemas, as the
// dispatcher checks them.
func TestToolExamplesAgree(t *testing.T) {
	tool := mustDoc(t, "tool").Examples[0].Content
	call := mustDoc(t, "tool_call").Examples[0].Content
	validate := func(what string, schema, v any) {
		t.Helper()
		sch, err := compileSchema(strings.ReplaceAll(what, " ", "_"), schema)
		if err == nil {
			var jv any
			if jv, err = jsonValue(v); err == nil {
				err = explain(sch.Validate(jv))
			}
		}
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	for _, ex := range tool["examples"].([]any) {
		validate("tool example args", tool["input_schema"], ex.(map[string]any)["args"])
	}
	if call["tool_name"] != tool["name"] || call["tool_version"] != tool["version"] {
		t.Fatalf("tool_call example runs %v %v, tool example is %v %v", call["tool_name"], call["tool_version"], tool["name"], tool["version"])
	}
	validate("tool_call example args", tool["input_schema"], call["args"])
	validate("tool_call example result", tool["output_schema"], call["result"])
}
