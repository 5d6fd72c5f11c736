// Package resolvers implements the GraphQL schema. The *.resolvers.go files hold
// only resolver methods (gqlgen writes their skeletons); shared helpers live in
// the other files of the package.
package resolvers

import (
	"log/slog"

	"github.com/scidex/substrate/internal/store"
)

// Resolver holds the dependencies every resolver uses.
type Resolver struct {
	Store  *store.Store
	Logger *slog.Logger
}
