package main

import (
	"errors"
	"flag"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/auth"
)

// testFlags defines one flag of each kind, as serve does, each with its
// variable.
type testFlags struct {
	f     flags
	rate  *float64
	burst *int
	on    *bool
	wait  *time.Duration
	level *string
	addr  *string
}

func newTestFlags() testFlags {
	f := newFlags("test")
	return testFlags{
		f:     f,
		rate:  f.float("write-rate", "SCIDEX_WRITE_RATE", 100, "writes per second per actor, 0 = unlimited", atLeast(0.0)),
		burst: f.integer("write-burst", "SCIDEX_WRITE_BURST", 500, "burst of writes per actor", atLeast(0)),
		on:    f.boolean("anonymous-read", "SCIDEX_ANONYMOUS_READ", false, "let requests without a token read"),
		wait:  f.duration("shutdown-timeout", "SCIDEX_SHUTDOWN_TIMEOUT", 15*time.Second, "how long to drain requests on SIGTERM", atLeast(time.Duration(0))),
		level: f.str("log-level", "SCIDEX_LOG_LEVEL", "info", "how much to log", oneOf("debug", "info", "warn", "error")),
		addr:  f.str("addr", "SCIDEX_ADDR", "127.0.0.1:8080", "listen address", hostPort),
	}
}

// A value in the environment that does not parse, or makes no sense, is a
// problem naming the variable, its flag, the value and what is wanted; it is
// never replaced by the default.
func TestEnvironmentValuesAreChecked(t *testing.T) {
	tests := []struct {
		env, value, problem string
	}{
		{"SCIDEX_WRITE_RATE", "abc", `SCIDEX_WRITE_RATE="abc" (--write-rate): want a number (writes per second per actor, 0 = unlimited)`},
		{"SCIDEX_WRITE_RATE", "NaN", `SCIDEX_WRITE_RATE="NaN" (--write-rate): want a number`},
		{"SCIDEX_WRITE_RATE", "+Inf", `SCIDEX_WRITE_RATE="+Inf" (--write-rate): want a number`},
		{"SCIDEX_WRITE_RATE", "-1", `SCIDEX_WRITE_RATE="-1" (--write-rate): want at least 0 (writes per second per actor, 0 = unlimited)`},
		{"SCIDEX_WRITE_BURST", "1.5", `SCIDEX_WRITE_BURST="1.5" (--write-burst): want a whole number (burst of writes per actor)`},
		{"SCIDEX_WRITE_BURST", "-3", `SCIDEX_WRITE_BURST="-3" (--write-burst): want at least 0 (burst of writes per actor)`},
		{"SCIDEX_ANONYMOUS_READ", "yes", `SCIDEX_ANONYMOUS_READ="yes" (--anonymous-read): want true or false (let requests without a token read)`},
		{"SCIDEX_SHUTDOWN_TIMEOUT", "15", `SCIDEX_SHUTDOWN_TIMEOUT="15" (--shutdown-timeout): want a duration such as 500ms, 15s or 2m (how long to drain requests on SIGTERM)`},
		{"SCIDEX_SHUTDOWN_TIMEOUT", "-1s", `SCIDEX_SHUTDOWN_TIMEOUT="-1s" (--shutdown-timeout): want at least 0s`},
		{"SCIDEX_LOG_LEVEL", "loud", `SCIDEX_LOG_LEVEL="loud" (--log-level): want one of debug, info, warn, error (how much to log)`},
		{"SCIDEX_ADDR", "8080", `SCIDEX_ADDR="8080" (--addr): want host:port, such as 127.0.0.1:8080 or :8080 (listen address)`},
	}
	for _, tt := range tests {
		t.Run(tt.env+"="+tt.value, func(t *testing.T) {
			t.Setenv(tt.env, tt.value)
			tf := newTestFlags()
			err := tf.f.Parse(nil)
			var bad *configError
			if !errors.As(err, &bad) {
				t.Fatalf("Parse = %v, want a configuration error", err)
			}
			if !strings.HasPrefix(err.Error(), tt.problem) {
				t.Errorf("error\n  %s\nwant\n  %s", err, tt.problem)
			}
		})
	}
}

// Good values in the environment are taken; an empty variable counts as unset.
func TestEnvironmentValuesAreTaken(t *testing.T) {
	t.Setenv("SCIDEX_WRITE_RATE", "2.5")
	t.Setenv("SCIDEX_WRITE_BURST", "0")
	t.Setenv("SCIDEX_ANONYMOUS_READ", "true")
	t.Setenv("SCIDEX_SHUTDOWN_TIMEOUT", "")
	t.Setenv("SCIDEX_LOG_LEVEL", "DEBUG")
	t.Setenv("SCIDEX_ADDR", ":9090")
	tf := newTestFlags()
	if err := tf.f.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if *tf.rate != 2.5 || *tf.burst != 0 || !*tf.on || *tf.wait != 15*time.Second || *tf.level != "DEBUG" || *tf.addr != ":9090" {
		t.Errorf("got rate %v burst %v anonymous %v wait %v level %q addr %q", *tf.rate, *tf.burst, *tf.on, *tf.wait, *tf.level, *tf.addr)
	}
}

// The command line is held to the same rules, and a flag beats its variable.
func TestFlagValuesAreChecked(t *testing.T) {
	tests := []struct {
		args    []string
		problem string
	}{
		{[]string{"--write-rate", "fast"}, `--write-rate="fast" (SCIDEX_WRITE_RATE): want a number (writes per second per actor, 0 = unlimited)`},
		{[]string{"--write-burst=-1"}, `--write-burst="-1" (SCIDEX_WRITE_BURST): want at least 0`},
		{[]string{"--anonymous-read=maybe"}, `--anonymous-read="maybe" (SCIDEX_ANONYMOUS_READ): want true or false`},
		{[]string{"--shutdown-timeout", "soon"}, `--shutdown-timeout="soon" (SCIDEX_SHUTDOWN_TIMEOUT): want a duration`},
		{[]string{"--log-level", "trace"}, `--log-level="trace" (SCIDEX_LOG_LEVEL): want one of debug, info, warn, error`},
		{[]string{"--nope"}, `flag provided but not defined: -nope (see scidex test -h)`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			err := newTestFlags().f.Parse(tt.args)
			var bad *configError
			if !errors.As(err, &bad) {
				t.Fatalf("Parse = %v, want a configuration error", err)
			}
			if !strings.HasPrefix(err.Error(), tt.problem) {
				t.Errorf("error\n  %s\nwant\n  %s", err, tt.problem)
			}
		})
	}

	t.Setenv("SCIDEX_WRITE_RATE", "5")
	tf := newTestFlags()
	if err := tf.f.Parse([]string{"--write-rate", "7", "--anonymous-read", "--shutdown-timeout", "1m"}); err != nil {
		t.Fatal(err)
	}
	if *tf.rate != 7 || !*tf.on || *tf.wait != time.Minute {
		t.Errorf("got rate %v anonymous %v wait %v", *tf.rate, *tf.on, *tf.wait)
	}
}

// Every problem is reported at once, one a line.
func TestEveryProblemAtOnce(t *testing.T) {
	t.Setenv("SCIDEX_WRITE_RATE", "abc")
	t.Setenv("SCIDEX_LOG_LEVEL", "loud")
	err := newTestFlags().f.Parse([]string{"--write-burst", "x"})
	want := "3 configuration problems:\n" +
		`  SCIDEX_WRITE_RATE="abc" (--write-rate): want a number (writes per second per actor, 0 = unlimited)` + "\n" +
		`  SCIDEX_LOG_LEVEL="loud" (--log-level): want one of debug, info, warn, error (how much to log)` + "\n" +
		`  --write-burst="x" (SCIDEX_WRITE_BURST): want a whole number (burst of writes per actor)`
	if err == nil || err.Error() != want {
		t.Errorf("error\n%v\nwant\n%s", err, want)
	}
}

// -h is help, not a problem.
func TestHelpIsNotAProblem(t *testing.T) {
	if err := newTestFlags().f.Parse([]string{"-h"}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("Parse(-h) = %v, want flag.ErrHelp", err)
	}
}

// A burst below 1 while writes are limited would refuse every write.
func TestWriteBurstNeedsARate(t *testing.T) {
	if err := checkWriteLimits(100, 0); err == nil || !strings.Contains(err.Error(),
		"--write-burst=0 (SCIDEX_WRITE_BURST): want at least 1 while --write-rate (SCIDEX_WRITE_RATE) is 100") {
		t.Errorf("rate 100 burst 0: %v", err)
	}
	for _, ok := range []struct {
		rate  float64
		burst int
	}{{0, 0}, {100, 1}, {0.5, 500}} {
		if err := checkWriteLimits(ok.rate, ok.burst); err != nil {
			t.Errorf("rate %v burst %v: %v", ok.rate, ok.burst, err)
		}
	}
}

// A value quoted in a problem never shows a password.
func TestQuoteHidesPasswords(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://scidex:hunter2@db:5432/scidex": `"postgres://scidex:xxxxx@db:5432/scidex"`,
		"host=db password=hunter2 dbname=scidex":   `"host=db password=xxxxx dbname=scidex"`,
		"postgres://scidex:hunter2@db:x/scidex":    `"postgres://scidex:xxxxx@db:x/scidex"`,
		"postgres://scidex@db/scidex":              `"postgres://scidex@db/scidex"`,
		"abc":                                      `"abc"`,
	} {
		if got := quote(in); got != want {
			t.Errorf("quote(%q) = %s, want %s", in, got, want)
		}
	}
}

// --delegation takes actor[/session[/task]] steps, or the claim as JSON.
func TestParseDelegation(t *testing.T) {
	tests := []struct {
		in   string
		want auth.DelegationChain
		err  string
	}{
		{"", nil, ""},
		{"human:ada", auth.DelegationChain{{ActorID: "human:ada"}}, ""},
		{"human:ada/s-ada, agent:orch/s-orch/task-42", auth.DelegationChain{
			{ActorID: "human:ada", SessionID: "s-ada"}, {ActorID: "agent:orch", SessionID: "s-orch", TaskID: "task-42"}}, ""},
		{"agent:orch//task-42", auth.DelegationChain{{ActorID: "agent:orch", TaskID: "task-42"}}, ""},
		{`[{"actor_id": "org/lab, inc", "session_id": "s"}]`, auth.DelegationChain{{ActorID: "org/lab, inc", SessionID: "s"}}, ""},
		{"human:ada,,agent:orch", nil, "step 2 has no actor"},
		{"/s-1", nil, "step 1 has no actor"},
		{"a/b/c/d", nil, "step 1 has 4 parts, want actor[/session[/task]]"},
		{`[{"session_id": "s"}]`, nil, "delegation_chain[0]: actor_id is missing"},
	}
	for _, tt := range tests {
		got, err := parseDelegation(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parseDelegation(%q) = %v, %v; want an error saying %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("parseDelegation(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

// -h shows defaults, and a default may come from the environment: a password in
// it is not printed.
func TestUsageHidesPasswords(t *testing.T) {
	t.Setenv("SCIDEX_LISTEN_URL", "postgres://scidex:hunter2@db:5432/scidex")
	f := newFlags("serve")
	f.str("listen-url", "SCIDEX_LISTEN_URL", "", "direct database connection for LISTEN", connString)
	var b strings.Builder
	f.usage(&b)
	if strings.Contains(b.String(), "hunter2") || !strings.Contains(b.String(), "postgres://scidex:xxxxx@db:5432/scidex") {
		t.Errorf("usage:\n%s", b.String())
	}
}
