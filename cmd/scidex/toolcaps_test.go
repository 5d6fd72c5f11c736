package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/toolspec"
)

// capLimitsOf parses args and the environment as serve does and returns the
// operator's resource caps, or the error that stops the start.
func capLimitsOf(args ...string) (toolspec.CapLimits, error) {
	f := newFlags("serve")
	tf := addToolFlags(f, 4)
	if err := f.Parse(args); err != nil {
		return toolspec.CapLimits{}, err
	}
	o, err := tf.dispatchOpts()
	return o.Caps, err
}

// The resource-cap flags refuse a value that makes no sense — not a number,
// zero or negative, a maximum below its default, a rescue sooner than the
// longest wall time — with one line naming the flag, its variable, the value
// and what is wanted; before, there were no such flags and any cap a
// manifest asked for was taken.
func TestToolCapFlagsAreChecked(t *testing.T) {
	tests := []struct {
		name    string
		env     []string
		args    []string
		problem string
	}{
		{"max memory negative", []string{"SCIDEX_TOOL_MAX_MEMORY_GB=-1"}, nil,
			`SCIDEX_TOOL_MAX_MEMORY_GB="-1" (--tool-max-memory-gb): want more than 0 (the largest memory cap in GB any tool may declare; registration refuses more)`},
		{"max cpus zero", nil, []string{"--tool-max-cpus=0"},
			`--tool-max-cpus="0" (SCIDEX_TOOL_MAX_CPUS): want more than 0`},
		{"default cpus not a number", []string{"SCIDEX_TOOL_DEFAULT_CPUS=many"}, nil,
			`SCIDEX_TOOL_DEFAULT_CPUS="many" (--tool-default-cpus): want a number`},
		{"default wall time zero", nil, []string{"--tool-default-wall-time", "0s"},
			`--tool-default-wall-time="0s" (SCIDEX_TOOL_DEFAULT_WALL_TIME): want more than 0s`},
		{"max wall time without a unit", []string{"SCIDEX_TOOL_MAX_WALL_TIME=60"}, nil,
			`SCIDEX_TOOL_MAX_WALL_TIME="60" (--tool-max-wall-time): want a duration such as 500ms, 15s or 2m`},
		{"max memory below the default", nil, []string{"--tool-max-memory-gb=0.25"},
			`--tool-max-memory-gb=0.25 (SCIDEX_TOOL_MAX_MEMORY_GB): want at least --tool-default-memory-gb (SCIDEX_TOOL_DEFAULT_MEMORY_GB), which is 0.5 (a tool declaring no memory_gb gets the default)`},
		{"default cpus above the max", []string{"SCIDEX_TOOL_DEFAULT_CPUS=8"}, nil,
			`--tool-max-cpus=4 (SCIDEX_TOOL_MAX_CPUS): want at least --tool-default-cpus (SCIDEX_TOOL_DEFAULT_CPUS), which is 8 (a tool declaring no cpu_count gets the default)`},
		{"max wall time below the default", nil, []string{"--tool-default-wall-time=5m", "--tool-max-wall-time=2m"},
			`--tool-max-wall-time=2m0s (SCIDEX_TOOL_MAX_WALL_TIME): want at least --tool-default-wall-time (SCIDEX_TOOL_DEFAULT_WALL_TIME), which is 5m0s`},
		{"rescue sooner than the longest wall time", nil, []string{"--tool-rescue-after=30m"},
			`--tool-rescue-after=30m0s (SCIDEX_TOOL_RESCUE_AFTER): want at least --tool-max-wall-time (SCIDEX_TOOL_MAX_WALL_TIME), which is 1h0m0s (a queued call running its full wall time would be presumed dead)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, kv := range tt.env {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			_, err := capLimitsOf(tt.args...)
			var bad *configError
			if !errors.As(err, &bad) {
				t.Fatalf("got %v, want a configuration error", err)
			}
			if len(bad.problems) != 1 || !strings.HasPrefix(bad.problems[0], tt.problem) {
				t.Errorf("problems\n  %s\nwant\n  %s", strings.Join(bad.problems, "\n  "), tt.problem)
			}
		})
	}
}

// Good values, from flags or the environment, are the dispatcher's limits;
// with none, the defaults are toolspec.DefaultCapLimits.
func TestToolCapFlagsAreTaken(t *testing.T) {
	got, err := capLimitsOf()
	if err != nil || got != toolspec.DefaultCapLimits() {
		t.Fatalf("no flags: %+v, %v; want %+v", got, err, toolspec.DefaultCapLimits())
	}
	t.Setenv("SCIDEX_TOOL_MAX_MEMORY_GB", "16")
	t.Setenv("SCIDEX_TOOL_DEFAULT_CPUS", "2")
	got, err = capLimitsOf("--tool-max-cpus", "8", "--tool-default-wall-time", "30s", "--tool-max-wall-time", "2h", "--tool-rescue-after", "3h", "--tool-default-memory-gb", "1")
	want := toolspec.CapLimits{
		Default: toolspec.CapSet{WallTime: 30 * time.Second, MemoryGB: 1, CPUs: 2},
		Max:     toolspec.CapSet{WallTime: 2 * time.Hour, MemoryGB: 16, CPUs: 8},
	}
	if err != nil || got != want {
		t.Errorf("got %+v, %v; want %+v", got, err, want)
	}
}
