package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/schema"
)

// decodeJSON reads exactly one JSON value, numbers kept exact.
func decodeJSON(raw []byte, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// pmidMarkerRE finds citation markers in text: [PMID:23150908] or [PMID: 23150908].
var pmidMarkerRE = regexp.MustCompile(`\[PMID:\s*([0-9]{1,9})\]`)

// paperRef is the ref of the paper artifact for a PubMed id.
func paperRef(pmid string) ref.Ref { return ref.Ref{Type: "paper", ID: "PMID:" + pmid} }

// validatePMIDCitations refuses text that cites a PMID with no paper artifact:
// every [PMID:NNNN] marker in the title or any string of content must resolve.
func validatePMIDCitations(ctx context.Context, c *Checker, in *ValidationInput) ([]problem.Detail, error) {
	found := map[string]string{} // pmid -> first path it appears at
	var order []string
	note := func(path, text string) {
		for _, m := range pmidMarkerRE.FindAllStringSubmatch(text, -1) {
			if _, seen := found[m[1]]; !seen {
				found[m[1]] = path
				order = append(order, m[1])
			}
		}
	}
	note("title", in.Title)
	walkStrings(in.Decoded(), nil, func(path []string, s string) { note(schema.JoinPath("content", path), s) })
	if len(order) == 0 {
		return nil, nil
	}
	refs := make([]ref.Ref, len(order))
	for i, p := range order {
		refs[i] = paperRef(p)
	}
	exists, err := c.Existing(ctx, refs)
	if err != nil {
		return nil, err
	}
	var out []problem.Detail
	for _, p := range order {
		if !exists[paperRef(p).String()] {
			out = append(out, problem.Detail{Path: found[p], Constraint: "resolve_pmid_citations",
				Message:    fmt.Sprintf("cites [PMID:%s] but there is no %s", p, paperRef(p)),
				Value:      mustJSON("PMID:" + p),
				Suggestion: fmt.Sprintf("create the paper first: createArtifact(type: \"paper\", id: \"PMID:%s\", …)", p)})
		}
	}
	return out, nil
}

// validateLinkTargets refuses content whose reference fields ("format": "ref"
// in the content schema) name artifacts that do not exist.
func validateLinkTargets(ctx context.Context, c *Checker, in *ValidationInput) ([]problem.Detail, error) {
	type site struct {
		path string
		r    ref.Ref
	}
	var sites []site
	for _, p := range in.Type.RefPaths() {
		vals, paths := schema.ValuesAt(in.Decoded(), p)
		for i, v := range vals {
			s, ok := v.(string)
			if !ok {
				continue
			}
			r, err := ref.Parse(s)
			if err != nil {
				continue // the content schema's format check reports it
			}
			sites = append(sites, site{schema.JoinPath("content", paths[i]), r})
		}
	}
	return missingRefs(ctx, c, "link_targets_exist", sites, func(s site) (string, ref.Ref) { return s.path, s.r })
}

func missingRefs[S any](ctx context.Context, c *Checker, constraint string, sites []S, get func(S) (string, ref.Ref)) ([]problem.Detail, error) {
	if len(sites) == 0 {
		return nil, nil
	}
	refs := make([]ref.Ref, len(sites))
	for i, s := range sites {
		_, refs[i] = get(s)
	}
	exists, err := c.Existing(ctx, refs)
	if err != nil {
		return nil, err
	}
	var out []problem.Detail
	for _, s := range sites {
		path, r := get(s)
		if !exists[r.String()] {
			msg := "no artifact " + r.String()
			if r.IsPinned() {
				msg = "no artifact version " + r.String()
			}
			out = append(out, problem.Field(path, constraint, msg, r.String()))
		}
	}
	return out, nil
}

// validateNoSelfSupersede refuses an artifact superseding itself.
func validateNoSelfSupersede(_ context.Context, _ *Checker, in *ValidationInput) ([]problem.Detail, error) {
	if in.Operation != OpSupersede || in.Replacement == nil || in.Prev == nil {
		return nil, nil
	}
	if in.Replacement.Type == in.Prev.Type && in.Replacement.ID == in.Prev.ID {
		return []problem.Detail{problem.Field("replacement", "no_self_supersede", "an artifact cannot supersede itself", in.Replacement.String())}, nil
	}
	return nil, nil
}

// validateEvidence refuses evidence that points nowhere: under every content
// property named evidence*, each ref, "PMID:n" string, {"ref": …} or
// {"pmid": …} must resolve to an artifact (a PMID to its paper).
func validateEvidence(ctx context.Context, c *Checker, in *ValidationInput) ([]problem.Detail, error) {
	type site struct {
		path string
		r    ref.Ref
	}
	var sites []site
	obj, _ := in.Decoded().(map[string]any)
	keys := make([]string, 0, len(obj))
	for k := range obj {
		if strings.HasPrefix(k, "evidence") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		walkEvidence(obj[k], []string{k}, func(path []string, r ref.Ref) {
			sites = append(sites, site{schema.JoinPath("content", path), r})
		})
	}
	return missingRefs(ctx, c, "evidence_supports_claim", sites, func(s site) (string, ref.Ref) { return s.path, s.r })
}

var pmidRE = regexp.MustCompile(`^(?:PMID:\s*)?([0-9]{1,9})$`)

func walkEvidence(v any, path []string, found func([]string, ref.Ref)) {
	switch x := v.(type) {
	case string:
		if m := pmidRE.FindStringSubmatch(x); m != nil && strings.HasPrefix(x, "PMID") {
			found(path, paperRef(m[1]))
		} else if r, err := ref.Parse(x); err == nil && !strings.Contains(x, " ") {
			found(path, r)
		}
	case []any:
		for i, item := range x {
			walkEvidence(item, append(append([]string{}, path...), fmt.Sprint(i)), found)
		}
	case map[string]any:
		if p, ok := x["pmid"].(string); ok {
			if m := pmidRE.FindStringSubmatch(p); m != nil {
				found(append(append([]string{}, path...), "pmid"), paperRef(m[1]))
			}
		}
		if s, ok := x["ref"].(string); ok {
			if r, err := ref.Parse(s); err == nil {
				found(append(append([]string{}, path...), "ref"), r)
			}
		}
	}
}

func validateSchemaCompiles(_ context.Context, _ *Checker, in *ValidationInput) ([]problem.Detail, error) {
	if _, err := schema.Compile(in.Content, 0, ""); err != nil {
		return []problem.Detail{problem.Field("content", "schema_compiles", err.Error(), nil)}, nil
	}
	return nil, nil
}

// transition returns the lifecycle move a write makes, if any.
func transition(in *ValidationInput) (from, to string, moving bool) {
	if in.State == nil {
		return "", "", false
	}
	if in.Prev != nil {
		from = deref(in.Prev.LifecycleState)
	} else if in.Type.Doc.Lifecycle.Initial != nil {
		from = *in.Type.Doc.Lifecycle.Initial
	}
	return from, *in.State, *in.State != from
}

// validateTransitionDeclared refuses a lifecycle move the type does not declare.
func validateTransitionDeclared(_ context.Context, _ *Checker, in *ValidationInput) ([]problem.Detail, error) {
	from, to, moving := transition(in)
	if !moving || declared(in.Type, from, to) {
		return nil, nil
	}
	return []problem.Detail{problem.Field("lifecycleState", "lifecycle_transition_allowed",
		fmt.Sprintf("the %s lifecycle has no transition from %q to %q", in.Type.Name(), from, to), to)}, nil
}

// validateTransitionRoles refuses a declared move the actor's roles do not allow.
// The creator of an artifact holds the role "owner".
func validateTransitionRoles(_ context.Context, _ *Checker, in *ValidationInput) ([]problem.Detail, error) {
	from, to, moving := transition(in)
	if !moving || !declared(in.Type, from, to) {
		return nil, nil
	}
	owner := in.Prev == nil || in.Prev.CreatedBy == in.Request.Actor.ID
	if transitionAllowed(in.Type, from, to, rolesOf(in.Request, owner)) {
		return nil, nil
	}
	var need []string
	for _, tr := range in.Type.Doc.Lifecycle.Transitions {
		if (tr.From == from || tr.From == "*") && tr.To == to {
			need = append(need, tr.Roles...)
		}
	}
	return []problem.Detail{problem.Field("lifecycleState", "actor_authorized_for_lifecycle",
		fmt.Sprintf("moving from %q to %q needs one of the roles %s", from, to, strings.Join(need, ", ")), to)}, nil
}

// lifecycleViolation turns lifecycle refusals into the LIFECYCLE_VIOLATION problem,
// listing the states the actor may move to instead.
func lifecycleViolation(t *schema.Type, in *ValidationInput, ds []problem.Detail) *problem.Problem {
	from, to, _ := transition(in)
	owner := in.Prev == nil || in.Prev.CreatedBy == in.Request.Actor.ID
	roles := rolesOf(in.Request, owner)
	var allowed []string
	for _, st := range t.Doc.Lifecycle.States {
		if st != from && transitionAllowed(t, from, st, roles) {
			allowed = append(allowed, st)
		}
	}
	r := ref.Ref{Type: t.Name(), ID: in.ID}
	p := problem.New(problem.LifecycleViolation, "%s cannot move from %q to %q: %s", r, from, to, ds[0].Message)
	p.Details = ds
	p.Refs = []string{r.String()}
	p.Extra = &LifecycleInfo{From: from, To: to, Allowed: allowed}
	return p
}

// walkStrings calls fn with every string in a decoded JSON value and its path.
func walkStrings(v any, path []string, fn func([]string, string)) {
	switch x := v.(type) {
	case string:
		fn(path, x)
	case []any:
		for i, item := range x {
			walkStrings(item, append(append([]string{}, path...), fmt.Sprint(i)), fn)
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			walkStrings(x[k], append(append([]string{}, path...), k), fn)
		}
	}
}
