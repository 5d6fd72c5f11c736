package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/schema"
)

// Operations a validator may be asked about.
const (
	OpCreate    = "create"
	OpUpdate    = "update"
	OpSupersede = "supersede"
)

// ValidationInput is what a named validator sees of a write.
type ValidationInput struct {
	Operation string
	Type      *schema.Type
	ID        string
	Title     string
	Content   json.RawMessage
	State     *string
	// Prev is the version being replaced; nil on create.
	Prev *Artifact
	// Replacement is the artifact a supersede names; nil otherwise.
	Replacement *ref.Ref
	// Request is the request making the write.
	Request *request.Context

	decoded any
}

// Decoded returns the content as decoded JSON (numbers as json.Number).
func (in *ValidationInput) Decoded() any {
	if in.decoded == nil && len(in.Content) > 0 {
		_ = decodeJSON(in.Content, &in.decoded)
	}
	return in.decoded
}

// ValidatorFunc checks one rule and returns every violation, each naming the
// offending value. An error is a failure to check (the database), not a refusal.
type ValidatorFunc func(ctx context.Context, c *Checker, in *ValidationInput) ([]problem.Detail, error)

type validator struct {
	fn ValidatorFunc
	// code is what a refusal becomes: VALIDATION_FAILED, or LIFECYCLE_VIOLATION
	// for the lifecycle validators.
	code problem.Code
}

// validators are the named Go validators schema documents may list.
var validators = map[string]validator{
	"schema_compiles":                {validateSchemaCompiles, problem.ValidationFailed},
	"resolve_pmid_citations":         {validatePMIDCitations, problem.ValidationFailed},
	"link_targets_exist":             {validateLinkTargets, problem.ValidationFailed},
	"no_self_supersede":              {validateNoSelfSupersede, problem.ValidationFailed},
	"evidence_supports_claim":        {validateEvidence, problem.ValidationFailed},
	"tool_manifest_valid":            {validateToolManifest, problem.ValidationFailed},
	"skill_tools_active":             {validateSkillTools, problem.ValidationFailed},
	"lifecycle_transition_allowed":   {validateTransitionDeclared, problem.LifecycleViolation},
	"actor_authorized_for_lifecycle": {validateTransitionRoles, problem.LifecycleViolation},
}

// ValidatorNames lists the validators this build knows.
func ValidatorNames() []string {
	names := make([]string, 0, len(validators))
	for n := range validators {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Checker gives validators read access inside the write's transaction, so an
// artifact created earlier in the same batch counts as existing.
type Checker struct {
	s *Store
	w *writer
}

// known marks in out the refs that name an artifact the server read for this
// request (writeOp.Known), unpinned or pinned to the version read, and
// returns the others.
func (c *Checker) known(refs []ref.Ref, out map[string]bool) []ref.Ref {
	if len(c.w.op.Known) == 0 {
		return refs
	}
	rest := refs[:0:0]
	for _, r := range refs {
		found := false
		for _, a := range c.w.op.Known {
			if a != nil && a.Type == r.Type && a.ID == r.ID && (!r.IsPinned() || r.Hash == a.ContentHash) {
				found = true
				break
			}
		}
		if found {
			out[r.String()] = true
			out[r.Unpinned().String()] = true
		} else {
			rest = append(rest, r)
		}
	}
	return rest
}

// Existing reports which of refs name an artifact the request's actor may read
// (and, for pinned refs, that version). It answers in one statement for the
// unpinned ones, and one more when some are participants-only.
func (c *Checker) Existing(ctx context.Context, refs []ref.Ref) (map[string]bool, error) {
	out := map[string]bool{}
	refs = c.known(refs, out)
	if len(refs) == 0 {
		return out, nil
	}
	types := make([]string, len(refs))
	ids := make([]string, len(refs))
	for i, r := range refs {
		types[i], ids[i] = r.Type, r.ID
	}
	rows, err := c.w.q.ArtifactExistMany(ctx, types, ids)
	if err != nil {
		return nil, fmt.Errorf("check refs: %w", err)
	}
	arts := make([]*Artifact, len(rows))
	for i, r := range rows {
		arts[i] = &Artifact{PK: r.Pk, Type: r.Type, ID: r.ID, Visibility: r.Visibility, CreatedBy: r.CreatedBy}
	}
	// What the actor may not read does not exist for it: no validator may tell
	// whether another's message is there. A server operation's content refers
	// to what the server keeps, whoever it acts for (the call of a packet an
	// agent claims, which only its caller and the tool's owner read).
	var hidden map[int64]bool
	if operations[c.w.op.Operation] != opServer {
		var err error
		if hidden, err = c.s.hiddenWith(ctx, c.w.q, arts); err != nil {
			return nil, err
		}
	}
	for _, a := range arts {
		if !hidden[a.PK] {
			out[a.Type+":"+a.ID] = true
		}
	}
	for _, r := range refs {
		if !r.IsPinned() || !out[r.Unpinned().String()] {
			continue
		}
		row, err := c.w.q.ArtifactGetByTypeID(ctx, r.Type, r.ID)
		if err != nil {
			return nil, fmt.Errorf("check %s: %w", r, err)
		}
		if row.ContentHash == r.Hash {
			out[r.String()] = true
			continue
		}
		if _, err := c.w.q.ArtifactVersionGetByHash(ctx, row.Pk, r.Hash); err == nil {
			out[r.String()] = true
		}
	}
	return out, nil
}

// runValidators runs the type's named validators in order. A validator in shadow
// mode only logs what it would refuse. Refusals of ordinary validators become one
// VALIDATION_FAILED; those of the lifecycle validators a LIFECYCLE_VIOLATION.
func (s *Store) runValidators(ctx context.Context, w *writer, t *schema.Type, in *ValidationInput) error {
	in.Type, in.Request = t, w.rc
	c := &Checker{s: s, w: w}
	var invalid, lifecycle []problem.Detail
	for _, name := range t.Doc.Validators {
		v, ok := validators[name]
		if !ok {
			// Registration refuses such a document (schema.Document.CheckKnown); one
			// registered by another build is not written past a rule this one
			// cannot check.
			s.log.Error("schema names a validator this build lacks; refusing the write", "validator", name, "type", t.Name(), "request_id", w.rc.RequestID)
			return problem.Invalid(problem.Detail{Path: "type", Constraint: "known_validator", Value: mustJSON(t.Name()),
				Message:    fmt.Sprintf("the %s schema (version %d) names the validator %q, which this server does not have; nothing was written", t.Name(), t.Version, name),
				Suggestion: "register a schema version without it, or run a server build that has it"})
		}
		ds, err := v.fn(ctx, c, in)
		if err != nil {
			return fmt.Errorf("validator %s: %w", name, err)
		}
		if len(ds) == 0 {
			continue
		}
		if s.shadow[name] {
			msgs := make([]string, len(ds))
			for i, d := range ds {
				msgs[i] = d.Path + ": " + d.Message
			}
			s.log.Warn("shadow validator would refuse write", "validator", name, "type", t.Name(), "id", in.ID,
				"operation", in.Operation, "request_id", w.rc.RequestID, "problems", strings.Join(msgs, "; "))
			continue
		}
		for i := range ds {
			if ds[i].Constraint == "" {
				ds[i].Constraint = name
			}
		}
		if v.code == problem.LifecycleViolation {
			lifecycle = append(lifecycle, ds...)
		} else {
			invalid = append(invalid, ds...)
		}
	}
	if len(invalid) > 0 {
		return problem.Invalid(invalid...)
	}
	if len(lifecycle) > 0 {
		return lifecycleViolation(t, in, lifecycle)
	}
	return nil
}
