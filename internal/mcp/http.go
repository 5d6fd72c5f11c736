package mcp

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/request"
)

// ServeHTTP serves /mcp: MCP streamable HTTP, stateless (each POST stands
// alone, which is what lets the 2026-07-28 revision negotiate), answered in
// JSON. It must sit behind the server's request middleware, which has
// verified the bearer token (a token that does not verify is a 401 there) and
// built the request context.
//
// A request with no token, when anonymous reads are off, is refused here with
// HTTP 401, a WWW-Authenticate challenge and the GraphQL-style error body,
// rather than let through to list tools that would refuse every call: an MCP
// client reacts to a 401 by asking its user for credentials.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc := request.From(r.Context())
	if rc == nil {
		s.opts.Logger.Error("mcp: /mcp is mounted without the request middleware")
		writeError(w, http.StatusInternalServerError, problem.InternalError, "", "internal error")
		return
	}
	if rc.Anonymous && !rc.Actor.Has(auth.PermViewer) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="scidex"`)
		writeError(w, http.StatusUnauthorized, problem.Unauthenticated, rc.RequestID,
			"unauthenticated: /mcp needs a token (Authorization: Bearer <jwt>; mint one with `scidex token`)")
		return
	}
	if s.serveFast(w, r) { // the common tools/call, answered as the SDK would (fastpath.go)
		return
	}
	// The request ends when the client goes or the server closes (Close), and
	// carries its credentials for what the SDK hands no headers (resources.go).
	ctx, cancel := context.WithCancel(context.WithValue(r.Context(), credentialsKey{},
		credentials{authorization: r.Header.Get("Authorization"), cookie: r.Header.Get("Cookie")}))
	defer cancel()
	defer context.AfterFunc(s.closing, cancel)()
	s.http.ServeHTTP(w, r.WithContext(ctx))
}

func writeError(w http.ResponseWriter, status int, code problem.Code, rid, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	ext := map[string]any{"code": string(code)}
	if rid != "" {
		ext["requestId"] = rid
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]any{{"message": msg, "extensions": ext}}})
}
