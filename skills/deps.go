package skills

import "github.com/scidex/substrate/internal/store"

// Deps is what the skills' functions use beyond their arguments: the store
// through which a skill that draws a figure records it, as the caller.
type Deps struct {
	Store *store.Store
}
