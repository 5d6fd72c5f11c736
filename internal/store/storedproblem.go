package store

import (
	"time"

	"github.com/scidex/substrate/internal/problem"
)

// StoredProblem is a problem in a form that survives JSON, so that a batch's
// stored result (its idempotency record) replays its problems whole.
type StoredProblem struct {
	Code       problem.Code     `json:"code"`
	Message    string           `json:"message"`
	Details    []problem.Detail `json:"details,omitempty"`
	Refs       []string         `json:"refs,omitempty"`
	RetryAfter time.Duration    `json:"retryAfter,omitempty"`
	Lifecycle  *LifecycleInfo   `json:"lifecycle,omitempty"`
	Conflict   *Conflict        `json:"conflict,omitempty"`
	Extra      string           `json:"extra,omitempty"`
}

func storeProblem(p *problem.Problem) *StoredProblem {
	sp := &StoredProblem{Code: p.Code, Message: p.Message, Details: p.Details, Refs: p.Refs, RetryAfter: p.RetryAfter}
	switch x := p.Extra.(type) {
	case *LifecycleInfo:
		sp.Lifecycle = x
	case *Conflict:
		sp.Conflict = x
	case string:
		sp.Extra = x
	}
	return sp
}

// Problem turns the stored form back into a problem.
func (sp *StoredProblem) Problem() *problem.Problem {
	p := &problem.Problem{Code: sp.Code, Message: sp.Message, Details: sp.Details, Refs: sp.Refs, RetryAfter: sp.RetryAfter}
	switch {
	case sp.Lifecycle != nil:
		p.Extra = sp.Lifecycle
	case sp.Conflict != nil:
		p.Extra = sp.Conflict
	case sp.Extra != "":
		p.Extra = sp.Extra
	}
	return p
}
