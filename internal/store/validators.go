package store

import (
	"context"
	"encoding/json"
	"sort"
	"strings"

	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/schema"
)

// ValidationInput is what a named validator sees of a write.
type ValidationInput struct {
	Type    *schema.Type
	ID      string
	Title   string
	Content json.RawMessage
	State   *string
	// Prev is the version being replaced, nil on create.
	Prev *Artifact
	// Request is the request making the write.
	Request *request.Context
}

// ValidatorFunc checks one rule and returns what violates it. It may read the
// database through tx-bound queries via the Checker.
type ValidatorFunc func(ctx context.Context, c *Checker, in *ValidationInput) []problem.Detail

// Checker gives validators read access inside the write's transaction.
type Checker struct {
	s *Store
	w *writer
}

// validators are the named Go validators schema documents may list.
var validators = map[string]ValidatorFunc{
	"schema_compiles": validateSchemaCompiles,
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

// runValidators runs the type's named validators in order. A validator in shadow
// mode only logs what it would refuse.
func (s *Store) runValidators(ctx context.Context, w *writer, t *schema.Type, in *ValidationInput) error {
	in.Type, in.Request = t, w.rc
	c := &Checker{s: s, w: w}
	var out []problem.Detail
	for _, name := range t.Doc.Validators {
		fn, ok := validators[name]
		if !ok {
			s.log.Debug("validator not in this build", "validator", name, "type", t.Name())
			continue
		}
		ds := fn(ctx, c, in)
		if len(ds) == 0 {
			continue
		}
		if s.shadow[name] {
			msgs := make([]string, len(ds))
			for i, d := range ds {
				msgs[i] = d.Path + ": " + d.Message
			}
			s.log.Warn("shadow validator would refuse write", "validator", name, "type", t.Name(), "id", in.ID,
				"request_id", w.rc.RequestID, "problems", strings.Join(msgs, "; "))
			continue
		}
		for i := range ds {
			if ds[i].Constraint == "" {
				ds[i].Constraint = name
			}
		}
		out = append(out, ds...)
	}
	if len(out) > 0 {
		return problem.Invalid(out...)
	}
	return nil
}

func validateSchemaCompiles(_ context.Context, _ *Checker, in *ValidationInput) []problem.Detail {
	if _, err := schema.Compile(in.Content, 0, ""); err != nil {
		return []problem.Detail{problem.Field("content", "schema_compiles", err.Error(), nil)}
	}
	return nil
}
