package toolspec_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/toolspec"
)

func manifest(t *testing.T, content string) *toolspec.Manifest {
	t.Helper()
	m, err := toolspec.Decode(json.RawMessage(content))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A manifest over a maximum is refused whoever writes it, naming the field
// and the maximum; over a default only without the grant; a skill_call's
// wall time (an agent's deadline) only against the maximum.
func TestCheckCaps(t *testing.T) {
	l := toolspec.CapLimits{Max: toolspec.CapSet{MemoryGB: 2}}.WithDefaults()
	m := manifest(t, `{"runtime": "bwrap", "resource_caps": {"memory_gb": 64, "cpu_count": 2, "network": "allow"}}`)
	got := toolspec.CheckCaps(l, m, true)
	if len(got) != 1 || got[0].Path != "content.resource_caps.memory_gb" || got[0].Constraint != "resource_cap_max" ||
		!strings.Contains(got[0].Message, "maximum of 2 GB") {
		t.Fatalf("granted, over the maximum: %+v", got)
	}
	paths := []string{}
	for _, d := range toolspec.CheckCaps(l, m, false) {
		paths = append(paths, d.Path+" "+d.Constraint)
	}
	want := "content.resource_caps.memory_gb resource_cap_max,content.resource_caps.cpu_count resource_cap_admin,content.resource_caps.network resource_cap_admin"
	if strings.Join(paths, ",") != want {
		t.Fatalf("not granted: %v", paths)
	}
	agent := manifest(t, `{"runtime": "skill_call", "resource_caps": {"wall_time_min": 30}}`)
	if got := toolspec.CheckCaps(l, agent, false); len(got) != 0 {
		t.Fatalf("a skill_call's 30 minutes is under the hour maximum: %+v", got)
	}
}

// Bound runs a tool at the default of each cap it declares none of and
// never above a maximum; the wall time keeps the nanoseconds its minutes
// stand for.
func TestBoundAndWallTime(t *testing.T) {
	l := toolspec.CapLimits{Default: toolspec.CapSet{WallTime: 2 * time.Second}, Max: toolspec.CapSet{CPUs: 2}}.WithDefaults()
	m := manifest(t, `{"runtime": "bwrap", "resource_caps": {"cpu_count": 8}}`)
	m.Bound(l)
	if m.WallTime() != 2*time.Second || m.ResourceCaps.CPUCount != 2 || m.ResourceCaps.MemoryGB != 0.5 {
		t.Fatalf("bound: wall %s, cpus %g, memory %g", m.WallTime(), m.ResourceCaps.CPUCount, m.ResourceCaps.MemoryGB)
	}
}

// A call's estimate holds the GPU's price for the whole wall time and a
// work packet's budget; its cost is what it ran.
func TestCostAndEstimate(t *testing.T) {
	gpu := manifest(t, `{"runtime": "bwrap", "resource_caps": {"wall_time_min": 30, "vram_gb": 16}, "cost_model": {"fixed_usd": 0.01, "vram_hour_usd": 2}}`)
	if c := gpu.Cost(15 * time.Minute); c != 0.51 {
		t.Fatalf("cost of 15 minutes: %g", c)
	}
	if e := gpu.Estimate(); e != 1.01 {
		t.Fatalf("estimate of 30 minutes: %g", e)
	}
	packet := manifest(t, `{"runtime": "skill_call", "runtime_config": {"budget_usd": 0.5}, "cost_model": {"fixed_usd": 0.1}}`)
	if e := packet.Estimate(); e != 0.6 {
		t.Fatalf("a packet's estimate: %g", e)
	}
}
