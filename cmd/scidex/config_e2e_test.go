package main

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/e2e"
)

// A configuration value that does not parse, or makes no sense, stops the real
// binary at start: exit status 2, a message naming the setting, the value and
// what is wanted, and nothing started (the data dir, where the cluster and the
// development secret would go, was never created). Before, SCIDEX_WRITE_RATE=abc
// ran the server at the default of 100.
func TestServeRefusesBadConfiguration(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		args []string
		want []string
	}{
		{"write rate not a number", []string{"SCIDEX_WRITE_RATE=abc"}, nil,
			[]string{`SCIDEX_WRITE_RATE="abc" (--write-rate): want a number (writes per second per actor, 0 = unlimited)`}},
		{"negative write rate flag", nil, []string{"--write-rate=-5"},
			[]string{`--write-rate="-5" (SCIDEX_WRITE_RATE): want at least 0`}},
		{"write burst 0 while limited", []string{"SCIDEX_WRITE_BURST=0"}, nil,
			[]string{`--write-burst=0 (SCIDEX_WRITE_BURST): want at least 1 while --write-rate (SCIDEX_WRITE_RATE) is 100`}},
		{"max body 0", []string{"SCIDEX_MAX_BODY_BYTES=0"}, nil,
			[]string{`SCIDEX_MAX_BODY_BYTES="0" (--max-body-bytes): want at least 1`}},
		{"max depth not a number", nil, []string{"--max-depth", "deep"},
			[]string{`--max-depth="deep" (SCIDEX_MAX_DEPTH): want a whole number`}},
		{"max complexity negative", []string{"SCIDEX_MAX_COMPLEXITY=-1"}, nil,
			[]string{`SCIDEX_MAX_COMPLEXITY="-1" (--max-complexity): want at least 1`}},
		{"max subscriptions 0", []string{"SCIDEX_MAX_SUBSCRIPTIONS=0"}, nil,
			[]string{`SCIDEX_MAX_SUBSCRIPTIONS="0" (--max-subscriptions): want at least 1`}},
		{"anonymous read not a boolean", []string{"SCIDEX_ANONYMOUS_READ=yes"}, nil,
			[]string{`SCIDEX_ANONYMOUS_READ="yes" (--anonymous-read): want true or false`}},
		{"introspection not a boolean", nil, []string{"--introspection=off"},
			[]string{`--introspection="off" (SCIDEX_INTROSPECTION): want true or false`}},
		{"shutdown timeout without a unit", []string{"SCIDEX_SHUTDOWN_TIMEOUT=15"}, nil,
			[]string{`SCIDEX_SHUTDOWN_TIMEOUT="15" (--shutdown-timeout): want a duration such as 500ms, 15s or 2m`}},
		{"unknown log level", []string{"SCIDEX_LOG_LEVEL=verbose"}, nil,
			[]string{`SCIDEX_LOG_LEVEL="verbose" (--log-level): want one of debug, info, warn, error`}},
		{"unknown log format", nil, []string{"--log-format", "yaml"},
			[]string{`--log-format="yaml" (SCIDEX_LOG_FORMAT): want one of text, json`}},
		{"address without a port", []string{"SCIDEX_PPROF_ADDR=6060"}, nil,
			[]string{`SCIDEX_PPROF_ADDR="6060" (--pprof-addr): want host:port`}},
		{"metrics address without a port", []string{"SCIDEX_METRICS_ADDR=metrics.local"}, nil,
			[]string{`SCIDEX_METRICS_ADDR="metrics.local" (--metrics-addr): want host:port`}},
		{"metrics address flag without a port", nil, []string{"--metrics-addr", "9090"},
			[]string{`--metrics-addr="9090" (SCIDEX_METRICS_ADDR): want host:port`}},
		{"listen URL that does not parse", []string{"SCIDEX_LISTEN_URL=postgres://scidex:hunter2@db:notaport/scidex"}, nil,
			[]string{`SCIDEX_LISTEN_URL="postgres://scidex:xxxxx@db:notaport/scidex" (--listen-url): want a PostgreSQL connection string`}},
		{"negative default budget", []string{"SCIDEX_BUDGET_DEFAULT_USD=-1"}, nil,
			[]string{`SCIDEX_BUDGET_DEFAULT_USD="-1" (--budget-default-usd): want a number of dollars, at least 0, or empty for no limit`}},
		{"unknown budget period", nil, []string{"--budget-default-period", "fortnight"},
			[]string{`--budget-default-period="fortnight" (SCIDEX_BUDGET_DEFAULT_PERIOD): want one of none, day, week, month`}},
		{"unknown mode", []string{"SCIDEX_MODE=prod"}, nil,
			[]string{`SCIDEX_MODE="prod" (--mode): want one of development, production`}},
		{"production without a key source", []string{"SCIDEX_MODE=production"}, nil,
			[]string{"SCIDEX_MODE=production needs a key source of its own: set SCIDEX_JWT_SECRET", "--jwt-public-keys (SCIDEX_JWT_PUBLIC_KEYS) or --jwks-url (SCIDEX_JWKS_URL)"}},
		{"OTEL sampler unknown", []string{"OTEL_TRACES_SAMPLER=sometimes"}, nil,
			[]string{`OTEL_TRACES_SAMPLER="sometimes": want one of always_on, always_off, traceidratio`}},
		{"OTEL sampler ratio out of range", []string{"OTEL_TRACES_SAMPLER=traceidratio", "OTEL_TRACES_SAMPLER_ARG=2"}, nil,
			[]string{`OTEL_TRACES_SAMPLER_ARG="2": want a number from 0 to 1`}},
		{"OTEL endpoint not a URL", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=collector:4318"}, nil,
			[]string{`OTEL_EXPORTER_OTLP_ENDPOINT="collector:4318": want an http:// or https:// URL with a host`}},
		{"OTEL SDK disabled not a boolean", []string{"OTEL_SDK_DISABLED=yes"}, nil,
			[]string{`OTEL_SDK_DISABLED="yes": want true or false`}},
		{"OTEL exporter unknown", []string{"OTEL_TRACES_EXPORTER=zipkin"}, nil,
			[]string{`OTEL_TRACES_EXPORTER="zipkin": want otlp or none`}},
		{"OTEL protocol grpc", []string{"OTEL_EXPORTER_OTLP_PROTOCOL=grpc"}, nil,
			[]string{`OTEL_EXPORTER_OTLP_PROTOCOL="grpc": want http/protobuf`}},
		{"OTEL batch delay not a number", []string{"OTEL_BSP_SCHEDULE_DELAY=5s"}, nil,
			[]string{`OTEL_BSP_SCHEDULE_DELAY="5s": want a whole number, at least 0`}},
		{"OTEL headers malformed, value not shown", []string{"OTEL_EXPORTER_OTLP_HEADERS=api-key"}, nil,
			[]string{`OTEL_EXPORTER_OTLP_HEADERS: want comma-separated key=value pairs (the value is not shown`}},
		{"unknown flag", nil, []string{"--write-rat", "5"},
			[]string{"flag provided but not defined: -write-rat (see scidex serve -h)"}},
		{"every problem at once", []string{"SCIDEX_WRITE_RATE=abc", "SCIDEX_MAX_DEPTH=-2"}, []string{"--max-body-bytes=2MiB"},
			[]string{"3 configuration problems:", `SCIDEX_WRITE_RATE="abc"`, `SCIDEX_MAX_DEPTH="-2" (--max-depth): want at least 1`,
				`--max-body-bytes="2MiB" (SCIDEX_MAX_BODY_BYTES): want a whole number`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dataDir := e2e.DataDir(t)
			status, stderr := runServe(t, tt.env, append([]string{"--addr", "127.0.0.1:0", "--data-dir", dataDir}, tt.args...))
			if status != 2 {
				t.Fatalf("exit status %d, want 2\n%s", status, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not say %q:\n%s", w, stderr)
				}
			}
			if !strings.HasPrefix(stderr, "scidex serve: ") {
				t.Errorf("stderr is more than the refusal:\n%s", stderr)
			}
			if _, err := os.Stat(dataDir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("data dir %s exists after a refused start (%v): something started", dataDir, err)
			}
		})
	}
}

// runServe runs `scidex serve` with args and extra environment until it exits,
// and returns its exit status and what it wrote to stderr. A server that starts
// listening is stopped at once (SIGTERM): a refused start never gets there.
func runServe(t *testing.T, env, args []string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e2e.Binary(t), append([]string{"serve"}, args...)...)
	cmd.Env = append(e2e.Command(t).Env, env...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		stderr.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "msg=listening") {
			_ = cmd.Process.Signal(syscall.SIGTERM) // so that it stops its cluster too
		}
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("scidex serve: %v\n%s", err, stderr.String())
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// scidex token holds its flags to the same rules.
func TestTokenRefusesBadFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--sub", "ada", "--ttl", "1d"}, `--ttl="1d": want a duration such as 500ms, 15s or 2m (how long the token is valid)`},
		{[]string{"--sub", "ada", "--ttl", "0s"}, `--ttl="0s": want more than 0s`},
		{[]string{"--sub", "ada", "--kind", "robot"}, `--kind="robot": want one of human, ai_local, ai_external, ai_swarm`},
		{[]string{"--sub", "ada", "--delegation", "human:ada,,agent:orch"}, `--delegation="human:ada,,agent:orch": step 2 has no actor, want actor[/session[/task]]`},
		{[]string{"--kind", "human"}, "--sub is required"},
	} {
		dataDir := e2e.DataDir(t)
		cmd := e2e.Command(t, append([]string{"token", "--data-dir", dataDir}, tt.args...)...)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), tt.want) {
			t.Errorf("scidex token %v: %v\n%s\nwant status 2 and %q", tt.args, err, out, tt.want)
		}
		if _, err := os.Stat(dataDir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("scidex token %v created the data dir", tt.args)
		}
	}
}
