package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/session"
	"github.com/scidex/substrate/internal/store"
)

// withRequest gives a GraphQL request its id, its size limit and its identity.
// A token that does not verify ends the request with 401; no token makes the
// request anonymous, which authorizeOperation then allows or refuses.
func (s *Server) withRequest(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rid := request.NewID()
		w.Header().Set("X-Request-Id", rid)
		if r.ContentLength > s.opts.MaxBodyBytes {
			writeError(w, http.StatusRequestEntityTooLarge, problem.ValidationFailed, rid,
				"the request body is larger than the limit of "+strconv.FormatInt(s.opts.MaxBodyBytes, 10)+" bytes")
			return
		}
		if r.Body != nil && r.Method == http.MethodPost {
			// Read the body here so an oversized one without Content-Length is also a 413.
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				writeError(w, http.StatusRequestEntityTooLarge, problem.ValidationFailed, rid,
					"the request body is larger than the limit of "+strconv.FormatInt(s.opts.MaxBodyBytes, 10)+" bytes")
				return
			}
			if err != nil {
				writeError(w, http.StatusBadRequest, problem.ValidationFailed, rid, "could not read the request body")
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		now := s.opts.Now()
		rc := &request.Context{RequestID: rid, Now: request.Clock(now), Anonymous: true,
			Actor: auth.Actor{ID: "anonymous", Kind: "anonymous"}}
		if s.opts.AnonymousRead {
			rc.Actor.Permissions = []auth.Permission{auth.PermViewer}
		}
		token, cookie := auth.TokenSource(r)
		if token != "" {
			// A browser attaches the cookie to requests of any page: only our
			// own pages (and listed origins) may use it, and a write must echo
			// the CSRF token.
			if cookie {
				if refusal := session.Check(r, s.origins); refusal != "" {
					writeError(w, http.StatusForbidden, problem.Unauthenticated, rid, string(refusal))
					return
				}
			}
			p, err := s.tokens.verify(r.Context(), s.opts.Verifier, token, now)
			if err != nil {
				s.log.InfoContext(r.Context(), "token refused", "request_id", rid, "reason", auth.Reason(err), "cause", causeOf(err))
				w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
				writeError(w, http.StatusUnauthorized, problem.Unauthenticated, rid, "unauthenticated: "+auth.Reason(err))
				return
			}
			rc = request.FromPrincipal(p, rid, now)
		}
		ctx := store.WithStatementCounter(request.With(r.Context(), rc), &store.StatementCounter{})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// authorizeOperation refuses operations an anonymous request may not run:
// every mutation and subscription, and queries unless anonymous reads are on.
// Introspection alone needs no token, so GraphiQL can show the schema at once.
func (s *Server) authorizeOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	rc := request.From(ctx)
	if rc == nil || !rc.Anonymous {
		return next(ctx)
	}
	op := graphql.GetOperationContext(ctx)
	allowed := op.Operation != nil && op.Operation.Operation == ast.Query && (s.opts.AnonymousRead || introspectionOnly(op))
	if allowed {
		return next(ctx)
	}
	err := &gqlerror.Error{Message: "unauthenticated: this operation needs a token (Authorization: Bearer <jwt>; mint one with `scidex token`)",
		Extensions: map[string]any{"code": string(problem.Unauthenticated), "requestId": rc.RequestID}}
	return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{err}})
}

func introspectionOnly(op *graphql.OperationContext) bool {
	for _, sel := range op.Operation.SelectionSet {
		f, ok := sel.(*ast.Field)
		if !ok || (f.Name != "__schema" && f.Name != "__type" && f.Name != "__typename") {
			return false
		}
	}
	return true
}

func writeError(w http.ResponseWriter, status int, code problem.Code, rid, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]any{{
		"message": msg, "extensions": map[string]any{"code": string(code), "requestId": rid},
	}}})
}

func causeOf(err error) string {
	var ve *auth.VerifyError
	if errors.As(err, &ve) && ve.Cause() != nil {
		return ve.Cause().Error()
	}
	return ""
}
