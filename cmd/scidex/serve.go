package main

import (
	"context"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/scidex/substrate/internal/app"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/documents"
	"github.com/scidex/substrate/internal/event"
	"github.com/scidex/substrate/internal/server"
	"github.com/scidex/substrate/internal/store"
)

func serve(ctx context.Context, args []string) error {
	f := newFlags("serve")
	c := addCommon(f)
	addr := f.str("addr", "SCIDEX_ADDR", "127.0.0.1:8080", "listen address", hostPort)
	publicKeys := f.str("jwt-public-keys", "SCIDEX_JWT_PUBLIC_KEYS", "", "comma-separated PEM files of RS256/EdDSA public keys")
	jwksURL := f.str("jwks-url", "SCIDEX_JWKS_URL", "", "JWKS URL for RS256/EdDSA keys")
	anonRead := f.boolean("anonymous-read", "SCIDEX_ANONYMOUS_READ", false, "let requests without a token read")
	mode := f.str("mode", "SCIDEX_MODE", "development", "development, or production: a key source required (no development secret), introspection and GraphiQL off unless turned on, only registered documents for non-admins (scidex documents push), Secure cookies", oneOf("development", "production"))
	introspection := f.boolean("introspection", "SCIDEX_INTROSPECTION", true, "serve __schema/__type queries (default off in production)")
	graphiQL := f.boolean("graphiql", "SCIDEX_GRAPHIQL", true, "serve GraphiQL on /graphiql (default off in production)")
	maxBody := f.integer("max-body-bytes", "SCIDEX_MAX_BODY_BYTES", server.DefaultMaxBodyBytes, "largest request body, in bytes", atLeast(1))
	maxResponse := f.integer("max-response-bytes", "SCIDEX_MAX_RESPONSE_BYTES", server.DefaultMaxResponseBytes, "largest response data, in bytes", atLeast(1))
	maxDepth := f.integer("max-depth", "SCIDEX_MAX_DEPTH", server.DefaultMaxDepth, "deepest query nesting", atLeast(1))
	maxComplexity := f.integer("max-complexity", "SCIDEX_MAX_COMPLEXITY", server.DefaultMaxComplexity, "highest query cost", atLeast(1))
	writeRate := f.float("write-rate", "SCIDEX_WRITE_RATE", 100, "writes per second per actor, 0 = unlimited", atLeast(0.0))
	writeBurst := f.integer("write-burst", "SCIDEX_WRITE_BURST", 500, "burst of writes per actor", atLeast(0))
	shadow := f.str("shadow-validators", "SCIDEX_SHADOW_VALIDATORS", "", "comma-separated validators that only log what they would refuse")
	stampProvenance := f.boolean("stamp-provenance", "SCIDEX_STAMP_PROVENANCE", true, "stamp produced_by provenance edges (actor, skill, tool) from content.produced_by and on tool calls' result artifacts")
	metricsAddr := f.str("metrics-addr", "SCIDEX_METRICS_ADDR", "", "serve Prometheus metrics on /metrics at this address, a listener of its own (never the public one); off when empty", hostPort)
	pprofAddr := f.str("pprof-addr", "SCIDEX_PPROF_ADDR", "", "serve net/http/pprof on this address, for profiling; off when empty", hostPort)
	origins := f.str("allowed-origins", "SCIDEX_ALLOWED_ORIGINS", "", "comma-separated browser origins besides this server's own whose pages may use the session cookie (CORS with credentials), open a websocket or call /mcp")
	maxSubs := f.integer("max-subscriptions", "SCIDEX_MAX_SUBSCRIPTIONS", server.DefaultMaxSubscriptions, "operations active at once on one websocket", atLeast(1))
	subBuffer := f.integer("subscriber-buffer", "SCIDEX_SUBSCRIBER_BUFFER", event.DefaultBuffer, "events queued for one live subscriber; one that falls this far behind is dropped with a cursor to resume from", atLeast(1))
	maxStreams := f.integer("max-event-streams", "SCIDEX_MAX_EVENT_STREAMS", server.DefaultMaxEventStreams, "subscriptions one actor holds open over SSE at once", atLeast(1))
	listenURL := f.str("listen-url", "SCIDEX_LISTEN_URL", "", "direct database connection for LISTEN (the event hub's and the job queue's) when DATABASE_URL goes through a transaction pooler", connString)
	tf := addToolFlags(f, 4)
	mf := addMCPFlags(f)
	serveMCP := f.boolean("mcp", "SCIDEX_MCP", true, "serve MCP streamable HTTP on /mcp")
	retention := f.duration("message-retention", "SCIDEX_MESSAGE_RETENTION", store.DefaultMessageRetention, "how long a completed message stays in its recipient's mailbox lists before it is archived (still readable by ref)", above(time.Duration(0)))
	shutdownWait := f.duration("shutdown-timeout", "SCIDEX_SHUTDOWN_TIMEOUT", 15*time.Second, "how long to drain requests on SIGTERM", atLeast(time.Duration(0)))
	if err := f.Parse(args); err != nil {
		return err
	}
	if err := checkWriteLimits(*writeRate, *writeBurst); err != nil {
		return err
	}
	production := strings.EqualFold(*mode, "production")
	if production {
		if err := checkProduction(c, *publicKeys, *jwksURL); err != nil {
			return err
		}
		// Off unless turned on.
		*introspection = *introspection && f.explicit("introspection", "SCIDEX_INTROSPECTION")
		*graphiQL = *graphiQL && f.explicit("graphiql", "SCIDEX_GRAPHIQL")
	}
	toolOpts, err := tf.dispatchOpts()
	if err != nil {
		return err
	}
	tuneGC()
	log, err := c.logger()
	if err != nil {
		return err
	}
	tr, log, err := newTracing(ctx, log)
	if err != nil {
		return err
	}
	defer stopTracing(tr, log) // after the pool closes: its last statements are spans too
	verifier, err := newVerifier(c, *publicKeys, *jwksURL)
	if err != nil {
		return err
	}
	var listen *pgx.ConnConfig
	if *listenURL != "" {
		if listen, err = pgx.ParseConfig(*listenURL); err != nil {
			return fmt.Errorf("--listen-url: %w", err)
		}
	}
	db, err := openDatabase(ctx, *c.dataDir, log, false, tr.Pgx())
	if err != nil {
		return err
	}
	defer db.close()

	var trusted *documents.Store
	if production {
		trusted = documents.New(db.pool)
	}
	var limiter *store.Limiter
	if *writeRate > 0 {
		limiter = store.NewLimiter(*writeRate, *writeBurst)
	}
	m, killed := newMetrics(*metricsAddr)
	a, err := app.New(app.Config{
		Pool: db.pool, Listen: listen, Logger: log, HubBuffer: *subBuffer, PprofAddr: *pprofAddr, Metrics: m, MetricsAddr: *metricsAddr, Tracing: tr,
		Store: store.Opts{Limiter: limiter, ShadowValidators: splitList(*shadow), NoProvenanceStamps: !*stampProvenance, MessageRetention: *retention},
		Tools: toolOpts, Runtimes: tf.runtimes(log, *c.dataDir, killed), Queue: tf.queueOpts(),
		OnStart: []func(context.Context, *app.App) error{app.InstallSkills},
		Server: server.Opts{
			Verifier: verifier, AnonymousRead: *anonRead, Introspection: *introspection,
			MaxBodyBytes: int64(*maxBody), MaxResponseBytes: int64(*maxResponse), MaxDepth: *maxDepth, MaxComplexity: *maxComplexity,
			AllowedOrigins: splitList(*origins), MaxSubscriptions: *maxSubs, MaxEventStreams: *maxStreams,
			MCP: mf.options(), NoMCP: !*serveMCP,
			TrustedDocuments: trusted, NoGraphiQL: !*graphiQL, SecureCookies: production,
		},
	})
	if err != nil {
		return err
	}
	if err := a.Start(ctx); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		_ = a.Stop()
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	attrs := []any{"addr", ln.Addr().String(), "graphql", "http://" + ln.Addr().String() + "/graphql", "mode", strings.ToLower(*mode)}
	if *graphiQL {
		attrs = append(attrs, "graphiql", "http://"+ln.Addr().String()+"/graphiql")
	}
	log.Info("listening", append(attrs, "pid", os.Getpid())...)
	// Serve returns once requests, websockets and every background goroutine
	// have ended; the deferred db.close then closes the pool and, last, stops
	// the embedded cluster (internal/app has the order).
	return a.Serve(ctx, ln, *shutdownWait)
}

// checkProduction refuses a production start without a key source of its
// own: the development secret (kept in the data dir, made on first use) is
// never trusted there, given by SCIDEX_JWT_SECRET or not.
func checkProduction(c common, publicKeys, jwksURL string) error {
	secret := os.Getenv("SCIDEX_JWT_SECRET")
	if secret == "" && publicKeys == "" && jwksURL == "" {
		return &configError{problems: []string{"SCIDEX_MODE=production needs a key source of its own: set SCIDEX_JWT_SECRET (at least " +
			strconv.Itoa(auth.MinSecretBytes) + " bytes, not the development secret), --jwt-public-keys (SCIDEX_JWT_PUBLIC_KEYS) or --jwks-url (SCIDEX_JWKS_URL)"}}
	}
	if secret != "" {
		// The secret itself, or the file's hex text of it.
		if dev, err := auth.ReadSecret(*c.dataDir); err == nil && (subtle.ConstantTimeCompare(dev, []byte(secret)) == 1 ||
			subtle.ConstantTimeCompare([]byte(hex.EncodeToString(dev)), []byte(strings.TrimSpace(secret))) == 1) {
			return &configError{problems: []string{"SCIDEX_MODE=production: SCIDEX_JWT_SECRET is the development secret of " + *c.dataDir +
				" (which `scidex token` mints with on this machine): set a new secret, or use --jwt-public-keys or --jwks-url"}}
		}
	}
	return nil
}

// newVerifier builds token verification from the configuration: RS256/EdDSA keys
// or a JWKS when given; HS256 with SCIDEX_JWT_SECRET, or with the development
// secret in the data dir when no other key source is configured.
func newVerifier(c common, publicKeys, jwksURL string) (*auth.Verifier, error) {
	opts := auth.VerifierOpts{Issuer: *c.issuer, Audience: *c.audience, JWKSURL: jwksURL}
	for _, path := range splitList(publicKeys) {
		pem, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("--jwt-public-keys: %w", err)
		}
		opts.PublicKeysPEM = append(opts.PublicKeysPEM, pem)
	}
	secret, err := hsSecret(c, len(opts.PublicKeysPEM) == 0 && jwksURL == "")
	if err != nil {
		return nil, err
	}
	opts.HS256Secret = secret
	return auth.NewVerifier(opts)
}

// hsSecret returns SCIDEX_JWT_SECRET, or when fallback is set the development
// secret kept in the data dir (created on first use).
func hsSecret(c common, fallback bool) ([]byte, error) {
	if s := os.Getenv("SCIDEX_JWT_SECRET"); s != "" {
		if len(s) < auth.MinSecretBytes {
			return nil, fmt.Errorf("SCIDEX_JWT_SECRET must be at least %d bytes", auth.MinSecretBytes)
		}
		return []byte(s), nil
	}
	if !fallback {
		return nil, nil
	}
	if err := os.MkdirAll(*c.dataDir, 0o755); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	return auth.LoadOrCreateSecret(*c.dataDir)
}
