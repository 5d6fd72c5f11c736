// Package server is the HTTP face of the substrate: GraphQL over HTTP,
// websockets and Server-Sent Events (graphql-sse) on /graphql, GraphiQL, MCP streamable HTTP on /mcp (internal/mcp,
// which calls /graphql in process), health and readiness. It turns
// each request into a request.Context (who, when, which request) before any
// resolver runs, and keeps internal errors away from clients.
package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/scidex/substrate/graph"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dispatch"
	"github.com/scidex/substrate/internal/documents"
	"github.com/scidex/substrate/internal/event"
	"github.com/scidex/substrate/internal/graphiql"
	"github.com/scidex/substrate/internal/livepage"
	"github.com/scidex/substrate/internal/mcp"
	"github.com/scidex/substrate/internal/origin"
	"github.com/scidex/substrate/internal/session"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/internal/toolreg"
	"github.com/scidex/substrate/internal/workpacket"
	"github.com/scidex/substrate/internal/wsconn"
	"github.com/scidex/substrate/resolvers"
)

// Opts configures the HTTP server.
type Opts struct {
	Store    *store.Store
	Verifier *auth.Verifier
	Logger   *slog.Logger
	// AnonymousRead lets requests without a token read (as a viewer).
	AnonymousRead bool
	// Introspection enables __schema/__type queries; they need no token.
	Introspection bool
	// MaxBodyBytes caps a request body.
	MaxBodyBytes int64
	// MaxResponseBytes caps the data of one response (each event's, for a
	// subscription); a response beyond it is one error instead.
	MaxResponseBytes int64
	// MaxDepth caps how deep a query's selections nest (introspection excluded).
	MaxDepth int
	// MaxComplexity caps a query's cost; list fields cost their page size times
	// their items' cost.
	MaxComplexity int
	// ParserTokenLimit caps the number of tokens in a query document.
	ParserTokenLimit int
	// ReportStatements adds extensions.sqlStatements (the number of SQL statements
	// the request ran) to every GraphQL response: for tests and profiling.
	ReportStatements bool
	// ReadyFunc reports whether the server can serve (database reachable, migrated).
	ReadyFunc func(ctx context.Context) error
	// Now is the clock; tests may freeze it.
	Now func() time.Time
	// Hub serves subscriptions; Consumers keeps durable cursors for poll and
	// subscriptions with a consumerId. Without a Hub, subscriptions fail.
	Hub       *event.Hub
	Consumers *event.Consumers
	// Dispatch runs tools; without it the tool mutations fail.
	Dispatch *dispatch.Dispatcher
	// Registrar registers tools; without it registerTool fails.
	Registrar *toolreg.Registrar
	// Packets runs work packets; without it the work packet operations fail.
	Packets *workpacket.Packets
	// AllowedOrigins are the browser origins besides this server's own that may
	// open a websocket, use the session cookie (with CORS answers naming the
	// origin, with credentials) and call /mcp.
	AllowedOrigins []string
	// TrustedDocuments, when set, is production mode's allow-list: actors
	// without the admin permission run only the documents registered in it.
	TrustedDocuments *documents.Store
	// NoGraphiQL leaves /graphiql unserved (production mode, unless turned on).
	NoGraphiQL bool
	// SecureCookies marks the session cookies Secure even on plain-HTTP
	// loopback (production mode).
	SecureCookies bool
	// MaxSubscriptions caps the operations active at once on one websocket.
	MaxSubscriptions int
	// MaxEventStreams caps the subscriptions one actor holds open over SSE
	// at once, across all its requests.
	MaxEventStreams int
	// SSEKeepAlive is how often an idle SSE stream gets a comment line.
	// Default 12s.
	SSEKeepAlive time.Duration
	// Executor builds the GraphQL executor. Nil means graph.NewExecutableSchema:
	// gqlgen's executor as cmd/gqlgen rewrote it, which marshals plain scalar
	// fields straight from their objects, past gqlgen's field middleware.
	// graph/stock.New is gqlgen's executor as gqlgen wrote it, which runs every
	// field through the middleware (and costs more per field).
	Executor func(graph.Config) graphql.ExecutableSchema
	// Extensions are added to the GraphQL handler after the server's own:
	// tracing, field authorization. See Check for those that intercept fields.
	Extensions []graphql.HandlerExtension
	// MCP configures /mcp, the API as MCP tools (internal/mcp); the server
	// fills in its Endpoint (this server's own /graphql) and Logger.
	MCP mcp.Options
	// NoMCP leaves /mcp unserved.
	NoMCP bool
}

// Defaults for the limits.
const (
	DefaultMaxBodyBytes     = 2 << 20
	DefaultMaxDepth         = 12
	DefaultMaxComplexity    = 20000
	DefaultParserTokenLimit = 15000
)

// Server is the substrate's http.Handler.
type Server struct {
	opts    Opts
	log     *slog.Logger
	mux     *http.ServeMux
	gql     *handler.Server
	mcp     *mcp.Server
	ws      *wsconn.Implementation
	streams streams // the open SSE streams
	tokens  tokenCache
	origins origin.Allow    // AllowedOrigins
	cookies session.Cookies // the browser session's
	handler http.Handler    // mux behind CORS
}

// Check refuses options the server cannot honour: an extension that
// intercepts fields (a graphql.FieldInterceptor, such as handler.AroundFields
// installs) with the default executor, which skips field middleware on every
// plain scalar field (cmd/gqlgen), so a tracer would miss those fields and a
// field authorizer would let them through. Such an extension needs the stock
// executor (Executor: stock.New). internal/app calls it before New, so a
// server so configured does not start, and says why.
func (opts Opts) Check() error {
	for _, ext := range opts.Extensions {
		if _, ok := ext.(graphql.FieldInterceptor); ok && opts.Executor == nil {
			return fmt.Errorf("server: extension %s (%T) intercepts fields, but the default executor marshals plain scalar fields "+
				"straight from their objects without field middleware (cmd/gqlgen); serve with Opts.Executor = stock.New (graph/stock), "+
				"which runs every field through it", ext.ExtensionName(), ext)
		}
	}
	if !opts.NoMCP {
		if err := mcp.Check(opts.MCP); err != nil {
			return fmt.Errorf("server: %w", err)
		}
	}
	return nil
}

// New builds the handler. It panics on options Check refuses: a caller that
// skipped Check has a bug, not a configuration to report.
func New(opts Opts) *Server {
	if err := opts.Check(); err != nil {
		panic(err.Error())
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.MaxResponseBytes == 0 {
		opts.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if opts.MaxDepth == 0 {
		opts.MaxDepth = DefaultMaxDepth
	}
	if opts.MaxComplexity == 0 {
		opts.MaxComplexity = DefaultMaxComplexity
	}
	if opts.ParserTokenLimit == 0 {
		opts.ParserTokenLimit = DefaultParserTokenLimit
	}
	if opts.MaxSubscriptions == 0 {
		opts.MaxSubscriptions = DefaultMaxSubscriptions
	}
	if opts.MaxEventStreams == 0 {
		opts.MaxEventStreams = DefaultMaxEventStreams
	}
	if opts.SSEKeepAlive == 0 {
		opts.SSEKeepAlive = DefaultSSEKeepAlive
	}
	s := &Server{opts: opts, log: opts.Logger, mux: http.NewServeMux(), streams: streams{keepAlive: opts.SSEKeepAlive},
		origins: origin.New(opts.AllowedOrigins), cookies: session.Cookies{AlwaysSecure: opts.SecureCookies}}
	s.handler = session.CORS(s.origins, s.mux)
	s.gql = s.graphQL()
	s.mux.Handle("/graphql", s.withRequest(wsconn.Middleware(s.gql)))
	if !opts.NoGraphiQL {
		graphiql.Mount(s.mux, "/graphiql", graphiql.Options{Endpoint: "/graphql"})
		s.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/graphiql/", http.StatusFound)
		})
	}
	if !opts.NoMCP {
		// /mcp calls /graphql in process, through this same handler.
		mo := opts.MCP
		mo.Endpoint, mo.Logger = s, s.log
		if mo.AllowedOrigins == nil {
			mo.AllowedOrigins = opts.AllowedOrigins
		}
		if mo.MaxResponseBytes == 0 {
			mo.MaxResponseBytes = opts.MaxResponseBytes
		}
		m, err := mcp.New(mo)
		if err != nil {
			panic(err.Error()) // Check built the same tools
		}
		s.mcp = m
		s.mux.Handle("/mcp", s.withRequest(m))
	}
	s.mux.Handle("GET /artifacts/{ref}/figure.svg", s.withRequest(http.HandlerFunc(s.figureSVG)))
	livepage.Mount(s.mux)
	s.mux.HandleFunc("POST /auth/session", s.createSession)
	s.mux.Handle("GET /auth/session", s.withRequest(http.HandlerFunc(s.readSession)))
	s.mux.HandleFunc("DELETE /auth/session", s.deleteSession)
	s.mux.HandleFunc("GET /healthz", s.healthz)
	s.mux.HandleFunc("GET /readyz", s.readyz)
	return s
}

// closeConn ends the subscriber's websocket, or its SSE stream, when the hub
// dropped it.
func closeConn(ctx context.Context, code int, reason string) bool {
	return wsconn.CloseConn(ctx, code, reason) || endStream(ctx, reason)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// MCP is the MCP server behind /mcp, to serve on other transports (`scidex
// mcp` runs it on stdio); nil with NoMCP.
func (s *Server) MCP() *mcp.Server { return s.mcp }

func (s *Server) graphQL() *handler.Server {
	res := &resolvers.Resolver{Store: s.opts.Store, Logger: s.log, Hub: s.opts.Hub, Consumers: s.opts.Consumers, Dispatch: s.opts.Dispatch, Registrar: s.opts.Registrar, Packets: s.opts.Packets, CloseConn: closeConn}
	cfg := graph.Config{Resolvers: res, Complexity: resolvers.Complexity()}
	executor := s.opts.Executor
	if executor == nil {
		executor = graph.NewExecutableSchema
	}
	srv := handler.New(executor(cfg))
	srv.AddTransport(s.websocket())
	srv.AddTransport(sse{s}) // before get and post: it takes their requests that accept text/event-stream
	srv.AddTransport(get{maxResponseBytes: s.opts.MaxResponseBytes})
	srv.AddTransport(post{maxResponseBytes: s.opts.MaxResponseBytes})
	srv.AddTransport(otherRequests{}) // last: it answers whatever the others do not serve
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.SetParserTokenLimit(s.opts.ParserTokenLimit)
	srv.SetErrorPresenter(resolvers.ErrorPresenter(s.log))
	srv.SetRecoverFunc(resolvers.Recover(s.log))
	if s.opts.Introspection {
		srv.Use(extension.Introspection{})
	}
	if s.opts.TrustedDocuments != nil { // before the automatic persisted queries (trusted.go)
		srv.Use(trustedDocuments{store: s.opts.TrustedDocuments, log: s.log})
	}
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](1000)})
	srv.Use(depthLimit{max: s.opts.MaxDepth})
	srv.Use(newCostLimit(s.opts.MaxComplexity, cfg.Complexity))
	srv.AroundResponses(s.capResponses)
	srv.AroundRootFields(capRootField)
	for _, ext := range s.opts.Extensions {
		srv.Use(ext)
	}
	srv.AroundOperations(s.perOperation)
	srv.AroundOperations(s.authorizeOperation)
	if s.opts.ReportStatements {
		srv.AroundResponses(func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
			resp := next(ctx)
			if c := store.StatementCounterFrom(ctx); c != nil && resp != nil {
				if resp.Extensions == nil {
					resp.Extensions = map[string]any{}
				}
				resp.Extensions["sqlStatements"] = c.Count()
			}
			return resp
		})
	}
	// Loaders live for one response: a query's, or one event of a subscription.
	srv.AroundResponses(resolvers.Middleware(s.opts.Store))
	return srv
}
