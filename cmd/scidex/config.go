package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// flags wraps a FlagSet so that each flag falls back to an environment variable,
// named in its usage text.
type flags struct{ *flag.FlagSet }

func newFlags(name string) flags {
	fs := flag.NewFlagSet("scidex "+name, flag.ContinueOnError)
	return flags{fs}
}

func (f flags) str(name, env, def, usage string) *string {
	if v, ok := os.LookupEnv(env); ok && env != "" {
		def = v
	}
	return f.String(name, def, usage+envNote(env))
}

func (f flags) boolean(name, env string, def bool, usage string) *bool {
	if v, ok := os.LookupEnv(env); ok && env != "" {
		if b, err := strconv.ParseBool(v); err == nil {
			def = b
		}
	}
	return f.Bool(name, def, usage+envNote(env))
}

func (f flags) integer(name, env string, def int, usage string) *int {
	if v, ok := os.LookupEnv(env); ok && env != "" {
		if n, err := strconv.Atoi(v); err == nil {
			def = n
		}
	}
	return f.Int(name, def, usage+envNote(env))
}

func (f flags) float(name, env string, def float64, usage string) *float64 {
	if v, ok := os.LookupEnv(env); ok && env != "" {
		if n, err := strconv.ParseFloat(v, 64); err == nil {
			def = n
		}
	}
	return f.Float64(name, def, usage+envNote(env))
}

func (f flags) duration(name, env string, def time.Duration, usage string) *time.Duration {
	if v, ok := os.LookupEnv(env); ok && env != "" {
		if d, err := time.ParseDuration(v); err == nil {
			def = d
		}
	}
	return f.Duration(name, def, usage+envNote(env))
}

func envNote(env string) string {
	if env == "" {
		return ""
	}
	return " (env " + env + ")"
}

// common are the settings every subcommand that touches the data dir shares.
type common struct {
	dataDir   *string
	logLevel  *string
	logFormat *string
	issuer    *string
	audience  *string
}

func addCommon(f flags) common {
	return common{
		dataDir:   f.str("data-dir", "SCIDEX_DATA_DIR", defaultDataDir(), "where the embedded PostgreSQL cluster and the development JWT secret live"),
		logLevel:  f.str("log-level", "SCIDEX_LOG_LEVEL", "info", "debug, info, warn or error"),
		logFormat: f.str("log-format", "SCIDEX_LOG_FORMAT", "text", "text or json"),
		issuer:    f.str("jwt-issuer", "SCIDEX_JWT_ISSUER", "scidex", "the iss tokens must carry"),
		audience:  f.str("jwt-audience", "SCIDEX_JWT_AUDIENCE", "scidex", "the aud tokens must carry"),
	}
}

// defaultDataDir is /var/lib/scidex for root (whose home the unprivileged
// PostgreSQL user cannot enter) and ~/.local/share/scidex otherwise.
func defaultDataDir() string {
	if os.Geteuid() == 0 {
		return "/var/lib/scidex"
	}
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "scidex")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "share", "scidex")
	}
	return ".scidex"
}

func (c common) logger() (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*c.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", *c.logLevel)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch strings.ToLower(*c.logFormat) {
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", *c.logFormat)
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
