package defaults_test

// The checks a schema document must pass, one function per rule of README.md,
// each returning every problem it finds. They take a parsed document so the
// negative tests can break one thing and watch the right check fail.

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/scidex/substrate/internal/store"
)

// defaultTypes are the types docs/architecture.md says ship with the substrate, plus
// group and role, whose members messages to group:<id> and actors:role:<id> reach.
var defaultTypes = []string{
	"agent_work_packet", "alias", "analysis", "comment", "dataset", "debate_round", "debate_session", "experiment", "figure",
	"gate_result", "group", "hypothesis", "kg_edge", "knowledge_gap", "message", "notebook", "paper", "role", "schema", "skill",
	"skill_result", "tool", "tool_call", "wiki_page",
}

// knownValidators are the Go validators this build registers: the write path's
// own list, so a document naming one it lacks fails here, not at run time.
var knownValidators = store.ValidatorNames()

// knownRoles are the roles a lifecycle transition may name.
var knownRoles = []string{"owner", "contributor", "reviewer", "admin"}

// signalAggregation is the aggregation each signal kind must declare: the read
// side computes vote scores, mean ranks, fund totals and calibration histories
// by kind name, so a kind's meaning may not vary between types.
var signalAggregation = map[string]string{"vote": "replace", "rank": "replace", "fund": "sum", "calibration": "append", "usage_count": "sum", "duel": "replace", "trade": "sum"}

// defaultIDPattern applies when a document gives no id_pattern.
const defaultIDPattern = `^[A-Za-z0-9][A-Za-z0-9._~-]{0,199}$`

var (
	// refRE is the "ref" format: <type>:<id> or <type>:<id>@sha256:<hex>.
	refRE         = regexp.MustCompile(`^[a-z][a-z0-9_]*:[^@\s]+(@sha256:[0-9a-f]{64})?$`)
	snakeRE       = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	enumTypeRE    = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	graphqlNameRE = regexp.MustCompile(`^[_A-Za-z][_0-9A-Za-z]*$`)
)

// checkFileName: a document lives in <type>.json.
func checkFileName(file string, d document) error {
	if file != d.Type+".json" {
		return fmt.Errorf("file %s holds type %q", file, d.Type)
	}
	return nil
}

// checkTypeSet: exactly the default types are present.
func checkTypeSet(types []string) error {
	var errs []error
	for _, t := range defaultTypes {
		if !slices.Contains(types, t) {
			errs = append(errs, fmt.Errorf("default type %q is missing", t))
		}
	}
	for _, t := range types {
		if !slices.Contains(defaultTypes, t) {
			errs = append(errs, fmt.Errorf("type %q is not a default type", t))
		}
	}
	return errors.Join(errs...)
}

// checkContentSchema: the content schema compiles and describes an object.
func checkContentSchema(d document) error {
	if d.ContentSchema["type"] != "object" {
		return fmt.Errorf(`content_schema: root "type" is %v, want "object"`, d.ContentSchema["type"])
	}
	_, err := compileSchema(d.Type, d.ContentSchema)
	return err
}

// checkExamples: there is an example, every example's content is valid, and
// its id (if any) is one the type accepts; client ids must be given.
func checkExamples(d document) error {
	if len(d.Examples) == 0 {
		return errors.New("no examples")
	}
	sch, err := compileSchema(d.Type, d.ContentSchema)
	if err != nil {
		return fmt.Errorf("content_schema: %w", err)
	}
	pattern := d.IDPattern
	if pattern == "" {
		pattern = defaultIDPattern
	}
	idRE, err := regexp.Compile(pattern)
	if err != nil {
		return fmt.Errorf("id_pattern: %w", err)
	}
	var errs []error
	seen := map[string]bool{}
	for i, ex := range d.Examples {
		switch {
		case ex.Title == "":
			errs = append(errs, fmt.Errorf("example %d: empty title", i))
		case ex.ID == "" && d.IDStrategy == "client":
			errs = append(errs, fmt.Errorf("example %d: id_strategy is client but no id is given", i))
		case ex.ID != "" && (!idRE.MatchString(ex.ID) || strings.Contains(ex.ID, "@")):
			errs = append(errs, fmt.Errorf("example %d: id %q does not match %s", i, ex.ID, pattern))
		case ex.ID != "" && seen[ex.ID]:
			errs = append(errs, fmt.Errorf("example %d: id %q used twice", i, ex.ID))
		}
		seen[ex.ID] = true
		v, err := jsonValue(ex.Content)
		if err == nil {
			err = explain(sch.Validate(v))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("example %d (%s): %w", i, ex.Title, err))
		}
	}
	return errors.Join(errs...)
}

// checkModes: updatable types lock optimistically, the others don't lock.
func checkModes(d document) error {
	want := "none"
	if d.Mutability == "mutable_with_history" {
		want = "optimistic"
	}
	if d.LockMode != want {
		return fmt.Errorf("mutability %s wants lock_mode %s, not %q", d.Mutability, want, d.LockMode)
	}
	return nil
}

// checkLinks: every target is a known type or "*" alone, and related_to is declared.
func checkLinks(d document, known []string) error {
	var errs []error
	if l, ok := d.Links["related_to"]; !ok || !slices.Equal(l.Targets, []string{"*"}) {
		errs = append(errs, errors.New(`links: related_to -> ["*"] is missing`))
	}
	for pred, l := range d.Links {
		if len(l.Targets) == 0 {
			errs = append(errs, fmt.Errorf("links.%s: no targets", pred))
		}
		for _, t := range l.Targets {
			switch {
			case t == "*" && len(l.Targets) > 1:
				errs = append(errs, fmt.Errorf(`links.%s: "*" must stand alone`, pred))
			case t != "*" && !slices.Contains(known, t):
				errs = append(errs, fmt.Errorf("links.%s: target %q is not a known type", pred, t))
			}
		}
	}
	return errors.Join(errs...)
}

// checkSignals: each kind keeps its platform-wide aggregation, its range is
// ordered, and discrete values fall inside it.
func checkSignals(d document) error {
	var errs []error
	for kind, s := range d.Signals {
		if want, ok := signalAggregation[kind]; !ok {
			errs = append(errs, fmt.Errorf("signals.%s: unknown kind", kind))
		} else if s.Aggregation != want {
			errs = append(errs, fmt.Errorf("signals.%s: aggregation %q, want %q", kind, s.Aggregation, want))
		}
		if len(s.Dimensions) == 0 {
			errs = append(errs, fmt.Errorf("signals.%s: no dimensions", kind))
		}
		if len(s.ValueRange) != 2 {
			errs = append(errs, fmt.Errorf("signals.%s: value_range must be [min, max]", kind))
			continue
		}
		lo, hi := math.Inf(-1), math.Inf(1)
		if s.ValueRange[0] != nil {
			lo = *s.ValueRange[0]
		}
		if s.ValueRange[1] != nil {
			hi = *s.ValueRange[1]
		}
		if lo > hi {
			errs = append(errs, fmt.Errorf("signals.%s: value_range min %v > max %v", kind, lo, hi))
		}
		for _, v := range s.Values {
			if v < lo || v > hi {
				errs = append(errs, fmt.Errorf("signals.%s: value %v outside value_range", kind, v))
			}
		}
	}
	return errors.Join(errs...)
}

// checkLifecycle: initial and transitions name declared states, roles are
// known and include admin, no state is unreachable, and "no lifecycle" is
// spelled consistently.
func checkLifecycle(d document) error {
	lc := d.Lifecycle
	if len(lc.States) == 0 {
		if lc.Initial != nil || len(lc.Transitions) > 0 {
			return errors.New("lifecycle: no states, so initial must be null and transitions empty")
		}
		return nil
	}
	var errs []error
	if lc.Initial != nil && !slices.Contains(lc.States, *lc.Initial) {
		errs = append(errs, fmt.Errorf("lifecycle: initial %q is not a declared state", *lc.Initial))
	}
	reached := map[string]bool{}
	if lc.Initial != nil {
		reached[*lc.Initial] = true
	}
	seen := map[[2]string]bool{}
	for _, tr := range lc.Transitions {
		key := [2]string{tr.From, tr.To}
		if seen[key] {
			errs = append(errs, fmt.Errorf("lifecycle: transition %s -> %s declared twice", tr.From, tr.To))
		}
		seen[key] = true
		if tr.From != "*" && !slices.Contains(lc.States, tr.From) {
			errs = append(errs, fmt.Errorf("lifecycle: transition from undeclared state %q", tr.From))
		}
		if !slices.Contains(lc.States, tr.To) {
			errs = append(errs, fmt.Errorf("lifecycle: transition to undeclared state %q", tr.To))
		}
		if tr.From == tr.To {
			errs = append(errs, fmt.Errorf("lifecycle: transition %s -> %s goes nowhere", tr.From, tr.To))
		}
		if !slices.Contains(tr.Roles, "admin") {
			errs = append(errs, fmt.Errorf("lifecycle: transition %s -> %s does not name admin", tr.From, tr.To))
		}
		for _, r := range tr.Roles {
			if !slices.Contains(knownRoles, r) {
				errs = append(errs, fmt.Errorf("lifecycle: transition %s -> %s names unknown role %q", tr.From, tr.To, r))
			}
		}
		reached[tr.To] = true
	}
	for _, s := range lc.States {
		if !reached[s] {
			errs = append(errs, fmt.Errorf("lifecycle: state %q is neither initial nor reachable", s))
		}
	}
	return errors.Join(errs...)
}

// checkValidators: only registered validators, each once, and the ones the
// document's own declarations call for.
func checkValidators(d document) error {
	var errs []error
	for i, v := range d.Validators {
		if !slices.Contains(knownValidators, v) {
			errs = append(errs, fmt.Errorf("validators: unknown validator %q", v))
		}
		if slices.Contains(d.Validators[:i], v) {
			errs = append(errs, fmt.Errorf("validators: %q listed twice", v))
		}
	}
	need := func(cond bool, name, why string) {
		if cond && !slices.Contains(d.Validators, name) {
			errs = append(errs, fmt.Errorf("validators: %s needs %q", why, name))
		}
	}
	evidence := false
	for _, l := range d.Links {
		evidence = evidence || l.EvidenceRequired
	}
	need(len(d.Lifecycle.States) > 0, "lifecycle_transition_allowed", "a lifecycle")
	need(len(d.Lifecycle.States) > 0, "actor_authorized_for_lifecycle", "a lifecycle")
	need(evidence, "evidence_supports_claim", "a link with evidence_required")
	need(d.Mutability == "superseded_only", "no_self_supersede", "superseded_only")
	need(hasRefFormat(d.ContentSchema), "link_targets_exist", `a "format": "ref" property`)
	return errors.Join(errs...)
}

// checkPolicy: every default type spells its policy out (read, create, update,
// supersede), names only operations this build has, and its server fields are
// declared properties.
func checkPolicy(d document) error {
	p := d.Policy
	if p == nil {
		return errors.New("policy: a default type spells out its policy")
	}
	var errs []error
	if p.Read == "" || p.Create == nil || p.Update == nil || p.Supersede == nil {
		errs = append(errs, errors.New("policy: read, create, update and supersede are all given"))
	}
	known := store.Known()
	for kind, r := range map[string]*writeRule{"create": p.Create, "update": p.Update, "supersede": p.Supersede} {
		if r == nil {
			continue
		}
		if !r.ServerOnly && len(r.Roles) == 0 && len(r.Via) == 0 {
			errs = append(errs, fmt.Errorf("policy.%s: give roles, via or server_only", kind))
		}
		for _, op := range r.Via {
			if !known.Operation(op) {
				errs = append(errs, fmt.Errorf("policy.%s.via: unknown operation %q", kind, op))
			}
		}
	}
	props, _ := d.ContentSchema["properties"].(map[string]any)
	for _, f := range p.ServerFields {
		if _, ok := props[strings.TrimPrefix(f.Pointer, "/")]; !ok {
			errs = append(errs, fmt.Errorf("policy.server_fields: %s is not a declared property", f.Pointer))
		}
		for _, op := range f.WrittenBy {
			if !known.Operation(op) {
				errs = append(errs, fmt.Errorf("policy.server_fields %s: unknown operation %q", f.Pointer, op))
			}
		}
	}
	return errors.Join(errs...)
}

// hasRefFormat reports whether a schema uses "format": "ref" anywhere.
func hasRefFormat(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		if v["format"] == "ref" {
			return true
		}
		for _, sub := range v {
			if hasRefFormat(sub) {
				return true
			}
		}
	case []any:
		return slices.ContainsFunc(v, hasRefFormat)
	}
	return false
}

// checkDocument runs every per-document check; known are the types links may target.
func checkDocument(d document, known []string) error {
	return errors.Join(
		checkContentSchema(d),
		checkExamples(d),
		checkModes(d),
		checkLinks(d, known),
		checkSignals(d),
		checkLifecycle(d),
		checkValidators(d),
		checkPolicy(d),
		checkProperties(d),
		checkMerge(d),
		checkGraphQL(d),
	)
}
