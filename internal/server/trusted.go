package server

import (
	"context"
	"log/slog"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/documents"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/request"
)

// trustedDocuments runs, for actors without the admin permission, only the
// registered documents (production mode, internal/documents): a request
// sends a registered document's text, or only its hash in the
// persistedQuery extension, and the text comes from the registry. Admins
// run anything (GraphiQL, ad hoc queries). It mutates the parameters before
// the automatic persisted queries do, so a hash a client offered that cache
// cannot stand in for a registered one.
type trustedDocuments struct {
	store *documents.Store
	log   *slog.Logger
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = trustedDocuments{}

func (trustedDocuments) ExtensionName() string                   { return "TrustedDocuments" }
func (trustedDocuments) Validate(graphql.ExecutableSchema) error { return nil }

func (t trustedDocuments) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	rc := request.From(ctx)
	if rc != nil && rc.Actor.Has(auth.PermAdmin) {
		return nil
	}
	offered := persistedHash(p.Extensions)
	if p.Query == "" {
		if offered == "" {
			return nil // the executor says there is no query
		}
		text, ok, err := t.store.Lookup(ctx, strings.ToLower(offered))
		if err != nil {
			return t.internalError(rc, err)
		}
		if !ok {
			// What automatic persisted queries answer (the message clients
			// look for), so that a client sends the text next; which is
			// then held to the registry too.
			return &gqlerror.Error{Message: "PersistedQueryNotFound",
				Extensions: map[string]any{"code": string(problem.ValidationFailed), "reason": "PERSISTED_QUERY_NOT_FOUND", "requestId": requestID(rc)}}
		}
		p.Query = text
		return nil
	}
	hash := documents.Hash(p.Query)
	_, ok, err := t.store.Lookup(ctx, hash)
	if err != nil {
		return t.internalError(rc, err)
	}
	if !ok {
		return &gqlerror.Error{
			Message: "this server runs in production mode, where actors without the admin permission run only registered documents, " +
				"and this one (sha256 " + hash + ") is not registered: an operator registers it with `scidex documents push <file>`",
			Extensions: map[string]any{"code": string(problem.PermissionDenied), "reason": "UNTRUSTED_DOCUMENT", "documentHash": hash, "requestId": requestID(rc)},
		}
	}
	return nil
}

// persistedHash is the persistedQuery extension's sha256Hash ("" without).
func persistedHash(ext map[string]any) string {
	pq, _ := ext["persistedQuery"].(map[string]any)
	h, _ := pq["sha256Hash"].(string)
	return h
}

func requestID(rc *request.Context) string {
	if rc == nil {
		return ""
	}
	return rc.RequestID
}

func (t trustedDocuments) internalError(rc *request.Context, err error) *gqlerror.Error {
	t.log.Error("trusted documents: lookup", "request_id", requestID(rc), "err", err)
	return &gqlerror.Error{Message: "could not read the trusted documents",
		Extensions: map[string]any{"code": string(problem.InternalError), "requestId": requestID(rc)}}
}
