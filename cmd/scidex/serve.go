package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/event"
	"github.com/scidex/substrate/internal/server"
	"github.com/scidex/substrate/internal/store"
)

func serve(ctx context.Context, args []string) error {
	f := newFlags("serve")
	c := addCommon(f)
	addr := f.str("addr", "SCIDEX_ADDR", "127.0.0.1:8080", "listen address")
	publicKeys := f.str("jwt-public-keys", "SCIDEX_JWT_PUBLIC_KEYS", "", "comma-separated PEM files of RS256/EdDSA public keys")
	jwksURL := f.str("jwks-url", "SCIDEX_JWKS_URL", "", "JWKS URL for RS256/EdDSA keys")
	anonRead := f.boolean("anonymous-read", "SCIDEX_ANONYMOUS_READ", false, "let requests without a token read")
	introspection := f.boolean("introspection", "SCIDEX_INTROSPECTION", true, "serve __schema/__type queries")
	maxBody := f.integer("max-body-bytes", "SCIDEX_MAX_BODY_BYTES", server.DefaultMaxBodyBytes, "largest request body")
	maxResponse := f.integer("max-response-bytes", "SCIDEX_MAX_RESPONSE_BYTES", server.DefaultMaxResponseBytes, "largest response data")
	maxDepth := f.integer("max-depth", "SCIDEX_MAX_DEPTH", server.DefaultMaxDepth, "deepest query nesting")
	maxComplexity := f.integer("max-complexity", "SCIDEX_MAX_COMPLEXITY", server.DefaultMaxComplexity, "highest query cost")
	writeRate := f.float("write-rate", "SCIDEX_WRITE_RATE", 100, "writes per second per actor (0: unlimited)")
	writeBurst := f.integer("write-burst", "SCIDEX_WRITE_BURST", 500, "burst of writes per actor")
	shadow := f.str("shadow-validators", "SCIDEX_SHADOW_VALIDATORS", "", "comma-separated validators that only log what they would refuse")
	pprofAddr := f.str("pprof-addr", "SCIDEX_PPROF_ADDR", "", "serve net/http/pprof on this address (for profiling; off when empty)")
	origins := f.str("allowed-origins", "SCIDEX_ALLOWED_ORIGINS", "", "comma-separated browser origins besides this server's own that may open a websocket")
	maxSubs := f.integer("max-subscriptions", "SCIDEX_MAX_SUBSCRIPTIONS", server.DefaultMaxSubscriptions, "operations active at once on one websocket")
	listenURL := f.str("listen-url", "SCIDEX_LISTEN_URL", "", "direct database connection for LISTEN when DATABASE_URL goes through a transaction pooler")
	shutdownWait := f.duration("shutdown-timeout", "SCIDEX_SHUTDOWN_TIMEOUT", 15*time.Second, "how long to drain requests on SIGTERM")
	if err := f.Parse(args); err != nil {
		return err
	}
	tuneGC()
	log, err := c.logger()
	if err != nil {
		return err
	}
	verifier, err := newVerifier(c, *publicKeys, *jwksURL)
	if err != nil {
		return err
	}
	db, err := openDatabase(ctx, *c.dataDir, log)
	if err != nil {
		return err
	}
	defer db.close()

	var limiter *store.Limiter
	if *writeRate > 0 {
		limiter = store.NewLimiter(*writeRate, *writeBurst)
	}
	st := store.New(store.Opts{Pool: db.pool, Logger: log, Limiter: limiter, ShadowValidators: splitList(*shadow)})
	hub, err := startHub(ctx, db, *listenURL, log)
	if err != nil {
		return err
	}
	consumers := event.NewConsumers(db.pool)
	h := server.New(server.Opts{
		Store: st, Verifier: verifier, Logger: log, AnonymousRead: *anonRead, Introspection: *introspection,
		MaxBodyBytes: int64(*maxBody), MaxResponseBytes: int64(*maxResponse), MaxDepth: *maxDepth, MaxComplexity: *maxComplexity,
		ReadyFunc: st.Ping, Hub: hub, Consumers: consumers,
		AllowedOrigins: splitList(*origins), MaxSubscriptions: *maxSubs,
	})
	go sweep(ctx, log, "idempotency keys", st.DeleteExpiredIdempotencyKeys)
	go sweep(ctx, log, "event consumers", consumers.DeleteExpired)
	if *pprofAddr != "" {
		go servePprof(*pprofAddr, log)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("listening", "addr", ln.Addr().String(), "graphql", "http://"+ln.Addr().String()+"/graphql",
		"graphiql", "http://"+ln.Addr().String()+"/graphiql", "pid", os.Getpid())

	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), *shutdownWait)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Warn("shutdown did not finish cleanly", "err", err)
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

// startHub starts the event hub (its LISTEN connection goes to listenURL when
// set) and waits until it listens, so no event committed after the server
// starts is missed by a subscriber.
func startHub(ctx context.Context, db *database, listenURL string, log *slog.Logger) (*event.Hub, error) {
	opts := event.HubOpts{Pool: db.pool, Logger: log}
	if listenURL != "" {
		cfg, err := pgx.ParseConfig(listenURL)
		if err != nil {
			return nil, fmt.Errorf("--listen-url: %w", err)
		}
		opts.Listen = cfg
	}
	hub := event.NewHub(opts)
	done := make(chan error, 1)
	go func() { done <- hub.Run(ctx) }()
	select {
	case <-hub.Ready():
		go func() {
			if err := <-done; err != nil && ctx.Err() == nil {
				log.Error("event hub stopped", "err", err)
			}
		}()
		return hub, nil
	case err := <-done:
		return nil, fmt.Errorf("event hub: %w", err)
	case <-time.After(30 * time.Second):
		return nil, fmt.Errorf("event hub: could not LISTEN within 30s (see the log for why)")
	}
}

// sweep deletes expired rows every hour until ctx ends.
func sweep(ctx context.Context, log *slog.Logger, what string, del func(context.Context, time.Time) (int64, error)) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if n, err := del(ctx, now); err != nil {
				log.Warn("sweep "+what, "err", err)
			} else if n > 0 {
				log.Info("expired "+what+" deleted", "count", n)
			}
		}
	}
}

// servePprof exposes the runtime profiles on a separate listener, never on the
// public one.
func servePprof(addr string, log *slog.Logger) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	log.Info("pprof listening", "addr", addr)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		log.Warn("pprof stopped", "err", err)
	}
}
