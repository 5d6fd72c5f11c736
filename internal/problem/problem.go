// Package problem is the closed set of failures a client can be told about.
//
// The write path returns a *Problem for anything the client did or can act on
// (bad input, a stale base, a missing target); the GraphQL layer turns it into the
// matching union member. Anything else is an internal error: logged with the
// request id, never sent.
package problem

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Code is one of the error codes of the contract's ErrorCode enum.
type Code string

// The closed set of codes.
const (
	ValidationFailed    Code = "VALIDATION_FAILED"
	VersionConflict     Code = "VERSION_CONFLICT"
	NotFound            Code = "NOT_FOUND"
	PermissionDenied    Code = "PERMISSION_DENIED"
	RateLimited         Code = "RATE_LIMITED"
	LifecycleViolation  Code = "LIFECYCLE_VIOLATION"
	LinkTargetMissing   Code = "LINK_TARGET_MISSING"
	MutabilityViolation Code = "MUTABILITY_VIOLATION"
	IdempotencyKeyReuse Code = "IDEMPOTENCY_KEY_REUSE"
	Unauthenticated     Code = "UNAUTHENTICATED"
	InternalError       Code = "INTERNAL_ERROR"
	BudgetExceeded      Code = "BUDGET_EXCEEDED"
)

// Codes is the closed set, in the order above (metrics label errors by it).
var Codes = []Code{ValidationFailed, VersionConflict, NotFound, PermissionDenied, RateLimited, LifecycleViolation,
	LinkTargetMissing, MutabilityViolation, IdempotencyKeyReuse, Unauthenticated, InternalError, BudgetExceeded}

// Detail is one thing wrong with the input: where, which rule, what we received.
type Detail struct {
	Path       string          `json:"path"`
	Constraint string          `json:"constraint"`
	Message    string          `json:"message"`
	Value      json.RawMessage `json:"valueReceived,omitempty"`
	Suggestion string          `json:"suggestion,omitempty"`
}

// Problem is a failure the client may see. Only the fields its Code uses are set.
type Problem struct {
	Code    Code     `json:"code"`
	Message string   `json:"message"`
	Details []Detail `json:"details,omitempty"`
	// Refs names the artifacts involved: the missing one for NOT_FOUND, the
	// missing targets for LINK_TARGET_MISSING, the artifact for the others.
	Refs       []string      `json:"refs,omitempty"`
	RetryAfter time.Duration `json:"retryAfter,omitempty"`
	// Extra carries code-specific data (the conflict of a VERSION_CONFLICT, the
	// allowed transitions of a LIFECYCLE_VIOLATION) for the GraphQL layer.
	Extra any `json:"-"`
}

func (p *Problem) Error() string {
	if len(p.Details) == 0 {
		return fmt.Sprintf("%s: %s", p.Code, p.Message)
	}
	parts := make([]string, len(p.Details))
	for i, d := range p.Details {
		parts[i] = d.Path + ": " + d.Message
	}
	return fmt.Sprintf("%s: %s (%s)", p.Code, p.Message, strings.Join(parts, "; "))
}

// Retryable reports whether sending the same request again later can succeed.
func (p *Problem) Retryable() bool {
	switch p.Code {
	case RateLimited, VersionConflict, InternalError:
		return true
	case BudgetExceeded: // when spending starts again in a new period
		return p.RetryAfter > 0
	}
	return false
}

// As returns the *Problem in err's chain, if any.
func As(err error) (*Problem, bool) {
	var p *Problem
	ok := errors.As(err, &p)
	return p, ok
}

// Invalid builds a VALIDATION_FAILED problem from its details.
func Invalid(details ...Detail) *Problem {
	msg := "the input is invalid"
	if len(details) == 1 {
		msg = details[0].Path + ": " + details[0].Message
	} else if len(details) > 1 {
		msg = fmt.Sprintf("the input has %d problems", len(details))
	}
	return &Problem{Code: ValidationFailed, Message: msg, Details: details}
}

// Field builds one Detail, encoding the received value as JSON.
func Field(path, constraint, message string, value any) Detail {
	d := Detail{Path: path, Constraint: constraint, Message: message}
	if value != nil {
		if raw, ok := value.(json.RawMessage); ok {
			d.Value = raw
		} else if b, err := json.Marshal(value); err == nil {
			d.Value = b
		}
	}
	return d
}

// New builds a problem with a code and a message.
func New(code Code, format string, args ...any) *Problem {
	return &Problem{Code: code, Message: fmt.Sprintf(format, args...)}
}

// NotFoundRef reports that ref names no artifact.
func NotFoundRef(ref string) *Problem {
	return &Problem{Code: NotFound, Message: fmt.Sprintf("no artifact %s", ref), Refs: []string{ref}}
}
