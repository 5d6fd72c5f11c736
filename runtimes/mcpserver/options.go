package mcpserver

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/scidex/substrate/runtimes"
)

// Server is one MCP server the operator registered: exactly one of Command
// (a program started as a child and spoken to over stdio) or URL (a
// streamable HTTP endpoint).
type Server struct {
	// Command is the program and its arguments. Command[0] is looked up on
	// PATH when it has no slash.
	Command []string `json:"command,omitempty"`
	// Env is added to the child's otherwise clean environment (see the
	// package doc). It may carry the server's own API keys: they are never
	// shown in an error or a log.
	Env map[string]string `json:"env,omitempty"`
	// URL is the streamable HTTP endpoint, http or https.
	URL string `json:"url,omitempty"`
	// Headers are sent with every HTTP request to URL. They are not treated
	// as secrets: a bearer token belongs in a secret store, not here.
	Headers map[string]string `json:"headers,omitempty"`
}

// Transport names how the server is reached: "stdio" or "http".
func (s Server) Transport() string {
	if len(s.Command) > 0 {
		return "stdio"
	}
	return "http"
}

// Options configure the runtime.
type Options struct {
	// Servers are the operator's MCP servers by name, the names a tool's
	// runtime_config.server may use.
	Servers map[string]Server
	// ConnectTimeout bounds starting or reaching a server and the MCP
	// handshake (default 30 s). A call's own wall time still applies.
	ConnectTimeout time.Duration
	// TerminateGrace is how long closing a stdio session waits for the
	// server to exit once its stdin is closed, and again after SIGTERM,
	// before it is killed (default 2 s).
	TerminateGrace time.Duration
	// MaxOutputBytes caps a tool's output (default runtimes.MaxOutputBytes).
	MaxOutputBytes int64
	// Logger receives connection events and the servers' stderr
	// (default: slog.Default()).
	Logger *slog.Logger
}

// serverName is what a server may be called: short, no spaces, safe to show
// in messages and logs.
var serverName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// envName is a portable environment variable name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (o *Options) validate() error {
	if o.ConnectTimeout < 0 {
		return fmt.Errorf("mcpserver: Options.ConnectTimeout is %s, want a positive duration (or 0 for the 30 s default)", o.ConnectTimeout)
	}
	if o.ConnectTimeout == 0 {
		o.ConnectTimeout = 30 * time.Second
	}
	if o.TerminateGrace < 0 {
		return fmt.Errorf("mcpserver: Options.TerminateGrace is %s, want a positive duration (or 0 for the 2 s default)", o.TerminateGrace)
	}
	if o.TerminateGrace == 0 {
		o.TerminateGrace = 2 * time.Second
	}
	if o.MaxOutputBytes < 0 {
		return fmt.Errorf("mcpserver: Options.MaxOutputBytes is %d, want a positive byte count (or 0 for the default)", o.MaxOutputBytes)
	}
	if o.MaxOutputBytes == 0 {
		o.MaxOutputBytes = runtimes.MaxOutputBytes
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	var errs []error
	for _, name := range sortedNames(o.Servers) {
		if err := validateServer(name, o.Servers[name]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// validateServer checks one server entry; its error names the entry and the
// field.
func validateServer(name string, s Server) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("mcpserver: server %q: %s", name, fmt.Sprintf(format, args...))
	}
	if !serverName.MatchString(name) {
		return fmt.Errorf("mcpserver: server name %q: want 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	switch {
	case len(s.Command) > 0 && s.URL != "":
		return bad("has both command and url: a server is either a stdio command or a streamable HTTP url")
	case len(s.Command) == 0 && s.URL == "":
		return bad("has neither command nor url: give a stdio command ([\"program\", \"arg\", ...]) or a streamable HTTP url")
	}
	if len(s.Command) > 0 {
		if len(s.Headers) > 0 {
			return bad("headers are for an http server; a stdio server takes env")
		}
		if strings.TrimSpace(s.Command[0]) == "" {
			return bad("command[0] is empty: it names the program to run")
		}
		if _, err := exec.LookPath(s.Command[0]); err != nil {
			return bad("command %q cannot be run: %v", s.Command[0], err)
		}
		for k := range s.Env {
			if !envName.MatchString(k) {
				return bad("env name %q is not a valid environment variable name", k)
			}
		}
		return nil
	}
	if len(s.Env) > 0 {
		return bad("env is for a stdio server; an http server takes headers")
	}
	u, err := url.Parse(s.URL)
	if err != nil {
		return bad("url does not parse: %v", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return bad("url %q: want an absolute http:// or https:// URL", redactURL(u))
	}
	for k, v := range s.Headers {
		if !httpguts.ValidHeaderFieldName(k) {
			return bad("header name %q is not a valid HTTP header name", k)
		}
		if !httpguts.ValidHeaderFieldValue(v) {
			return bad("header %q has a value that is not a valid HTTP header value", k)
		}
	}
	return nil
}

// redactURL drops a URL's user info and query, which may hold credentials,
// before it is shown.
func redactURL(u *url.URL) string {
	c := *u
	c.User = nil
	c.RawQuery = ""
	c.Fragment = ""
	return c.String()
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
