// Command http-units is a small HTTP tool server for the http_post runtime:
// POST /convert converts a quantity between units of one dimension (length,
// mass, time, temperature, volume, pressure, energy). It is deterministic
// and stateless, which makes it a fair test of the runtime, and it can
// require a bearer token, which shows a secret_ref at work.
//
//	go run ./tools/http-units --addr 127.0.0.1:8765
//	curl -s -d '{"value": 5, "from": "km", "to": "mi"}' http://127.0.0.1:8765/convert
//
// See README.md for registering it as the tool units.convert.
package main

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "http-units:", err)
		os.Exit(1)
	}
}

// run serves until ctx ends. It writes one line, "http-units listening on
// http://ADDR/convert", once it listens (with --addr 127.0.0.1:0 that is
// how a caller learns the port).
func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("http-units", flag.ContinueOnError)
	fs.SetOutput(out)
	addr := fs.String("addr", "127.0.0.1:8765", "address to listen on (host:port; port 0 picks one)")
	tokenEnv := fs.String("token-env", "HTTP_UNITS_TOKEN", "environment variable holding the bearer token to require; unset or empty: no token required")
	if err := fs.Parse(args); err != nil {
		return err
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	srv := &http.Server{Handler: newHandler(os.Getenv(*tokenEnv)), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(out, "http-units listening on http://%s/convert\n", l.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(shut); err != nil {
			return fmt.Errorf("shut down: %w", err)
		}
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}

// request is POST /convert's body.
type request struct {
	Value *float64 `json:"value"`
	From  string   `json:"from"`
	To    string   `json:"to"`
}

// newHandler serves POST /convert, and GET /healthz for a liveness check.
// With a token, /convert requires "Authorization: Bearer <token>".
func newHandler(token string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	mux.HandleFunc("POST /convert", func(w http.ResponseWriter, r *http.Request) {
		if token != "" {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="http-units"`)
				fail(w, http.StatusUnauthorized, "a bearer token is required")
				return
			}
		}
		var req request
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			fail(w, http.StatusBadRequest, "the body is not {\"value\": number, \"from\": unit, \"to\": unit}: "+err.Error())
			return
		}
		if req.Value == nil || req.From == "" || req.To == "" {
			fail(w, http.StatusBadRequest, "value, from and to are all required")
			return
		}
		c, err := convert(*req.Value, req.From, req.To)
		if err != nil {
			fail(w, http.StatusUnprocessableEntity, err.Error())
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(c)
	})
	return mux
}

func fail(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
