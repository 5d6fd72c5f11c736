// Package resolvers implements the GraphQL schema. The *.resolvers.go files hold
// only resolver methods (gqlgen writes their skeletons); shared helpers live in
// the other files of the package.
package resolvers

import (
	"context"
	"log/slog"

	"github.com/scidex/substrate/internal/dispatch"
	"github.com/scidex/substrate/internal/event"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/internal/toolreg"
	"github.com/scidex/substrate/internal/workpacket"
)

// Resolver holds the dependencies every resolver uses.
type Resolver struct {
	Store     *store.Store
	Logger    *slog.Logger
	Hub       *event.Hub
	Consumers *event.Consumers
	// Dispatch runs tools (invokeTool, cancelToolCall).
	Dispatch *dispatch.Dispatcher
	// Registrar registers them (registerTool).
	Registrar *toolreg.Registrar
	// Packets runs the work packets skill calls wait on (claimWorkPacket, …).
	Packets *workpacket.Packets
	// CloseConn ends a subscriber's websocket with a code and reason, or its
	// SSE stream with the reason (set by the server; nil outside it).
	CloseConn func(ctx context.Context, code int, reason string) bool
}
