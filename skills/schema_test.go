package skills

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/schema"
	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/skills/units"
)

// toolOf is a skill's tool manifest, decoded.
type toolOf struct {
	Version      string          `json:"version"`
	InputSchema  json.RawMessage `json:"input_schema"`
	OutputSchema json.RawMessage `json:"output_schema"`
	Examples     []struct {
		Args json.RawMessage `json:"args"`
	} `json:"examples"`
}

func manifest(t *testing.T, s Skill) toolOf {
	t.Helper()
	var m toolOf
	if err := json.Unmarshal(s.Tool, &m); err != nil {
		t.Fatalf("%s: decode the tool manifest: %v", s.Name, err)
	}
	return m
}

// compile compiles a schema as the dispatcher does (santhosh-tekuri/jsonschema
// v6, 2020-12, formats asserted, no remote loading).
func compile(t *testing.T, name string, raw json.RawMessage) *jsonschema.Schema {
	t.Helper()
	s, err := schema.CompileJSONSchema(raw)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

func validate(s *jsonschema.Schema, v any) []problem.Detail {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return schema.ValidateJSON(s, "args", b)
}

func details(ds []problem.Detail) string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Path+" "+d.Constraint+": "+d.Message)
	}
	return strings.Join(out, "; ")
}

// exampleArgs is the example of the skill's input schema, which must be the
// tool manifest's and the skill document's example too.
func exampleArgs(t *testing.T, s Skill) map[string]any {
	t.Helper()
	var in struct {
		Examples []map[string]any `json:"examples"`
	}
	m := manifest(t, s)
	_ = json.Unmarshal(m.InputSchema, &in)
	if len(in.Examples) != 1 {
		t.Fatalf("%s: the input schema has %d examples, want the skill's one", s.Name, len(in.Examples))
	}
	var doc struct {
		Example struct {
			Inputs map[string]any `json:"inputs"`
		} `json:"example"`
	}
	_ = json.Unmarshal(s.Doc, &doc)
	var tool map[string]any
	if len(m.Examples) == 1 {
		_ = json.Unmarshal(m.Examples[0].Args, &tool)
	}
	if !reflect.DeepEqual(in.Examples[0], doc.Example.Inputs) || !reflect.DeepEqual(in.Examples[0], tool) {
		t.Fatalf("%s: the input schema's example is not the skill's example", s.Name)
	}
	return in.Examples[0]
}

// Every skill's input schema compiles, is an object listing its arguments
// under properties, and its example validates against it and passes the
// skill's Check.
func TestSkillInputSchemasAcceptTheirExamples(t *testing.T) {
	for _, s := range Catalog(Deps{}) {
		t.Run(s.Name, func(t *testing.T) {
			m := manifest(t, s)
			in := compile(t, "input_schema", m.InputSchema)
			compile(t, "output_schema", m.OutputSchema)
			var top struct {
				Type       string         `json:"type"`
				Properties map[string]any `json:"properties"`
			}
			_ = json.Unmarshal(m.InputSchema, &top)
			if top.Type != "object" || len(top.Properties) == 0 {
				t.Fatalf("the input schema is not an object listing its properties: %s", m.InputSchema)
			}
			ex := exampleArgs(t, s)
			if ds := validate(in, ex); len(ds) > 0 {
				t.Fatalf("the example breaks the input schema: %s", details(ds))
			}
			raw, _ := json.Marshal(ex)
			if ps := s.Check(raw); len(ps) > 0 {
				t.Fatalf("the example fails the skill's check: %s", problemsString(ps))
			}
		})
	}
}

// Every property at every level of every input schema has a description,
// every required name is a property, and every quantity's unit is an enum.
func TestSkillInputSchemasDescribeEveryArgument(t *testing.T) {
	for _, s := range Catalog(Deps{}) {
		t.Run(s.Name, func(t *testing.T) {
			raw := manifest(t, s).InputSchema
			var root map[string]any
			_ = json.Unmarshal(raw, &root)
			n, gaps := describe(root)
			if len(gaps) > 0 {
				t.Fatalf("%d properties, these undescribed:\n%s", n, strings.Join(gaps, "\n"))
			}
			t.Logf("%d properties described; input %d bytes, output %d bytes", n, len(raw), len(manifest(t, s).OutputSchema))
		})
	}
	// The check itself finds a missing description and a free-text unit.
	var nca map[string]any
	_ = json.Unmarshal(manifest(t, nca0()).InputSchema, &nca)
	props := nca["properties"].(map[string]any)
	delete(props["route"].(map[string]any), "description")
	delete(props["dose"].(map[string]any)["properties"].(map[string]any)["unit"].(map[string]any), "enum")
	_, gaps := describe(nca)
	if g := strings.Join(gaps, "\n"); !strings.Contains(g, ".route: no description") || !strings.Contains(g, ".dose.unit: a quantity's unit without an enum") {
		t.Fatalf("a broken schema: want the route's description and the dose's unit enum missing, got %q", gaps)
	}
}

func nca0() Skill { return nca(Deps{}) }

// describe walks a schema and returns how many properties it declares and
// the gaps: a property without a description (on it or on what it refers
// to), a required name that is not a property, a quantity ({value|values,
// unit}) whose unit has no enum.
func describe(root map[string]any) (int, []string) {
	n := 0
	var gaps []string
	var walk func(path string, node any)
	walk = func(path string, node any) {
		m, ok := node.(map[string]any)
		if !ok {
			return
		}
		props, _ := m["properties"].(map[string]any)
		for _, k := range sortedKeys(props) {
			if _, ok := props[k].(bool); ok {
				continue // a branch naming (true) or excluding (false) a field
			}
			if r, _ := props[k].(map[string]any)["$ref"].(string); !strings.HasPrefix(r, "#/properties/") {
				n++ // an argument described here, not a reference to one
			}
			p := resolve(root, props[k])
			if d, _ := p["description"].(string); d == "" {
				if d, _ = props[k].(map[string]any)["description"].(string); d == "" {
					gaps = append(gaps, path+"."+k+": no description")
				}
			}
			walk(path+"."+k, props[k])
		}
		if req, ok := m["required"].([]any); ok && props != nil {
			for _, r := range req {
				if _, ok := props[r.(string)]; !ok {
					gaps = append(gaps, fmt.Sprintf("%s: required %q is not a property", path, r))
				}
			}
		}
		if props != nil && props["unit"] != nil && (props["value"] != nil || props["values"] != nil) {
			if e, _ := resolve(root, props["unit"])["enum"].([]any); len(e) == 0 {
				gaps = append(gaps, path+".unit: a quantity's unit without an enum")
			}
		}
		for _, k := range []string{"items", "not", "additionalProperties"} {
			walk(path+"."+k, m[k])
		}
		deps, _ := m["dependentSchemas"].(map[string]any)
		for _, k := range sortedKeys(deps) {
			walk(path+".dependentSchemas."+k, deps[k])
		}
		for _, k := range []string{"oneOf", "anyOf", "allOf"} {
			l, _ := m[k].([]any)
			for i, b := range l {
				walk(path+"."+k+"["+strconv.Itoa(i)+"]", b)
			}
		}
		defs, _ := m["$defs"].(map[string]any)
		for _, k := range sortedKeys(defs) {
			walk(path+".$defs."+k, defs[k])
		}
	}
	walk("", root)
	return n, gaps
}

// resolve follows a local $ref ("#/a/b") to the node it names.
func resolve(root map[string]any, node any) map[string]any {
	m, _ := node.(map[string]any)
	for i := 0; i < 8 && m != nil; i++ {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		var at any = root
		for _, tok := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			at, _ = at.(map[string]any)[tok]
		}
		m, _ = at.(map[string]any)
	}
	return m
}

// run runs a skill's function on args, as the in_process runtime would
// after the check.
func run(t *testing.T, s Skill, args any) json.RawMessage {
	t.Helper()
	raw, _ := json.Marshal(args)
	if ps := s.Check(raw); len(ps) > 0 {
		t.Fatalf("%s: the check refuses %s: %s", s.Name, raw, problemsString(ps))
	}
	out, err := s.Run(context.Background(), raw, func(runtimes.Progress) {})
	if err != nil {
		t.Fatalf("%s: %v", s.Name, err)
	}
	return out
}

// outputMatches fails t unless out validates against the skill's output
// schema and every field of out the schema could list is listed.
func outputMatches(t *testing.T, s Skill, out json.RawMessage) {
	t.Helper()
	raw := manifest(t, s).OutputSchema
	sch := compile(t, "output_schema", raw)
	if ds := schema.ValidateJSON(sch, "result", out); len(ds) > 0 {
		t.Fatalf("%s: the result breaks the output schema: %s\n%s", s.Name, details(ds), out)
	}
	var root, inst map[string]any
	_ = json.Unmarshal(raw, &root)
	_ = json.Unmarshal(out, &inst)
	if gaps := undescribed(root, root, inst, "result"); len(gaps) > 0 {
		t.Fatalf("%s: result fields the output schema does not describe: %s", s.Name, strings.Join(gaps, ", "))
	}
}

// undescribed lists the fields of inst under a schema node with properties
// that it does not list (a map, with additionalProperties, lists none).
func undescribed(root, node map[string]any, inst any, path string) []string {
	node = resolve(root, node)
	if node == nil {
		return nil
	}
	var gaps []string
	switch v := inst.(type) {
	case map[string]any:
		props, _ := node["properties"].(map[string]any)
		if props == nil {
			return nil
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p, ok := props[k].(map[string]any)
			if !ok {
				gaps = append(gaps, path+"."+k)
				continue
			}
			gaps = append(gaps, undescribed(root, p, v[k], path+"."+k)...)
		}
	case []any:
		items, _ := node["items"].(map[string]any)
		for i, e := range v {
			gaps = append(gaps, undescribed(root, items, e, path+"["+strconv.Itoa(i)+"]")...)
		}
	}
	return gaps
}

// Every skill's result on its example validates against its output schema,
// and the schema describes every field the result has.
func TestSkillResultsMatchTheirOutputSchemas(t *testing.T) {
	for _, s := range Catalog(Deps{Sandbox: testSandbox(t)}) {
		t.Run(s.Name, func(t *testing.T) {
			var root map[string]any
			_ = json.Unmarshal(manifest(t, s).OutputSchema, &root)
			props, _ := root["properties"].(map[string]any)
			for _, k := range sortedKeys(props) {
				p := props[k].(map[string]any)
				if d, _ := p["description"].(string); d == "" || p["type"] == nil && p["$ref"] == nil {
					t.Errorf("the result's %s has no type or no description", k)
				}
			}
			outputMatches(t, s, run(t, s, exampleArgs(t, s)))
		})
	}
}

// The other shapes of each result: pk.nca on several profiles, with and
// without figures, and on a profile whose lambda_z is not estimable;
// tox.fih on a species outside Table 1; data.check_conformance on a table
// without a header.
func TestSkillResultsMatchTheirOutputSchemasInEveryShape(t *testing.T) {
	nc := nca(Deps{})
	b, err := os.ReadFile("refdata/theoph.csv")
	if err != nil {
		t.Fatal(err)
	}
	type profile struct{ times, conc []float64 }
	by := map[string]*profile{}
	var order []string
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Split(line, ",")
		if i == 0 {
			continue
		}
		if by[f[0]] == nil {
			by[f[0]] = &profile{}
			order = append(order, f[0])
		}
		tm, _ := strconv.ParseFloat(f[3], 64)
		c, _ := strconv.ParseFloat(f[4], 64)
		by[f[0]].times, by[f[0]].conc = append(by[f[0]].times, tm), append(by[f[0]].conc, c)
	}
	var profiles []any
	for _, s := range order {
		profiles = append(profiles, map[string]any{"subject": s, "route": "oral", "dose": map[string]any{"value": 320, "unit": "mg"},
			"times": map[string]any{"values": by[s].times, "unit": "h"}, "concentrations": map[string]any{"values": by[s].conc, "unit": "mg/L"}})
	}
	many := run(t, nc, map[string]any{"auc_method": "linear", "profiles": profiles, "lambda_z_points": 3})
	outputMatches(t, nc, many)
	// With the figures a store would record (their refs and URLs).
	var withFigures map[string]any
	_ = json.Unmarshal(many, &withFigures)
	for i, p := range withFigures["profiles"].([]any) {
		ref := "figure:" + strconv.Itoa(i)
		p.(map[string]any)["figure"], p.(map[string]any)["figure_url"] = ref, "/artifacts/"+ref+"/figure.svg"
		withFigures["figures"] = append(withFigures["figures"].([]any), ref)
	}
	b, _ = json.Marshal(withFigures)
	outputMatches(t, nc, b)
	// Rising to the end: no terminal phase, so lambda_z and what needs it are null.
	flat := run(t, nc, map[string]any{"auc_method": "linear_up_log_down", "route": "iv_bolus", "lloq": map[string]any{"value": 0.5, "unit": "ug/mL"},
		"blq_rule": "zero", "times": map[string]any{"values": []any{0, 1, 2, 3}, "unit": "h"},
		"concentrations": map[string]any{"values": []any{0.1, 1, 2, 3}, "unit": "mg/l"}, "dose": map[string]any{"value": 5, "unit": "mg"}})
	if !strings.Contains(string(flat), `"terminal":null`) {
		t.Fatalf("expected a profile without a terminal fit: %s", flat)
	}
	outputMatches(t, nc, flat)

	fh := fih()
	outputMatches(t, fh, run(t, fh, map[string]any{"route": "body_weight", "safety_factor": 5, "safety_factor_reason": "a well-characterised class",
		"human_weight": map[string]any{"value": 70, "unit": "kg"},
		"studies":      []any{map[string]any{"species": "other", "noael": map[string]any{"value": 20, "unit": "mg/kg"}, "body_weight": map[string]any{"value": 3000, "unit": "g"}}}}))

	cf := conformance(Deps{})
	spec := map[string]any{"columns": []any{map[string]any{"name": "x", "type": "number"}}}
	outputMatches(t, cf, run(t, cf, map[string]any{"csv": "\n", "spec": spec}))
	outputMatches(t, cf, run(t, cf, map[string]any{"csv": "x\n1\n", "spec": spec}))
}

// shape is one wrong argument and where the schema refuses it.
type shape struct {
	skill, why string
	change     func(map[string]any)
	path       string // the refusal's path under args
	constraint string
	only       bool // the one problem reported
}

// set puts v at a dotted path of m ("studies.0.noael.unit"); v nil deletes.
func set(m map[string]any, path string, v any) {
	toks := strings.Split(path, ".")
	var at any = m
	for _, tok := range toks[:len(toks)-1] {
		if i, err := strconv.Atoi(tok); err == nil {
			at = at.([]any)[i]
		} else {
			at = at.(map[string]any)[tok]
		}
	}
	last := toks[len(toks)-1]
	if v == nil {
		delete(at.(map[string]any), last)
	} else {
		at.(map[string]any)[last] = v
	}
}

func setting(path string, v any) func(map[string]any) {
	return func(m map[string]any) { set(m, path, v) }
}

// Wrong shapes are refused by the input schema, at the argument's path: a
// unit outside the dimension, a missing argument, an unknown field. The
// skill's check refuses each too, so the schema refuses nothing it accepts.
func TestSkillInputSchemasRefuseWrongShapes(t *testing.T) {
	cases := []shape{
		{"pk.nca", "a time unit for a concentration", setting("concentrations.unit", "h"), "args.concentrations.unit", "enum", false},
		{"pk.nca", "a unit written in capitals", setting("dose.unit", "MG"), "args.dose.unit", "enum", false},
		{"pk.nca", "a mass for a concentration", setting("concentrations.unit", "mg"), "args.concentrations.unit", "enum", false},
		{"pk.nca", "no auc_method", setting("auc_method", nil), "args.auc_method", "required", false},
		{"pk.nca", "no dose", setting("dose", nil), "args.dose", "required", false},
		{"pk.nca", "an unknown field", setting("weight", 70), "args.weight", "additionalProperties", false},
		{"pk.nca", "an unknown field in a quantity", setting("dose.units", "mg"), "args.dose.units", "additionalProperties", false},
		{"pk.nca", "a bare number for a dose", setting("dose", 320), "args.dose", "type", true},
		{"pk.nca", "a bare array for concentrations", setting("concentrations", []any{1, 2, 3}), "args.concentrations", "type", true},
		{"pk.nca", "a bare dose in one of profiles", func(m map[string]any) {
			p := map[string]any{}
			for _, k := range ncaProfileFields {
				if m[k] != nil {
					p[k] = m[k]
					delete(m, k)
				}
			}
			q := map[string]any{}
			for k, v := range p {
				q[k] = v
			}
			q["subject"], q["dose"] = "2", 320
			m["profiles"] = []any{p, q}
		}, "args.profiles[1].dose", "type", true},
		{"pk.nca", "no dose and no profiles", setting("dose", nil), "args.profiles", "required", false},
		{"pk.nca", "an infusion without its duration", setting("route", "iv_infusion"), "args.duration", "required", false},
		{"pk.nca", "an unknown auc method", setting("auc_method", "log"), "args.auc_method", "enum", false},
		{"pk.nca", "lambda_z_points below 3", setting("lambda_z_points", 2), "args.lambda_z_points", "minimum", false},
		{"pk.nca", "a negative dose", setting("dose.value", -1), "args.dose.value", "exclusiveMinimum", false},
		{"pk.nca", "profiles beside a profile's fields", setting("profiles", []any{map[string]any{}}), "args.times", "schema", false},
		{"pk.nca", "an unknown field in a profile", func(m map[string]any) {
			p := map[string]any{"weight": 1}
			for _, k := range ncaProfileFields {
				if m[k] != nil {
					p[k] = m[k]
					delete(m, k)
				}
			}
			m["profiles"] = []any{p}
		}, "args.profiles[0].weight", "additionalProperties", false},
		{"tox.fih_dose_projection", "a dose, not a dose per body mass", setting("studies.0.noael.unit", "mg"), "args.studies[0].noael.unit", "enum", false},
		{"tox.fih_dose_projection", "no route", setting("route", nil), "args.route", "required", false},
		{"tox.fih_dose_projection", "an unknown species", setting("studies.0.species", "unicorn"), "args.studies[0].species", "enum", false},
		{"tox.fih_dose_projection", "an unknown field in a study", setting("studies.0.sex", "f"), "args.studies[0].sex", "additionalProperties", false},
		{"tox.fih_dose_projection", "a safety factor below 1", setting("safety_factor", 0.5), "args.safety_factor", "minimum", false},
		{"tox.fih_dose_projection", "a human weight in mg/kg", setting("human_weight", map[string]any{"value": 60, "unit": "mg/kg"}), "args.human_weight.unit", "enum", false},
		{"qa.check_readiness", "no as_of", setting("as_of", nil), "args.as_of", "required", false},
		{"qa.check_readiness", "a date in another form", setting("as_of", "01/12/2026"), "args.as_of", "pattern", false},
		{"qa.check_readiness", "a calibration interval in hours", setting("equipment.0.calibration_interval", map[string]any{"value": 1, "unit": "h"}), "args.equipment[0].calibration_interval.unit", "enum", false},
		{"qa.check_readiness", "an unknown field in a role", setting("roles.0.deputy", "B. Ode"), "args.roles[0].deputy", "additionalProperties", false},
		{"qa.check_readiness", "an unknown field", setting("owner", "QA"), "args.owner", "additionalProperties", false},
		{"data.check_conformance", "no spec", setting("spec", nil), "args.spec", "required", false},
		{"data.check_conformance", "an unknown column type", setting("spec.columns.0.type", "decimal"), "args.spec.columns[0].type", "enum", false},
		{"data.check_conformance", "an unknown field in a column", setting("spec.columns.0.format", "%d"), "args.spec.columns[0].format", "additionalProperties", false},
		{"data.check_conformance", "max_violations above the cap", setting("max_violations", 1001), "args.max_violations", "maximum", false},
		{"data.check_conformance", "no table", setting("csv", nil), "args.csv", "required", false},
		{"data.check_conformance", "a dataset and csv", setting("dataset", "dataset:d1"), "args.dataset", "schema", false},
		{"data.check_conformance", "a file without a dataset", setting("file", "t.csv"), "args.dataset", "required", false},
		{"data.check_conformance", "a file beside csv", setting("file", "t.csv"), "args.file", "schema", false},
	}
	skills := map[string]Skill{}
	for _, s := range Catalog(Deps{}) {
		skills[s.Name] = s
	}
	for _, c := range cases {
		t.Run(c.skill+"/"+c.why, func(t *testing.T) {
			s := skills[c.skill]
			args := exampleArgs(t, s)
			c.change(args)
			ds := validate(compile(t, "input_schema", manifest(t, s).InputSchema), args)
			found := false
			for _, d := range ds {
				found = found || d.Path == c.path && d.Constraint == c.constraint
			}
			if !found || c.only && len(ds) != 1 {
				t.Errorf("want %s refused at %s (%s), got %q", c.why, c.path, c.constraint, details(ds))
			}
			raw, _ := json.Marshal(args)
			if ps := s.Check(raw); len(ps) == 0 {
				t.Errorf("the schema refuses %s, which the check accepts", raw)
			}
		})
	}
}

// Arguments the checks accept are accepted by the schemas: other spellings
// of a unit, every route pk.nca analyses, the optional fields, the other
// source of a table.
func TestSkillInputSchemasAcceptWhatTheChecksAccept(t *testing.T) {
	skills := map[string]Skill{}
	for _, s := range Catalog(Deps{}) {
		skills[s.Name] = s
	}
	type variant struct {
		skill, why string
		change     func(map[string]any)
	}
	cases := []variant{
		{"pk.nca", "lower-case litres and micrograms", func(m map[string]any) {
			set(m, "concentrations.unit", "ug/ml")
			set(m, "dose", map[string]any{"value": 320000, "unit": "ug"})
		}},
		{"pk.nca", "times in minutes", func(m map[string]any) {
			set(m, "times", map[string]any{"values": []any{0, 15, 34.2, 67.2, 121.2, 229.2, 306, 421.8, 543, 727.2, 1462.2}, "unit": "min"})
		}},
		{"pk.nca", "an lloq with its rule, fixed points, no figure", func(m map[string]any) {
			set(m, "lloq", map[string]any{"value": 0.1, "unit": "mg/L"})
			set(m, "blq_rule", "zero_before_tmax_missing_after")
			set(m, "lambda_z_points", 4)
			set(m, "figure", false)
		}},
		{"pk.nca", "profiles", func(m map[string]any) {
			p := map[string]any{}
			for _, k := range ncaProfileFields {
				if m[k] != nil {
					p[k] = m[k]
					delete(m, k)
				}
			}
			m["profiles"] = []any{p}
		}},
		{"tox.fih_dose_projection", "a species outside the table by body weight", func(m map[string]any) {
			set(m, "route", "body_weight")
			set(m, "studies", []any{map[string]any{"species": "other", "noael": map[string]any{"value": 5000, "unit": "ug/kg"}, "body_weight": map[string]any{"value": 2.5, "unit": "kg"}}})
			set(m, "human_weight", map[string]any{"value": 0, "unit": "kg"})
		}},
		{"tox.fih_dose_projection", "a NOAEL per body surface area", func(m map[string]any) {
			set(m, "studies.0.noael", map[string]any{"value": 300, "unit": "mg/m2"})
		}},
		{"tox.fih_dose_projection", "a protein over 100 kDa by infusion, by mg/kg", func(m map[string]any) {
			set(m, "route", "mg_per_kg")
			set(m, "test_article", map[string]any{"modality": "protein", "molecular_weight": map[string]any{"value": 150, "unit": "kg/mol"}, "administration": "iv_infusion"})
		}},
		{"tox.fih_dose_projection", "a small molecule", func(m map[string]any) {
			set(m, "test_article", map[string]any{"modality": "small_molecule", "molecular_weight": map[string]any{"value": 450, "unit": "g/mol"}, "administration": "oral"})
		}},
		{"tox.fih_dose_projection", "a forced species and a safety factor with its reason", func(m map[string]any) {
			set(m, "species", "dog")
			set(m, "safety_factor", 3)
			set(m, "safety_factor_reason", "a reason")
		}},
		{"qa.check_readiness", "only what is required, and empty optional dates", func(m map[string]any) {
			for k := range m {
				if k != "sop_id" && k != "version" && k != "as_of" {
					delete(m, k)
				}
			}
			set(m, "effective_date", "")
			set(m, "equipment", []any{map[string]any{"id": "EQ-1", "last_calibrated": "2026-01-31", "calibration_interval": map[string]any{"value": 1, "unit": "mo"}, "calibration_required": true}})
			set(m, "required_approval_roles", []any{"author"})
		}},
		{"data.check_conformance", "a dataset ref and a file", func(m map[string]any) {
			delete(m, "csv")
			set(m, "dataset", "dataset:pk-study-1")
			set(m, "file", "tables/conc.csv")
			set(m, "max_violations", 0)
			set(m, "spec.allow_extra_columns", true)
			set(m, "spec.columns.0.allowed", []any{"1", "2"})
			set(m, "spec.columns.1.max", "24")
		}},
	}
	for _, r := range units.Routes() {
		r := r
		cases = append(cases, variant{"pk.nca", "route " + r.Name, setting("route", r.Name)})
	}
	for _, c := range cases {
		t.Run(c.skill+"/"+c.why, func(t *testing.T) {
			s := skills[c.skill]
			args := exampleArgs(t, s)
			c.change(args)
			raw, _ := json.Marshal(args)
			ps := s.Check(raw)
			ds := validate(compile(t, "input_schema", manifest(t, s).InputSchema), args)
			if strings.HasPrefix(c.why, "route ") {
				// The route list is the check's: the schema accepts a route
				// exactly when the check does.
				if (len(ps) == 0) != (len(ds) == 0) {
					t.Fatalf("check %s, schema %s", problemsString(ps), details(ds))
				}
				return
			}
			if len(ps) > 0 {
				t.Fatalf("the check refuses %s: %s", raw, problemsString(ps))
			}
			if len(ds) > 0 {
				t.Fatalf("the schema refuses what the check accepts: %s: %s", raw, details(ds))
			}
		})
	}
}
