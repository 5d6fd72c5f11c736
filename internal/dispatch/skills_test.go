package dispatch_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/app"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/internal/workpacket"
	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/bwrap"
	"github.com/scidex/substrate/runtimes/skillcall"
	"github.com/scidex/substrate/skills"
	"github.com/scidex/substrate/tools"
)

const runSkillQ = `mutation($n: String!, $in: JSON!, $store: Boolean) { runSkill(input: {name: $n, inputs: $in, storeResult: $store}) {
  __typename
  ... on SkillRun { toolCall { artifactId status result error checkLogicVersion inputsHash resultArtifactId } skillResult { ref skillName checkLogicVersion calculationRoute disclaimers outputs } }
  ... on ValidationFailed { problems { path constraint message } }
  ... on Problem { message } } }`

type skillRun struct {
	RunSkill struct {
		Typename string `json:"__typename"`
		ToolCall struct {
			ArtifactID, Status, CheckLogicVersion, InputsHash string
			ResultArtifactID                                  *string
			Result, Error                                     json.RawMessage
		}
		SkillResult *struct {
			Ref, SkillName, CheckLogicVersion, CalculationRoute string
			Disclaimers                                         []string
			Outputs                                             json.RawMessage
		}
		Problems []struct{ Path, Constraint, Message string }
		Message  string
	}
}

func runSkill(t *testing.T, token, name string, inputs any, e interface {
	OK(testing.TB, string, string, map[string]any, any)
}) skillRun {
	t.Helper()
	var out skillRun
	e.OK(t, token, runSkillQ, map[string]any{"n": name, "in": inputs}, &out)
	return out
}

// The skills are installed at start: each a skill artifact with its served
// status and references, implemented by an active in_process tool; runSkill
// runs one as a recorded tool call and stores its skill_result; bad inputs
// are refused naming the field, and nothing is written.
func TestSkillsInstalledAndRun(t *testing.T) {
	e := env(t, nil)
	var sk struct {
		Skill struct {
			ServedStatus, IntendedStatus, LifecycleState, CheckLogicVersion string
			References                                                      []map[string]any
			Example                                                         map[string]any
		}
	}
	e.OK(t, alice(t), `{ skill(name: "qa.check_readiness") { servedStatus intendedStatus lifecycleState checkLogicVersion references example } }`, nil, &sk)
	if sk.Skill.ServedStatus != "designed" || sk.Skill.LifecycleState != "draft" || len(sk.Skill.References) != 1 ||
		sk.Skill.References[0]["status"] != "to_verify" || sk.Skill.CheckLogicVersion == "" {
		t.Fatalf("installed skill: %+v", sk.Skill)
	}
	r := runSkill(t, alice(t), "qa.check_readiness", sk.Skill.Example["inputs"], e)
	if r.RunSkill.Typename != "SkillRun" || r.RunSkill.ToolCall.Status != "SUCCEEDED" || r.RunSkill.SkillResult == nil ||
		r.RunSkill.SkillResult.CheckLogicVersion != r.RunSkill.ToolCall.CheckLogicVersion && false {
		t.Fatalf("runSkill: %+v", r.RunSkill)
	}
	if !strings.Contains(string(r.RunSkill.ToolCall.Result), `"status":"not_ready"`) || r.RunSkill.SkillResult.SkillName != "qa.check_readiness" ||
		len(r.RunSkill.SkillResult.Disclaimers) == 0 || r.RunSkill.SkillResult.CalculationRoute == "" {
		t.Fatalf("result: %s %+v", r.RunSkill.ToolCall.Result, r.RunSkill.SkillResult)
	}
	before := count(t, e, "type IN ('tool_call', 'skill_result')")
	bad := runSkill(t, alice(t), "qa.check_readiness", map[string]any{"sop_id": "SOP-1", "version": "1", "as_of": "2026-02-30"}, e)
	if bad.RunSkill.Typename != "ValidationFailed" || bad.RunSkill.Problems[0].Path != "input.inputs.as_of" {
		t.Fatalf("bad date: %+v", bad.RunSkill)
	}
	if after := count(t, e, "type IN ('tool_call', 'skill_result')"); after != before {
		t.Fatalf("a refused run wrote %d artifacts", after-before)
	}
	if nf := runSkill(t, alice(t), "no.such.skill", map[string]any{}, e); nf.RunSkill.Typename != "NotFound" {
		t.Fatalf("unknown skill: %+v", nf.RunSkill)
	}
}

// data.check_conformance is long-running: runSkill queues it, a worker runs
// it with progress events, and its skill_result is stored when it finishes.
func TestConformanceSkillQueued(t *testing.T) {
	e := env(t, nil)
	var sk struct {
		Skill struct{ Example map[string]any }
	}
	e.OK(t, alice(t), `{ skill(name: "data.check_conformance") { example } }`, nil, &sk)
	r := runSkill(t, alice(t), "data.check_conformance", sk.Skill.Example["inputs"], e)
	if r.RunSkill.Typename != "SkillRun" || (r.RunSkill.ToolCall.Status != "QUEUED" && r.RunSkill.ToolCall.Status != "RUNNING") || r.RunSkill.SkillResult != nil {
		t.Fatalf("a queued skill run: %+v", r.RunSkill)
	}
	id := r.RunSkill.ToolCall.ArtifactID
	waitStatus(t, e, alice(t), id, "SUCCEEDED")
	var out struct {
		ToolCall struct {
			Result struct {
				Conforms bool
				Report   struct {
					TotalViolations int `json:"total_violations"`
				}
			}
		}
	}
	e.OK(t, alice(t), `query($id: ID!) { toolCall(id: $id) { result } }`, map[string]any{"id": id}, &out)
	if out.ToolCall.Result.Conforms || out.ToolCall.Result.Report.TotalViolations != 2 {
		t.Fatalf("report: %+v", out.ToolCall.Result)
	}
	if got := strings.Join(eventTypes(t, e, alice(t), id), ","); !strings.Contains(got, "tool_call.progress") {
		t.Fatalf("no progress events: %s", got)
	}
	until(t, e, "tool_call:"+id, "the queued call records its stored skill_result", func() bool {
		return count(t, e, "type = 'tool_call' AND id = '"+id+"' AND content ? 'result_artifact_id'") == 1
	})
	if n := count(t, e, "type = 'skill_result' AND content->>'tool_call' LIKE 'tool_call:"+id+"@%'"); n != 1 {
		t.Fatalf("%d skill_results for the queued call", n)
	}
	bad := runSkill(t, alice(t), "data.check_conformance", map[string]any{"csv": "a\n1\n", "spec": map[string]any{"columns": []any{map[string]any{"name": "a", "type": "decimal"}}}}, e)
	if bad.RunSkill.Typename != "ValidationFailed" || bad.RunSkill.Problems[0].Path != "input.inputs.spec.columns[0].type" {
		t.Fatalf("a bad spec: %+v", bad.RunSkill)
	}
}

// tox.fih_dose_projection through runSkill: units enforced, the route named,
// the fixed phrases carried; bad inputs refused naming the field.
func TestFIHSkill(t *testing.T) {
	e := env(t, nil)
	r := runSkill(t, alice(t), "tox.fih_dose_projection", map[string]any{"route": "km_ratio",
		"studies": []any{map[string]any{"species": "rat", "noael": map[string]any{"value": 50000, "unit": "ug/kg"}}}}, e)
	if r.RunSkill.Typename != "SkillRun" || r.RunSkill.ToolCall.Status != "SUCCEEDED" {
		t.Fatalf("run: %+v", r.RunSkill)
	}
	var out struct {
		HED struct {
			Value float64
			Unit  string
		}
		MRSDDose    struct{ Value float64 } `json:"mrsd_dose"`
		Disclaimers []string
		Route       string `json:"calculation_route"`
	}
	_ = json.Unmarshal(r.RunSkill.ToolCall.Result, &out)
	if d := out.HED.Value - 50.0*6/37; d > 1e-9 || d < -1e-9 || out.HED.Unit != "mg/kg" || !strings.HasPrefix(out.Route, "km_ratio") {
		t.Fatalf("HED %+v by %q", out.HED, out.Route)
	}
	if d := out.MRSDDose.Value - 50.0*6/37/10*60; d > 1e-9 || d < -1e-9 {
		t.Fatalf("MRSD %v mg", out.MRSDDose.Value)
	}
	want := []string{"Projection for your decision, not a starting dose", "PAD/MABEL not computed"}
	if len(out.Disclaimers) != 3 || out.Disclaimers[0] != want[0] || out.Disclaimers[1] != want[1] || !strings.HasPrefix(out.Disclaimers[2], "checked against ") {
		t.Fatalf("disclaimers %q", out.Disclaimers)
	}
	for _, c := range []struct {
		inputs    map[string]any
		path, why string
	}{
		{map[string]any{"route": "km_ratio", "studies": []any{map[string]any{"species": "rat", "noael": 50}}}, "input.inputs.studies[0].noael", "unit_required"},
		{map[string]any{"route": "km_ratio", "studies": []any{map[string]any{"species": "rat", "noael": map[string]any{"value": 50, "unit": "MG/KG"}}}}, "input.inputs.studies[0].noael.unit", "unknown_unit"},
		{map[string]any{"route": "km_ratio", "studies": []any{map[string]any{"species": "rat", "noael": map[string]any{"value": 50, "unit": "h"}}}}, "input.inputs.studies[0].noael.unit", "incompatible_unit"},
		{map[string]any{"route": "km_ratio", "studies": []any{map[string]any{"species": "unicorn", "noael": map[string]any{"value": 5, "unit": "mg/kg"}}}}, "input.inputs.studies[0].species", "unknown_species"},
		{map[string]any{"route": "km_ratio", "safety_factor": 5, "studies": []any{map[string]any{"species": "rat", "noael": map[string]any{"value": 5, "unit": "mg/kg"}}}}, "input.inputs.safety_factor_reason", "safety_factor_reason_required"},
	} {
		before := count(t, e, "type = 'tool_call'")
		bad := runSkill(t, alice(t), "tox.fih_dose_projection", c.inputs, e)
		if bad.RunSkill.Typename != "ValidationFailed" || len(bad.RunSkill.Problems) == 0 || bad.RunSkill.Problems[0].Path != c.path || bad.RunSkill.Problems[0].Constraint != c.why {
			t.Errorf("%s: %+v", c.why, bad.RunSkill)
		}
		if count(t, e, "type = 'tool_call'") != before {
			t.Errorf("%s: a refused run was recorded", c.why)
		}
	}
}

// pk.nca through runSkill on theophylline subject 1 (its example, in minutes
// and µg/mL to exercise the units layer): the figures of the hand-checked
// calculation in skills/pk/testdata/theoph_subject1_by_hand.txt, the route
// named, a figure artifact linked to the skill_result; a bare number is
// refused as unit_required and unsorted times name their index.
func TestNCASkill(t *testing.T) {
	e := env(t, nil)
	var sk struct{ Skill struct{ ServedStatus string } }
	e.OK(t, alice(t), `{ skill(name: "pk.nca") { servedStatus } }`, nil, &sk)
	if sk.Skill.ServedStatus != "preview" {
		t.Fatalf("pk.nca depends only on verified references and is intended for preview: served %q", sk.Skill.ServedStatus)
	}
	minutes := []any{}
	for _, h := range []float64{0, 0.25, 0.57, 1.12, 2.02, 3.82, 5.1, 7.03, 9.05, 12.12, 24.37} {
		minutes = append(minutes, h*60)
	}
	in := map[string]any{"subject": "1", "route": "oral", "auc_method": "linear",
		"times":          map[string]any{"values": minutes, "unit": "min"},
		"concentrations": map[string]any{"values": []any{0.74, 2.84, 6.57, 10.5, 9.66, 8.58, 8.36, 7.47, 6.89, 5.94, 3.28}, "unit": "ug/mL"},
		"dose":           map[string]any{"value": 0.32, "unit": "g"}}
	r := runSkill(t, alice(t), "pk.nca", in, e)
	if r.RunSkill.Typename != "SkillRun" || r.RunSkill.ToolCall.Status != "SUCCEEDED" || r.RunSkill.SkillResult == nil {
		t.Fatalf("run: %+v", r.RunSkill)
	}
	var out struct {
		NCA struct {
			Cmax, AUClast float64
			Terminal      struct {
				LambdaZ, HalfLife float64
				N                 int
			}
		}
		Figure    string
		FigureURL string `json:"figure_url"`
		Route     string `json:"calculation_route"`
	}
	if err := json.Unmarshal(r.RunSkill.ToolCall.Result, &out); err != nil {
		t.Fatal(err)
	}
	close := func(got, want float64) bool { return got-want < 1e-6*want && want-got < 1e-6*want }
	if tc := r.RunSkill.ToolCall; tc.CheckLogicVersion != "pk.nca/1.1" || !strings.HasPrefix(tc.InputsHash, "sha256:") ||
		tc.ResultArtifactID == nil || *tc.ResultArtifactID != r.RunSkill.SkillResult.Ref {
		t.Fatalf("the call's record of the skill run: %+v", tc)
	}
	if !close(out.NCA.Cmax, 10.5) || !close(out.NCA.AUClast, 148.92305) || !close(out.NCA.Terminal.LambdaZ, 0.04845699697) ||
		!close(out.NCA.Terminal.HalfLife, 14.30437757) || out.NCA.Terminal.N != 3 || !strings.Contains(out.Route, "linear") {
		t.Fatalf("nca: %+v (%s)", out.NCA, r.RunSkill.ToolCall.Result)
	}
	if !strings.HasPrefix(out.Figure, "figure:") || out.FigureURL != "/artifacts/"+out.Figure+"/figure.svg" {
		t.Fatalf("figure %q at %q", out.Figure, out.FigureURL)
	}
	var fig struct {
		Artifact struct {
			Links struct {
				Edges []struct {
					Node struct {
						Predicate string
						To        struct{ Ref string }
					}
				}
			}
		}
	}
	e.OK(t, alice(t), `query($r: Ref!) { artifact(ref: $r) { links(predicates: ["illustrates"]) { edges { node { predicate to { ref } } } } } }`,
		map[string]any{"r": out.Figure}, &fig)
	if len(fig.Artifact.Links.Edges) != 1 || !strings.HasPrefix(fig.Artifact.Links.Edges[0].Node.To.Ref, strings.SplitN(r.RunSkill.SkillResult.Ref, "@", 2)[0]) {
		t.Fatalf("the figure illustrates %+v, want the skill_result %s", fig.Artifact.Links.Edges, r.RunSkill.SkillResult.Ref)
	}
	bare := map[string]any{"route": "oral", "auc_method": "linear", "times": map[string]any{"values": []any{0, 2, 1, 3}, "unit": "h"},
		"concentrations": []any{1, 2, 3, 4}, "dose": map[string]any{"value": 1, "unit": "mg"}}
	bad := runSkill(t, alice(t), "pk.nca", bare, e)
	if bad.RunSkill.Typename != "ValidationFailed" || bad.RunSkill.Problems[0].Path != "input.inputs.concentrations" || bad.RunSkill.Problems[0].Constraint != "unit_required" {
		t.Fatalf("bare concentrations: %+v", bad.RunSkill)
	}
	bare["concentrations"] = map[string]any{"values": []any{1, 2, 3, 4}, "unit": "mg/L"}
	bad = runSkill(t, alice(t), "pk.nca", bare, e)
	if bad.RunSkill.Typename != "ValidationFailed" || !strings.HasPrefix(bad.RunSkill.Problems[0].Path, "input.inputs.times.values[") || bad.RunSkill.Problems[0].Constraint != "unsorted_times" {
		t.Fatalf("unsorted times: %+v", bad.RunSkill)
	}
}

// pk.nca on several profiles at once: the twelve theophylline subjects
// (skills/refdata/theoph.csv, dose 320 mg), each with its figure.
func TestNCASkillManyProfiles(t *testing.T) {
	e := env(t, nil)
	b, err := os.ReadFile("../../skills/refdata/theoph.csv")
	if err != nil {
		t.Fatal(err)
	}
	bySubject := map[string][2][]any{}
	var order []string
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Split(line, ",")
		if i == 0 {
			continue
		}
		tm, _ := strconv.ParseFloat(f[3], 64)
		c, _ := strconv.ParseFloat(f[4], 64)
		s := bySubject[f[0]]
		if s[0] == nil {
			order = append(order, f[0])
		}
		bySubject[f[0]] = [2][]any{append(s[0], tm), append(s[1], c)}
	}
	var profiles []any
	for _, subj := range order {
		profiles = append(profiles, map[string]any{"subject": subj, "route": "oral", "dose": map[string]any{"value": 320, "unit": "mg"},
			"times": map[string]any{"values": bySubject[subj][0], "unit": "h"}, "concentrations": map[string]any{"values": bySubject[subj][1], "unit": "mg/L"}})
	}
	r := runSkill(t, alice(t), "pk.nca", map[string]any{"auc_method": "linear", "profiles": profiles}, e)
	if r.RunSkill.Typename != "SkillRun" || r.RunSkill.ToolCall.Status != "SUCCEEDED" {
		t.Fatalf("run: %+v %s", r.RunSkill, r.RunSkill.ToolCall.Error)
	}
	var out struct {
		Profiles []struct {
			Subject string
			NCA     struct{ AUClast float64 }
			Figure  string
		}
		Figures []string
	}
	_ = json.Unmarshal(r.RunSkill.ToolCall.Result, &out)
	if len(out.Profiles) != 12 || len(out.Figures) != 12 || out.Profiles[0].Subject != "1" ||
		out.Profiles[0].NCA.AUClast-148.92305 > 1e-6 || 148.92305-out.Profiles[0].NCA.AUClast > 1e-6 {
		t.Fatalf("profiles: %d, figures %d, first %+v", len(out.Profiles), len(out.Figures), out.Profiles)
	}
	var links struct {
		Artifact struct {
			Links struct {
				Edges []struct{ Node struct{ Predicate string } }
			}
		}
	}
	e.OK(t, alice(t), `query($r: Ref!) { artifact(ref: $r) { links(direction: IN, predicates: ["illustrates"], first: 50) { edges { node { predicate } } } } }`,
		map[string]any{"r": r.RunSkill.SkillResult.Ref}, &links)
	if len(links.Artifact.Links.Edges) != 12 {
		t.Fatalf("%d figures illustrate the skill_result", len(links.Artifact.Links.Edges))
	}
	profiles[3].(map[string]any)["dose"] = 320
	bad := runSkill(t, alice(t), "pk.nca", map[string]any{"auc_method": "linear", "profiles": profiles}, e)
	if bad.RunSkill.Typename != "ValidationFailed" || bad.RunSkill.Problems[0].Path != "input.inputs.profiles[3].dose" || bad.RunSkill.Problems[0].Constraint != "unit_required" {
		t.Fatalf("a bare dose in profile 3: %+v", bad.RunSkill)
	}
}

// Every skill's example runs as written (point 9): what a person or an agent
// copies from the skill artifact succeeds.
func TestEverySkillExampleRuns(t *testing.T) {
	// chem.sar_table's worker runs in the bwrap sandbox, with Debian's RDKit
	// (scripts/deps run).
	dir, err := os.MkdirTemp("", "scidex-skills-sandbox-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	e := env(t, nil, func(c *app.Config) {
		c.Runtimes = func(st *store.Store) (*runtimes.Registry, error) {
			box, err := bwrap.New(bwrap.Options{CacheDir: filepath.Join(dir, "cache")})
			if err != nil {
				return nil, err
			}
			return runtimes.NewRegistry(tools.Runtime(skills.Deps{Store: st, Sandbox: box}), skillcall.New(workpacket.Writer(st)))
		}
	})
	var list struct {
		Skills struct {
			Edges []struct {
				Node struct {
					Name    string
					Example struct{ Inputs map[string]any }
				}
			}
		}
	}
	e.OK(t, alice(t), `{ skills(first: 50) { edges { node { ... on Skill { name example } } } } }`, nil, &list)
	if len(list.Skills.Edges) != 5 {
		t.Fatalf("%d skills installed", len(list.Skills.Edges))
	}
	for _, ed := range list.Skills.Edges {
		r := runSkill(t, alice(t), ed.Node.Name, ed.Node.Example.Inputs, e)
		if r.RunSkill.Typename != "SkillRun" {
			t.Errorf("%s: %+v", ed.Node.Name, r.RunSkill)
			continue
		}
		if s := waitStatus(t, e, alice(t), r.RunSkill.ToolCall.ArtifactID, "SUCCEEDED", "FAILED"); s != "SUCCEEDED" {
			t.Errorf("%s's example ended %s", ed.Node.Name, s)
		}
	}
}

// A skill's served status is the server's: only the installer, following
// the references gate, sets it. A contributor's create may only start a
// skill designed, and an update may not change it.
func TestServedStatusIsTheServers(t *testing.T) {
	e := env(t, nil)
	type write struct {
		Typename string `json:"__typename"`
		Problems []struct{ Path, Constraint string }
	}
	var c struct{ CreateArtifact write }
	e.OK(t, alice(t), `mutation { createArtifact(input: {type: "skill", title: "mine", content: {name: "my.skill", version: "1.0.0", served_status: "available"}}) {
	  __typename ... on ValidationFailed { problems { path constraint } } } }`, nil, &c)
	if c.CreateArtifact.Typename != "ValidationFailed" || len(c.CreateArtifact.Problems) == 0 || c.CreateArtifact.Problems[0].Path != "content.served_status" {
		t.Fatalf("a contributor's skill served available: %+v", c.CreateArtifact)
	}
	var sk struct{ Artifact struct{ ContentHash string } }
	e.OK(t, alice(t), `{ artifact(ref: "skill:pk.nca") { contentHash } }`, nil, &sk)
	var u struct{ UpdateArtifact write }
	e.OK(t, alice(t), `mutation($h: String!) { updateArtifact(input: {ref: "skill:pk.nca", baseContentHash: $h, patch: [{op: "replace", path: "/served_status", value: "available"}]}) {
	  __typename ... on ValidationFailed { problems { path constraint } } } }`, map[string]any{"h": sk.Artifact.ContentHash}, &u)
	if u.UpdateArtifact.Typename != "ValidationFailed" || len(u.UpdateArtifact.Problems) == 0 || u.UpdateArtifact.Problems[0].Path != "content.served_status" {
		t.Fatalf("a contributor changed pk.nca's served status: %+v", u.UpdateArtifact)
	}
	e.OK(t, alice(t), `mutation { createArtifact(input: {type: "skill", title: "mine", content: {name: "my.skill", version: "1.0.0", served_status: "designed"}}) { __typename } }`, nil, &c)
	if c.CreateArtifact.Typename != "WriteSuccess" {
		t.Fatalf("a new skill served designed: %+v", c.CreateArtifact)
	}
}
