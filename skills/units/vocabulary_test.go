package units

import (
	"strings"
	"testing"
)

func TestRoutes(t *testing.T) {
	for _, name := range []string{"oral", "iv_bolus", "iv_infusion", "sc", "im", "ip", "inhalation", "topical", "transdermal"} {
		r, ok := LookupRoute(name)
		if !ok || r.Description == "" {
			t.Errorf("route %s: %+v %v", name, r, ok)
		}
		if r.Intravascular != strings.HasPrefix(name, "iv_") {
			t.Errorf("route %s intravascular %v", name, r.Intravascular)
		}
	}
	seen := map[string]bool{}
	for _, r := range Routes() {
		if seen[r.Name] || r.Name != strings.ToLower(r.Name) || r.Description == "" {
			t.Errorf("route %+v", r)
		}
		seen[r.Name] = true
	}
	for _, c := range []struct{ name, suggestion, msg string }{
		{"PO", "oral", ""}, {"p.o.", "oral", ""}, {"Oral", "oral", ""}, {"subcutaneous", "sc", ""},
		{"IV bolus", "iv_bolus", ""}, {"iv", "", "say iv_bolus or iv_infusion"}, {"intravenous", "", "iv_bolus or iv_infusion"},
		{"telepathic", "", "expected one of oral, iv_bolus"},
	} {
		_, p := ParseRoute("inputs.route", c.name)
		if p == nil || p.Code != CodeUnknownRoute || p.Path != "inputs.route" || p.Suggestion != c.suggestion ||
			len(p.Allowed) != len(routes) || !strings.Contains(p.Message, c.msg) {
			t.Errorf("%q: %+v", c.name, p)
		}
	}
	if r, p := ParseRoute("inputs.route", "iv_infusion"); p != nil || !r.Intravascular {
		t.Errorf("%v %v", r, p)
	}
}

func TestDoseForms(t *testing.T) {
	for _, name := range []string{"tablet", "capsule", "solution", "suspension", "injection"} {
		if f, p := ParseDoseForm("inputs.form", name); p != nil || f.Description == "" {
			t.Errorf("%s: %v %v", name, f, p)
		}
	}
	seen := map[string]bool{}
	for _, f := range DoseForms() {
		if seen[f.Name] || f.Description == "" {
			t.Errorf("dose form %+v", f)
		}
		seen[f.Name] = true
	}
	for _, c := range []struct{ name, suggestion string }{{"Tablet", "tablet"}, {"tabs", "tablet"}, {"oral solution", "solution"}, {"elixir", ""}} {
		_, p := ParseDoseForm("inputs.form", c.name)
		if p == nil || p.Code != CodeUnknownDoseForm || p.Suggestion != c.suggestion || len(p.Allowed) != len(doseForms) {
			t.Errorf("%q: %+v", c.name, p)
		}
	}
	// Every alias points into the list, so no suggestion is a dead end.
	for _, m := range []map[string]string{routeAliases, doseFormAliases, speciesAliases} {
		for k, v := range m {
			_, r := LookupRoute(v)
			_, f := LookupDoseForm(v)
			_, s := Species(v)
			if !r && !f && !s {
				t.Errorf("alias %s -> %s points nowhere", k, v)
			}
		}
	}
}
