package skills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/scidex/substrate/internal/dispatch"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/internal/toolname"
)

// RunInput is runSkill's input.
type RunInput struct {
	Name           string
	Inputs         json.RawMessage
	StoreResult    bool
	IdempotencyKey string
}

// RunResult is what runSkill answers: the call, and the skill_result stored
// for it (nil when not asked for, or when the call failed).
type RunResult struct {
	Call   *store.Artifact
	Result *store.Artifact
}

// Output is what every skill's output carries besides its own figures, by
// convention of this package's wrappers: the skill_result is made from it.
type Output struct {
	Units             map[string]string `json:"units"`
	CalculationRoute  string            `json:"calculation_route"`
	ReferencesUsed    []map[string]any  `json:"references_used"`
	Warnings          []string          `json:"warnings"`
	Disclaimers       []string          `json:"disclaimers"`
	CheckLogicVersion string            `json:"check_logic_version"`
	Figure            string            `json:"figure"`
	Figures           []string          `json:"figures"`
}

// Run is runSkill: sugar over invokeTool for a workbench. It runs the
// skill's tool with inputs as its args and, when asked, stores a
// skill_result linked to its tool_call (produced_by_tool) and its skill
// (produced_by_skill), and to the figure the skill drew (illustrates).
func Run(ctx context.Context, d *dispatch.Dispatcher, st *store.Store, in RunInput) (*RunResult, error) {
	if !toolname.Valid(in.Name) {
		return nil, problem.Invalid(problem.Field("input.name", "pattern", "a skill name is "+toolname.Rule, in.Name))
	}
	skill, err := st.Get(ctx, ref.Ref{Type: "skill", ID: in.Name})
	if errors.Is(err, store.ErrNotFound) {
		return nil, problem.New(problem.NotFound, "no skill named %q; list them with the skills query", in.Name)
	}
	if err != nil {
		return nil, err
	}
	var doc struct {
		ToolName string `json:"tool_name"`
		Version  string `json:"version"`
	}
	_ = json.Unmarshal(skill.Content, &doc)
	call, err := d.Invoke(ctx, dispatch.InvokeInput{Name: doc.ToolName, Args: in.Inputs, IdempotencyKey: in.IdempotencyKey,
		SkillRun: &dispatch.SkillRun{Skill: in.Name, StoreResult: in.StoreResult}})
	if err != nil {
		return nil, renameArgs(err)
	}
	out := &RunResult{Call: call}
	if !in.StoreResult {
		return out, nil
	}
	res, err := storeResult(ctx, st, skill, call, in.IdempotencyKey)
	if err != nil || res == nil {
		return out, err
	}
	out.Result = res
	if updated, err := d.RecordResultArtifact(ctx, call, res.Ref().String()); err == nil {
		out.Call = updated
	} else {
		return nil, err
	}
	return out, nil
}

// StoreQueued is the dispatcher's OnFinish hook: a queued call runSkill made
// with storeResult gets its skill_result when it finishes, on whichever
// worker ran it, as the caller.
func StoreQueued(ctx context.Context, d *dispatch.Dispatcher, call *store.Artifact) {
	st, log := d.Store(), d.Logger()
	{
		var rec struct {
			SkillRun *dispatch.SkillRun `json:"skill_run"`
		}
		if json.Unmarshal(call.Content, &rec) != nil || rec.SkillRun == nil || !rec.SkillRun.StoreResult {
			return
		}
		skill, err := st.Get(ctx, ref.Ref{Type: "skill", ID: rec.SkillRun.Skill})
		var res *store.Artifact
		if err == nil {
			res, err = storeResult(ctx, st, skill, call, "")
		}
		if err == nil && res != nil {
			_, err = d.RecordResultArtifact(ctx, call, res.Ref().String())
		}
		if err != nil {
			log.Warn("runSkill: store the skill_result of a queued call", "call", call.ID, "err", err)
		}
	}
}

// storeResult stores the skill_result of a succeeded call (nil otherwise).
func storeResult(ctx context.Context, st *store.Store, skill, call *store.Artifact, idempotencyKey string) (*store.Artifact, error) {
	var doc struct {
		ToolName string `json:"tool_name"`
		Version  string `json:"version"`
		Name     string `json:"name"`
	}
	_ = json.Unmarshal(skill.Content, &doc)
	var rec struct {
		Status     string          `json:"status"`
		Result     json.RawMessage `json:"result"`
		InputsHash string          `json:"inputs_hash"`
		Args       json.RawMessage `json:"args"`
	}
	_ = json.Unmarshal(call.Content, &rec)
	if rec.Status != dispatch.StatusSucceeded {
		return nil, nil
	}
	var o Output
	_ = json.Unmarshal(rec.Result, &o)
	content, _ := json.Marshal(map[string]any{
		"skill": skill.Ref().String(), "skill_name": doc.Name, "skill_version": doc.Version, "tool_call": call.Ref().String(),
		"inputs": rec.Args, "outputs": rec.Result, "units": nonNilMap(o.Units), "calculation_route": o.CalculationRoute,
		"references_used": nonNilSlice(o.ReferencesUsed), "warnings": nonNilStrings(o.Warnings), "disclaimers": nonNilStrings(o.Disclaimers),
		"check_logic_version": o.CheckLogicVersion, "inputs_hash": rec.InputsHash,
		"produced_by": map[string]any{"skill": doc.Name, "tool": doc.ToolName},
	})
	key := ""
	if idempotencyKey != "" {
		key = idempotencyKey + "/skill_result"
	}
	res, err := st.ServerCreate(ctx, "runSkill", store.CreateParams{Type: "skill_result", Title: fmt.Sprintf("%s %s result", doc.Name, doc.Version),
		Content: content, IdempotencyKey: key})
	if err != nil {
		return nil, fmt.Errorf("runSkill: store the skill_result: %w", err)
	}
	if res.Replay {
		return res.Artifact, nil
	}
	links := []store.LinkParams{
		{From: res.Ref, Predicate: "produced_by_tool", To: call.Ref().String()},
		{From: res.Ref, Predicate: "produced_by_skill", To: skill.Ref().String()},
	}
	figures := o.Figures
	if len(figures) == 0 && o.Figure != "" {
		figures = []string{o.Figure}
	}
	for _, f := range figures {
		links = append(links, store.LinkParams{From: f, Predicate: "illustrates", To: res.Ref})
	}
	for _, l := range links {
		if _, err := st.ServerLink(ctx, "runSkill", l); err != nil {
			return nil, fmt.Errorf("runSkill: link the skill_result: %w", err)
		}
	}
	return res.Artifact, nil
}

// renameArgs makes invokeTool's problems about args speak of runSkill's
// inputs.
func renameArgs(err error) error {
	p, ok := problem.As(err)
	if !ok || p.Code != problem.ValidationFailed {
		return err
	}
	c := *p
	// The message names the first problem's path when there is one problem:
	// it speaks of inputs too.
	if strings.HasPrefix(c.Message, "input.args") {
		c.Message = "input.inputs" + strings.TrimPrefix(c.Message, "input.args")
	}
	c.Details = make([]problem.Detail, len(p.Details))
	for i, d := range p.Details {
		if strings.HasPrefix(d.Path, "input.args") {
			d.Path = "input.inputs" + strings.TrimPrefix(d.Path, "input.args")
		}
		c.Details[i] = d
	}
	return &c
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func nonNilSlice(s []map[string]any) []map[string]any {
	if s == nil {
		return []map[string]any{}
	}
	return s
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
