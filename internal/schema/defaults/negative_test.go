package defaults_test

// Each check must be able to fail: break one thing in a valid document and the
// check guarding that rule must report it.

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/scidex/substrate/internal/schema/defaults"
)

// ptr returns a pointer to s, for lifecycle.initial.
func ptr(s string) *string { return &s }

// props returns the top-level properties of a document's content schema.
func props(d *document) map[string]any { return d.ContentSchema["properties"].(map[string]any) }

func TestChecksRejectBrokenDocuments(t *testing.T) {
	cases := []struct {
		name   string
		typ    string
		mutate func(d *document)
		check  func(d document) error
	}{
		{"file name differs from type", "paper", func(d *document) { d.Type = "article" },
			func(d document) error { return checkFileName("paper.json", d) }},
		{"content schema not an object", "paper", func(d *document) { d.ContentSchema["type"] = "array" }, checkContentSchema},
		{"content schema does not compile", "paper", func(d *document) { props(d)["year"] = map[string]any{"type": "integr"} }, checkContentSchema},
		{"content schema bad regex", "paper", func(d *document) { props(d)["pmid"].(map[string]any)["pattern"] = "([0-9]" }, checkContentSchema},
		{"example misses a required field", "paper", func(d *document) { delete(d.Examples[0].Content, "title") }, checkExamples},
		{"example has a malformed ref", "comment", func(d *document) { d.Examples[0].Content["target"] = "hypothesis" }, checkExamples},
		{"example has a bad date-time", "message", func(d *document) { d.Examples[0].Content["ack_at"] = "yesterday" }, checkExamples},
		{"example breaks an enum", "tool_call", func(d *document) { d.Examples[0].Content["status"] = "done" }, checkExamples},
		{"example id does not match id_pattern", "paper", func(d *document) { d.Examples[0].ID = "PMID 1" }, checkExamples},
		{"client example without id", "paper", func(d *document) { d.Examples[0].ID = "" }, checkExamples},
		{"no examples", "figure", func(d *document) { d.Examples = nil }, checkExamples},
		{"immutable type locks", "paper", func(d *document) { d.LockMode = "optimistic" }, checkModes},
		{"mutable type does not lock", "hypothesis", func(d *document) { d.LockMode = "none" }, checkModes},
		{"link to unknown type", "hypothesis", func(d *document) { d.Links["cites"] = link{Targets: []string{"book"}} },
			func(d document) error { return checkLinks(d, defaultTypes) }},
		{"star mixed with types", "hypothesis", func(d *document) { d.Links["derived_from"] = link{Targets: []string{"*", "paper"}} },
			func(d document) error { return checkLinks(d, defaultTypes) }},
		{"related_to missing", "paper", func(d *document) { delete(d.Links, "related_to") },
			func(d document) error { return checkLinks(d, defaultTypes) }},
		{"signal with wrong aggregation", "hypothesis", func(d *document) { s := d.Signals["fund"]; s.Aggregation = "replace"; d.Signals["fund"] = s }, checkSignals},
		{"signal of unknown kind", "hypothesis", func(d *document) { d.Signals["like"] = d.Signals["vote"] }, checkSignals},
		{"vote value outside range", "hypothesis", func(d *document) { s := d.Signals["vote"]; s.Values = []float64{-1, 2}; d.Signals["vote"] = s }, checkSignals},
		{"initial not declared", "hypothesis", func(d *document) { d.Lifecycle.Initial = ptr("draft") }, checkLifecycle},
		{"transition to undeclared state", "hypothesis", func(d *document) {
			d.Lifecycle.Transitions = append(d.Lifecycle.Transitions, transition{From: "proposed", To: "accepted", Roles: []string{"admin"}})
		}, checkLifecycle},
		{"transition from undeclared state", "knowledge_gap", func(d *document) { d.Lifecycle.Transitions[0].From = "closed" }, checkLifecycle},
		{"transition with unknown role", "hypothesis", func(d *document) { d.Lifecycle.Transitions[0].Roles = []string{"moderator"} }, checkLifecycle},
		{"transition admin may not make", "skill", func(d *document) { d.Lifecycle.Transitions[0].Roles = []string{"owner"} }, checkLifecycle},
		{"unreachable state", "tool", func(d *document) { d.Lifecycle.States = append(d.Lifecycle.States, "retired") }, checkLifecycle},
		{"initial without states", "message", func(d *document) { d.Lifecycle.Initial = ptr("pending") }, checkLifecycle},
		{"unknown validator", "hypothesis", func(d *document) { d.Validators = append(d.Validators, "check_spelling") }, checkValidators},
		{"lifecycle without its validators", "wiki_page", func(d *document) { d.Validators = []string{"resolve_pmid_citations"} }, checkValidators},
		{"evidence links without evidence_supports_claim", "kg_edge", func(d *document) { d.Validators = []string{"link_targets_exist"} }, checkValidators},
		{"superseded_only without no_self_supersede", "figure", func(d *document) { d.Validators = []string{"link_targets_exist"} }, checkValidators},
		{"refs without link_targets_exist", "comment", func(d *document) { d.Validators = nil }, checkValidators},
		{"property not snake_case", "hypothesis", func(d *document) { props(d)["diseaseName"] = map[string]any{"type": "string", "description": "x"} }, checkProperties},
		{"property without description", "paper", func(d *document) { delete(props(d)["journal"].(map[string]any), "description") }, checkProperties},
		{"nested property without description", "hypothesis", func(d *document) {
			ev := d.ContentSchema["$defs"].(map[string]any)["evidence"].(map[string]any)
			delete(ev["properties"].(map[string]any)["claim"].(map[string]any), "description")
		}, checkProperties},
		{"merge pointer to nothing", "hypothesis", func(d *document) { d.Merge.TextFields = append(d.Merge.TextFields, "/rationale") }, checkMerge},
		{"merge text field not a string", "hypothesis", func(d *document) { d.Merge.TextFields = append(d.Merge.TextFields, "/evidence_for") }, checkMerge},
		{"merge array not an array", "hypothesis", func(d *document) { d.Merge.AppendOnlyArrays = append(d.Merge.AppendOnlyArrays, "/mechanism") }, checkMerge},
		{"graphql enum on a missing property", "message", func(d *document) {
			d.GraphQL.Fields["state"] = d.GraphQL.Fields["ack_status"]
		}, checkGraphQL},
		{"graphql enum on a non-enum property", "message", func(d *document) {
			d.GraphQL.Fields["body"] = d.GraphQL.Fields["ack_status"]
		}, checkGraphQL},
		{"graphql enum value not a GraphQL name", "tool_call", func(d *document) {
			props(d)["status"].(map[string]any)["enum"] = []any{"queued", "timed-out"}
		}, checkGraphQL},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := mustDoc(t, c.typ)
			if err := c.check(d); err != nil {
				t.Fatalf("check fails before the mutation: %v", err)
			}
			c.mutate(&d)
			if err := c.check(d); err == nil {
				t.Fatal("check passed a broken document")
			} else {
				t.Log(err)
			}
		})
	}
}

func TestCheckTypeSetRejects(t *testing.T) {
	if checkTypeSet(defaultTypes[1:]) == nil {
		t.Error("a missing type passed")
	}
	if checkTypeSet(append([]string{"spreadsheet"}, defaultTypes...)) == nil {
		t.Error("an extra type passed")
	}
}

func TestCheckEnumsAgreeRejects(t *testing.T) {
	a, b := mustDoc(t, "tool_call"), mustDoc(t, "agent_work_packet")
	b.GraphQL.Fields["status"] = a.GraphQL.Fields["status"] // same enum name, other values
	if checkEnumsAgree([]document{a, b}) == nil {
		t.Error("one enum name with two value sets passed")
	}
}

func TestMetaSchemaRejectsBrokenDocuments(t *testing.T) {
	meta := metaSchema(t)
	cases := []struct {
		name   string
		mutate func(m map[string]any)
	}{
		{"missing required key", func(m map[string]any) { delete(m, "lifecycle") }},
		{"unknown key", func(m map[string]any) { m["mutabilty"] = "immutable" }},
		{"bad mutability", func(m map[string]any) { m["mutability"] = "sometimes" }},
		{"bad lock_mode", func(m map[string]any) { m["lock_mode"] = "pessimistic" }},
		{"bad id_strategy", func(m map[string]any) { m["id_strategy"] = "serial" }},
		{"bad type name", func(m map[string]any) { m["type"] = "Hypothesis" }},
		{"schema_version 0", func(m map[string]any) { m["schema_version"] = 0 }},
		{"id_pattern not a regex", func(m map[string]any) { m["id_pattern"] = "([a-z]" }},
		{"content_schema not an object schema", func(m map[string]any) { m["content_schema"].(map[string]any)["type"] = "array" }},
		{"content_schema not a JSON Schema", func(m map[string]any) { m["content_schema"].(map[string]any)["required"] = "title" }},
		{"bad aggregation", func(m map[string]any) {
			m["signals"].(map[string]any)["vote"].(map[string]any)["aggregation"] = "mean"
		}},
		{"value_range of one number", func(m map[string]any) {
			m["signals"].(map[string]any)["vote"].(map[string]any)["value_range"] = []any{-1}
		}},
		{"link without targets", func(m map[string]any) {
			delete(m["links"].(map[string]any)["cites"].(map[string]any), "targets")
		}},
		{"unknown role", func(m map[string]any) {
			tr := m["lifecycle"].(map[string]any)["transitions"].([]any)[0].(map[string]any)
			tr["roles"] = []any{"moderator"}
		}},
		{"initial set without states", func(m map[string]any) {
			m["lifecycle"] = map[string]any{"initial": "open", "states": []any{}, "transitions": []any{}}
		}},
		{"merge pointer without slash", func(m map[string]any) {
			m["merge"].(map[string]any)["text_fields"] = []any{"description"}
		}},
		{"graphql enum name not a type name", func(m map[string]any) {
			m["graphql"] = map[string]any{"fields": map[string]any{"disease": map[string]any{"enum": "disease_kind"}}}
		}},
		{"no examples", func(m map[string]any) { m["examples"] = []any{} }},
		{"example without content", func(m map[string]any) {
			delete(m["examples"].([]any)[0].(map[string]any), "content")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := rawDocument(t, "hypothesis")
			if err := meta.Validate(m); err != nil {
				t.Fatalf("meta-schema refuses the document before the mutation: %v", explain(err))
			}
			c.mutate(m)
			v := roundTrip(t, m)
			if err := meta.Validate(v); err == nil {
				t.Fatal("meta-schema passed a broken document")
			}
		})
	}
}

// rawDocument decodes a default document as the jsonschema package represents JSON.
func rawDocument(t *testing.T, typ string) map[string]any {
	t.Helper()
	data, err := fs.ReadFile(defaults.FS, typ+".json")
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return v.(map[string]any)
}

// roundTrip re-encodes a mutated document so Go numbers become json.Number again.
func roundTrip(t *testing.T, m map[string]any) any {
	t.Helper()
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return v
}
