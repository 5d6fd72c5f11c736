package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

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
	if !s.origins.Allowed(r) {
		// The transport's MUST: a page of another origin is refused, with or
		// without a token (a DNS-rebound page, a page using a leaked token).
		writeRPCError(w, http.StatusForbidden, nil, jsonrpc.CodeInvalidRequest,
			"forbidden: Origin "+strconv.Quote(r.Header.Get("Origin"))+" may not call /mcp; the operator lists the origins that may in --allowed-origins")
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
	if id, method, ok := unknownMethod(r); ok {
		// An unknown method is JSON-RPC's -32601 on every revision (the SDK
		// answers a plain-text 400 before 2026-07-28).
		writeRPCError(w, http.StatusOK, id, jsonrpc.CodeMethodNotFound, "method not found: "+strconv.Quote(method)+" is not an MCP method this server serves")
		return
	}
	// The request ends when the client goes or the server closes (Close), and
	// carries its credentials for what the SDK hands no headers (resources.go).
	ctx, cancel := context.WithCancel(context.WithValue(r.Context(), credentialsKey{},
		credentials{authorization: r.Header.Get("Authorization"), cookie: r.Header.Get("Cookie"), csrf: r.Header.Get("X-CSRF-Token")}))
	ctx = withAnswerBudget(ctx, s.opts.MaxResponseBytes)
	defer cancel()
	defer context.AfterFunc(s.closing, cancel)()
	s.http.ServeHTTP(w, r.WithContext(ctx))
}

// methods are the JSON-RPC methods the MCP servers handle (the SDK's, with
// no custom method added): requests and notifications.
var methods = map[string]bool{
	"initialize": true, "ping": true, "server/discover": true, "completion/complete": true, "logging/setLevel": true,
	"tools/list": true, "tools/call": true, "prompts/list": true, "prompts/get": true,
	"resources/list": true, "resources/templates/list": true, "resources/read": true,
	"resources/subscribe": true, "resources/unsubscribe": true, "subscriptions/listen": true,
}

// unknownMethod reads r's body, when it is one JSON-RPC request (not a
// batch, not a notification), and reports its id and method if the method
// is not one this server serves. The body is left for the next reader.
func unknownMethod(r *http.Request) (id any, method string, ok bool) {
	if r.Method != http.MethodPost || r.Body == nil {
		return nil, "", false
	}
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return nil, "", false
	}
	var msg struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  *string         `json:"method"`
	}
	if bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) || json.Unmarshal(body, &msg) != nil ||
		msg.JSONRPC != "2.0" || msg.Method == nil || len(msg.ID) == 0 || string(msg.ID) == "null" || methods[*msg.Method] {
		return nil, "", false
	}
	var v any
	if json.Unmarshal(msg.ID, &v) != nil {
		return nil, "", false
	}
	switch v.(type) {
	case string, float64:
		return msg.ID, *msg.Method, true
	}
	return nil, "", false // an id JSON-RPC does not allow: the SDK says so
}

// writeRPCError writes a JSON-RPC error response (id nil: none).
func writeRPCError(w http.ResponseWriter, status int, id any, code int64, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if id == nil {
		id = json.RawMessage("null")
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
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
