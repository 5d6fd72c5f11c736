package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// flags wraps a FlagSet so that each flag falls back to an environment
// variable, named in its usage text. Every value, from the command line or from
// the environment, is held to the same rules: a value that does not parse, or
// parses to something that makes no sense (a negative limit), is a problem
// Parse returns, naming the flag, the variable, the value and what is wanted.
// A typo in the configuration stops the command before it starts anything; it
// never runs quietly on the default instead.
type flags struct {
	*flag.FlagSet
	state *flagState
}

// flagState is what the definitions and Parse share: the problems found so far.
type flagState struct {
	problems  []string
	setFailed bool // a command-line value was refused; its problem is in problems
}

func newFlags(name string) flags {
	fs := flag.NewFlagSet("scidex "+name, flag.ContinueOnError)
	// The flag package would print its own message and every flag's usage on any
	// error; Parse reports the problem itself and prints the usage for -h only.
	fs.SetOutput(io.Discard)
	return flags{FlagSet: fs, state: &flagState{}}
}

// Parse parses the command line, then returns every problem found in the
// environment and on the command line at once, as a *configError.
func (f flags) Parse(args []string) error {
	err := f.FlagSet.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		f.usage(os.Stderr)
		return err
	}
	problems := f.state.problems
	if err != nil && !f.state.setFailed {
		problems = append(problems, fmt.Sprintf("%v (see %s -h)", err, f.Name()))
	}
	if len(problems) > 0 {
		return &configError{problems: problems}
	}
	return nil
}

// explicit reports whether a flag was given, on the command line or by its
// environment variable (Parse first).
func (f flags) explicit(name, env string) bool {
	set := false
	f.Visit(func(fl *flag.Flag) { set = set || fl.Name == name })
	if v, ok := os.LookupEnv(env); ok && env != "" && v != "" {
		set = true
	}
	return set
}

// usage lists the flags, each with the kind of value it takes, its
// variable and its default.
func (f flags) usage(w io.Writer) {
	fmt.Fprintf(w, "Usage of %s:\n", f.Name())
	f.VisitAll(func(fl *flag.Flag) {
		arg := ""
		if a, ok := fl.Value.(interface{ arg() string }); ok && a.arg() != "" {
			arg = " " + a.arg()
		}
		def := ""
		if fl.DefValue != "" {
			// A default may come from the environment: a connection string's
			// password is not for the terminal either.
			def = fmt.Sprintf(" (default %s)", redact(fl.DefValue))
		}
		fmt.Fprintf(w, "  --%s%s\n    \t%s%s\n", fl.Name, arg, fl.Usage, def)
	})
}

// configError is a configuration the command refuses to start with: one line
// per problem.
type configError struct{ problems []string }

func (e *configError) Error() string {
	if len(e.problems) == 1 {
		return e.problems[0]
	}
	return fmt.Sprintf("%d configuration problems:\n  %s", len(e.problems), strings.Join(e.problems, "\n  "))
}

// kind is how one kind of setting is read from text: parse reports whether the
// text is a value of the kind, want says in words what it accepts.
type kind[T any] struct {
	arg    string // how usage names a value of the kind; "" for a boolean
	want   string
	parse  func(string) (T, bool)
	isBool bool
}

var (
	boolKind     = kind[bool]{want: "true or false", parse: okOf(strconv.ParseBool), isBool: true}
	intKind      = kind[int]{arg: "int", want: "a whole number", parse: okOf(strconv.Atoi)}
	floatKind    = kind[float64]{arg: "number", want: "a number", parse: parseFinite}
	durationKind = kind[time.Duration]{arg: "duration", want: "a duration such as 500ms, 15s or 2m", parse: okOf(time.ParseDuration)}
	stringKind   = kind[string]{arg: "string", want: "text", parse: func(s string) (string, bool) { return s, true }}
)

func okOf[T any](parse func(string) (T, error)) func(string) (T, bool) {
	return func(s string) (T, bool) {
		v, err := parse(s)
		return v, err == nil
	}
}

// parseFinite refuses NaN and the infinities, which ParseFloat accepts.
func parseFinite(s string) (float64, bool) {
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil && !math.IsNaN(v) && !math.IsInf(v, 0)
}

// A check returns "" for a value that makes sense, else what is wanted
// instead ("at least 1").
type check[T any] func(T) string

// atLeast refuses values below lo.
func atLeast[T ~int | ~int64 | ~float64](lo T) check[T] {
	return func(v T) string {
		if v < lo {
			return fmt.Sprintf("at least %v", lo)
		}
		return ""
	}
}

// above refuses values at or below lo.
func above[T ~int | ~int64 | ~float64](lo T) check[T] {
	return func(v T) string {
		if v <= lo {
			return fmt.Sprintf("more than %v", lo)
		}
		return ""
	}
}

// oneOf accepts the listed words, in any case.
func oneOf(words ...string) check[string] {
	return func(v string) string {
		for _, w := range words {
			if strings.EqualFold(v, w) {
				return ""
			}
		}
		return "one of " + strings.Join(words, ", ")
	}
}

// hostPort accepts a listen address (host:port, the host may be empty), or
// nothing at all.
func hostPort(v string) string {
	if v == "" {
		return ""
	}
	if _, _, err := net.SplitHostPort(v); err != nil {
		return "host:port, such as 127.0.0.1:8080 or :8080"
	}
	return ""
}

// connString accepts a PostgreSQL connection string (a URL or key=value
// pairs), or nothing at all.
func connString(v string) string {
	if v == "" {
		return ""
	}
	if _, err := pgx.ParseConfig(v); err != nil {
		return "a PostgreSQL connection string, such as postgres://user:password@host:5432/scidex"
	}
	return ""
}

// setting is one flag and its environment variable, as a flag.Value: text from
// either goes through the same parse and checks.
type setting[T any] struct {
	name, env, usage string
	kind             kind[T]
	checks           []check[T]
	val              *T
	state            *flagState
}

// define declares a flag of kind k whose default is def, or the environment
// variable env when it is set and not empty. A bad value of env is recorded
// now and returned by Parse, so that every problem is reported together.
func define[T any](f flags, k kind[T], name, env string, def T, usage string, checks []check[T]) *T {
	s := &setting[T]{name: name, env: env, usage: usage, kind: k, checks: checks, val: new(T), state: f.state}
	*s.val = def
	if v, ok := os.LookupEnv(env); ok && env != "" && v != "" {
		if got, want := s.read(v); want != "" {
			f.state.problems = append(f.state.problems, s.problem(env+"="+quote(v), "--"+name, want))
		} else {
			*s.val = got
		}
	}
	f.Var(s, name, usage+envNote(env))
	return s.val
}

// read parses text and applies the checks; want is "" when the value is good.
func (s *setting[T]) read(text string) (v T, want string) {
	v, ok := s.kind.parse(text)
	if !ok {
		return v, s.kind.want
	}
	for _, c := range s.checks {
		if w := c(v); w != "" {
			return v, w
		}
	}
	return v, ""
}

// problem says what is wrong: where the value came from, the other name it
// goes by, what is wanted, and what the setting is for.
func (s *setting[T]) problem(source, other, want string) string {
	if other != "" {
		source += " (" + other + ")"
	}
	return fmt.Sprintf("%s: want %s (%s)", source, want, s.usage)
}

// Set takes a command-line value; a bad one is recorded as a problem.
func (s *setting[T]) Set(text string) error {
	v, want := s.read(text)
	if want != "" {
		s.state.setFailed = true
		s.state.problems = append(s.state.problems, s.problem("--"+s.name+"="+quote(text), s.env, want))
		return errors.New(want)
	}
	*s.val = v
	return nil
}

func (s *setting[T]) String() string {
	if s == nil || s.val == nil {
		return ""
	}
	return fmt.Sprint(*s.val)
}

func (s *setting[T]) arg() string { return s.kind.arg }

// IsBoolFlag lets a boolean flag stand alone: --anonymous-read means true.
func (s *setting[T]) IsBoolFlag() bool { return s.kind.isBool }

func (f flags) str(name, env, def, usage string, checks ...check[string]) *string {
	return define(f, stringKind, name, env, def, usage, checks)
}

func (f flags) boolean(name, env string, def bool, usage string) *bool {
	return define(f, boolKind, name, env, def, usage, nil)
}

func (f flags) integer(name, env string, def int, usage string, checks ...check[int]) *int {
	return define(f, intKind, name, env, def, usage, checks)
}

func (f flags) float(name, env string, def float64, usage string, checks ...check[float64]) *float64 {
	return define(f, floatKind, name, env, def, usage, checks)
}

func (f flags) duration(name, env string, def time.Duration, usage string, checks ...check[time.Duration]) *time.Duration {
	return define(f, durationKind, name, env, def, usage, checks)
}

func envNote(env string) string {
	if env == "" {
		return ""
	}
	return " (env " + env + ")"
}

// quote quotes a value for a message, cut short when long, with a password in
// a connection string replaced by xxxxx.
func quote(v string) string {
	v = redact(v)
	if len(v) > 80 {
		v = v[:80] + "…"
	}
	return strconv.Quote(v)
}

// redact replaces the password of a connection string in v by xxxxx.
func redact(v string) string {
	v = userinfoRE.ReplaceAllString(v, "${1}xxxxx@")
	return passwordRE.ReplaceAllString(v, "${1}xxxxx")
}

// The password of a URL (even one that does not parse) and of key=value pairs.
var (
	userinfoRE = regexp.MustCompile(`(://[^:/@]*:)[^@]*@`)
	passwordRE = regexp.MustCompile(`(?i)(password\s*=\s*)\S+`)
)

// checkWriteLimits refuses a write burst below 1 while writes are rate
// limited: the per-actor bucket could never hold a write, so every write would
// be RateLimited.
func checkWriteLimits(rate float64, burst int) error {
	if rate > 0 && burst < 1 {
		return &configError{problems: []string{fmt.Sprintf(
			"--write-burst=%d (SCIDEX_WRITE_BURST): want at least 1 while --write-rate (SCIDEX_WRITE_RATE) is %v, or a write rate of 0 for no limit (a burst of 0 refuses every write)",
			burst, rate)}}
	}
	return nil
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
		logLevel:  f.str("log-level", "SCIDEX_LOG_LEVEL", "info", "how much to log", oneOf("debug", "info", "warn", "error")),
		logFormat: f.str("log-format", "SCIDEX_LOG_FORMAT", "text", "text for people, json for machines", oneOf("text", "json")),
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
