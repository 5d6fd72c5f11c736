package model

import (
	"time"

	"github.com/scidex/substrate/internal/store"
)

// Handle is what a handle resolves to (graph/aliases.graphqls); Actor and
// Entry are resolved from the ids it keeps.
type Handle struct {
	Name       string
	Registered bool
	State      HandleState
	ActorID    string
	Role       *string
	RenamedTo  *string
	RenamedAt  *time.Time
	ClaimedAt  *time.Time
	H          *store.Handle
}
