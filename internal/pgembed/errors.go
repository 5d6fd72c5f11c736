package pgembed

import "errors"

// ErrNoBinaries is matched (via errors.Is) by the error Start returns when
// it cannot find PostgreSQL server binaries it can use. The error's message
// says where it looked and how to fix the problem.
var ErrNoBinaries = errors.New("PostgreSQL server binaries not found")

// ErrInUse is matched (via errors.Is) by the error Start returns when
// another live process already owns the cluster directory.
var ErrInUse = errors.New("data directory is in use by another scidex process")

// hintError is an error with a complete, user-facing message that still
// matches a sentinel error with errors.Is.
type hintError struct {
	msg  string
	kind error
}

func (e *hintError) Error() string { return e.msg }

func (e *hintError) Unwrap() error { return e.kind }
