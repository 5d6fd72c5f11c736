package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scidex/substrate/internal/ref"
)

// Artifacts are MCP resources. An artifact's URI is scidex://<type>/<id> (its
// latest version) or scidex://<type>/<id>@sha256:<hex> (one version), the id
// percent-escaped as a URI path segment; the resource template says so to
// clients that list templates. Reading one runs the get_artifact operation
// document, so a resource is exactly what that tool answers (the envelope and
// the content, as JSON), read with the caller's credentials through the same
// /graphql: an artifact the caller may not read is not found.
//
// A client subscribed to a resource gets notifications/resources/updated when
// the artifact changes, from any process: the app follows the event log and
// calls ArtifactChanged, and a notifier goroutine (Run) tells the subscribed
// sessions. Changes coalesce while a notification is being sent; an update
// notification only says "read it again".
//
// Subscribing reads the artifact first, with the subscriber's credentials, so
// nobody is told of changes to what they may not read. Over /mcp (stateless),
// subscriptions ride on a subscriptions/listen stream (the 2026-07-28
// revision) that lives as long as the client keeps it open; the older
// resources/subscribe, whose notifications would need a session the stateless
// transport does not keep, is refused there with a message saying what to use
// instead. On stdio either works.

// ResourceTemplate is the URI template of artifact resources. {+id} (reserved
// expansion) because an id may hold ':' (paper:PMID:123) and a version suffix
// holds '@' and ':'.
const ResourceTemplate = "scidex://{type}/{+id}"

const (
	resourceScheme = "scidex://"
	resourceMIME   = "application/json"
	// getArtifactTool is the operation resources are read with.
	getArtifactTool = "get_artifact"
)

// ResourceURI is the resource URI of an artifact reference.
func ResourceURI(r ref.Ref) string {
	u := resourceScheme + r.Type + "/" + url.PathEscape(r.ID)
	if r.Hash != "" {
		u += "@" + r.Hash
	}
	return u
}

// parseResourceURI reads scidex://<type>/<id>[@<hash>] back into a ref; the
// error says what a resource URI looks like.
func parseResourceURI(uri string) (ref.Ref, error) {
	rest, ok := strings.CutPrefix(uri, resourceScheme)
	typ, id, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 {
		return ref.Ref{}, fmt.Errorf("resource URI %q: an artifact is scidex://<type>/<id>, or scidex://<type>/<id>@sha256:<hex> for one version", uri)
	}
	id, err := url.PathUnescape(id)
	if err != nil {
		return ref.Ref{}, fmt.Errorf("resource URI %q: the id is not a percent-escaped path segment: %w", uri, err)
	}
	r, err := ref.Parse(typ + ":" + id)
	if err != nil {
		return ref.Ref{}, fmt.Errorf("resource URI %q: %w", uri, err)
	}
	return r, nil
}

// addResources serves artifact resources on srv for caller c, when the
// operations include get_artifact.
func (s *Server) addResources(srv *sdk.Server, c Caller) {
	if s.getArtifact == nil {
		return
	}
	srv.AddResourceTemplate(&sdk.ResourceTemplate{
		Name:        "artifact",
		Title:       "SciDEX artifact",
		URITemplate: ResourceTemplate,
		MIMEType:    resourceMIME,
		Description: "An artifact's envelope and content (what get_artifact answers): scidex://<type>/<id> is the latest version, " +
			"scidex://<type>/<id>@sha256:<hex> one version. Subscribe to be told when it changes.",
	}, func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		raw, err := s.readArtifact(ctx, s.credentials(ctx, c, req.Extra), req.Params.URI)
		if err != nil {
			return nil, err
		}
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: resourceMIME, Text: string(raw)}}}, nil
	})
}

// readArtifact runs get_artifact for uri with cred: the artifact as JSON, a
// not-found error (also for one the caller may not read), or the GraphQL
// error's code and message.
func (s *Server) readArtifact(ctx context.Context, cred credentials, uri string) (json.RawMessage, error) {
	r, err := parseResourceURI(uri)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	vars, _ := json.Marshal(map[string]string{"ref": r.String()})
	op := s.getArtifact.op
	resp, err := s.run(ctx, cred, gqlRequest{Query: op.source, OperationName: op.op.Name, Variables: vars})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", uri, err)
	}
	if len(resp.Errors) > 0 {
		msgs := make([]string, len(resp.Errors))
		for i, e := range resp.Errors {
			code, _ := e.Extensions["code"].(string)
			msgs[i] = strings.TrimSpace(code + " " + e.Message)
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "read " + uri + ": " + strings.Join(msgs, "; ")}
	}
	var data struct {
		Artifact json.RawMessage `json:"artifact"`
	}
	if err := json.Unmarshal(resp.Data, &data); err != nil {
		return nil, fmt.Errorf("read %s: %w", uri, err)
	}
	if len(data.Artifact) == 0 || string(data.Artifact) == "null" {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	return data.Artifact, nil
}

// errLegacySubscribe refuses resources/subscribe over stateless HTTP.
var errLegacySubscribe = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "resources/subscribe needs a session, " +
	"which /mcp (stateless streamable HTTP) does not keep: subscribe on a subscriptions/listen stream (protocol revision 2026-07-28), " +
	"run `scidex mcp` on stdio, or follow changes with the events tool"}

// subscribeHandler checks a subscription (the URI is an artifact the caller
// may read) and records it (it is installed only when there is a
// get_artifact to read with), for the sdk server *srv serves c on. srv is a
// pointer to the variable MCPServer assigns: the handler goes in the options
// the server is made with, before the server exists.
func (s *Server) subscribeHandler(srv **sdk.Server, c Caller) func(context.Context, *sdk.SubscribeRequest) error {
	return func(ctx context.Context, req *sdk.SubscribeRequest) error {
		r, err := parseResourceURI(req.Params.URI)
		if err != nil {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
		raw, err := s.readArtifact(ctx, s.credentials(ctx, c, req.Extra), req.Params.URI)
		if err != nil {
			return err
		}
		var read struct {
			ContentHash string `json:"contentHash"`
		}
		_ = json.Unmarshal(raw, &read)
		s.watch.add(r.String(), watcher{srv: *srv, session: req.Session, uri: req.Params.URI}, read.ContentHash)
		return nil
	}
}

func (s *Server) unsubscribeHandler(srv **sdk.Server) func(context.Context, *sdk.UnsubscribeRequest) error {
	return func(_ context.Context, req *sdk.UnsubscribeRequest) error {
		if r, err := parseResourceURI(req.Params.URI); err == nil {
			s.watch.remove(r.String(), watcher{srv: *srv, session: req.Session, uri: req.Params.URI})
		}
		return nil
	}
}

// refuseLegacySubscribe is the receiving middleware of the HTTP servers: see
// errLegacySubscribe.
//
// And initialize, the handshake of those revisions, does not advertise
// resources.subscribe over /mcp: a client told it may subscribe would be
// refused when it does (2026-07-28's server/discover keeps it: its
// subscriptions ride on subscriptions/listen).
func refuseLegacySubscribe(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method == "resources/subscribe" {
			return nil, errLegacySubscribe
		}
		res, err := next(ctx, method, req)
		if ir, ok := res.(*sdk.InitializeResult); ok && method == "initialize" && ir.Capabilities != nil && ir.Capabilities.Resources != nil {
			caps, resources := *ir.Capabilities, *ir.Capabilities.Resources // shared by every session: copied
			resources.Subscribe = false
			caps.Resources = &resources
			ir.Capabilities = &caps
		}
		return res, err
	}
}

// ArtifactChanged tells the sessions subscribed to the artifact (a ref, pinned
// or not) that it changed; it returns at once (Run sends the notifications).
func (s *Server) ArtifactChanged(r string) {
	p, err := ref.Parse(r)
	if err != nil {
		return
	}
	s.watch.changed(p.Unpinned().String(), p.Hash)
}

// Run sends resource notifications until ctx ends.
func (s *Server) Run(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.watch.wake:
		}
		for _, w := range s.watch.take() {
			if err := w.srv.ResourceUpdated(ctx, &sdk.ResourceUpdatedNotificationParams{URI: w.uri}); err != nil && !errors.Is(err, context.Canceled) {
				s.opts.Logger.Warn("mcp: resource notification", "uri", w.uri, "err", err)
			}
		}
	}
}
