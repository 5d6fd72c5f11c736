package toolspec

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/scidex/substrate/runtimes"
)

// ToolType is the artifact type of tools.
const ToolType = "tool"

// Manifest is a tool artifact's content, as the tool plane reads it.
type Manifest struct {
	Name          string          `json:"name"`
	Version       string          `json:"version"`
	Summary       string          `json:"summary"`
	Runtime       string          `json:"runtime"`
	RuntimeConfig json.RawMessage `json:"runtime_config"`
	InputSchema   json.RawMessage `json:"input_schema"`
	OutputSchema  json.RawMessage `json:"output_schema"`
	ResourceCaps  struct {
		WallTimeMin  float64  `json:"wall_time_min"`
		MemoryGB     float64  `json:"memory_gb"`
		CPUCount     float64  `json:"cpu_count"`
		VRAMGB       float64  `json:"vram_gb"`
		Network      string   `json:"network"`
		AllowedHosts []string `json:"allowed_hosts"`
	} `json:"resource_caps"`
	SandboxBackend string `json:"sandbox_backend"`
	SandboxImage   string `json:"sandbox_image"`
	CostModel      struct {
		FixedUSD    float64 `json:"fixed_usd"`
		VRAMHourUSD float64 `json:"vram_hour_usd"`
	} `json:"cost_model"`
	Files         []runtimes.File `json:"files"`
	Deterministic bool            `json:"deterministic"`
	Idempotent    bool            `json:"idempotent"`
	Retries       int             `json:"retries"`
	// CallsPublic makes the tool's calls public; by default a call is
	// readable by its caller, the tool's owner and admins only.
	CallsPublic bool `json:"calls_public"`
}

// DefaultWallTime is a tool's wall time when it declares none and no
// operator default applies (the dispatcher bounds each tool it loads with
// the operator's CapLimits first: Bound).
const DefaultWallTime = time.Minute

// Decode reads a tool artifact's content.
func Decode(content json.RawMessage) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(content, &m); err != nil {
		return nil, fmt.Errorf("decode tool manifest: %w", err)
	}
	return &m, nil
}

// WallTime is the tool's declared wall time, or the default, to the
// nanosecond its minutes stand for (2s is 0.0333… minutes, not 1.999999999s).
func (m *Manifest) WallTime() time.Duration {
	if m.ResourceCaps.WallTimeMin <= 0 {
		return DefaultWallTime
	}
	return time.Duration(math.Round(m.ResourceCaps.WallTimeMin * float64(time.Minute)))
}

// SecretRef is the operator secret the tool's runtime_config names (an
// http_post tool's secret_ref), "" for none.
func (m *Manifest) SecretRef() string {
	var c struct {
		SecretRef string `json:"secret_ref"`
	}
	_ = json.Unmarshal(m.RuntimeConfig, &c)
	return c.SecretRef
}

// RetryBudget is how many times a call whose worker died is run again: the
// declared retries of an idempotent tool, none for any other (running it
// twice could do harm twice).
func (m *Manifest) RetryBudget() int {
	if !m.Idempotent {
		return 0
	}
	return m.Retries
}

// RuntimeTool is what the runtime is told of the tool version whose ref is
// ref, with b serving its bundle files (nil for a check, which reads none).
func (m *Manifest) RuntimeTool(ref string, b runtimes.Bundle) *runtimes.Tool {
	network := m.ResourceCaps.Network
	if network == "" {
		network = "deny"
	}
	backend := m.SandboxBackend
	if backend == "" && m.Runtime == "bwrap" {
		backend = "bwrap"
	}
	return &runtimes.Tool{
		Ref: ref, Name: m.Name, Version: m.Version, Runtime: m.Runtime, Config: m.RuntimeConfig,
		Caps: runtimes.Caps{
			WallTime: m.WallTime(), MemoryBytes: int64(m.ResourceCaps.MemoryGB * (1 << 30)), CPUCount: m.ResourceCaps.CPUCount,
			VRAMGB: m.ResourceCaps.VRAMGB, Network: network, AllowedHosts: m.ResourceCaps.AllowedHosts,
		},
		SandboxBackend: backend, SandboxImage: m.SandboxImage, Files: m.Files, Bundle: b,
	}
}

// Cost is what a call costs under the tool's cost model: the fixed price
// plus, for a tool holding a GPU, the hourly price for the wall time it ran.
func (m *Manifest) Cost(wall time.Duration) float64 {
	c := m.CostModel.FixedUSD
	if m.ResourceCaps.VRAMGB > 0 {
		c += m.CostModel.VRAMHourUSD * wall.Hours()
	}
	return math.Round(c*1e6) / 1e6
}

// Estimate is the most a call can cost, held against its caller's budget
// while it runs: the fixed price, a GPU's hourly price for the whole wall
// time, and the budget a work packet gives its agent (an agent reports what
// it spent, and a packet without a budget_usd has no bound to hold).
func (m *Manifest) Estimate() float64 {
	c := m.Cost(m.WallTime())
	if m.Runtime == "skill_call" {
		var cfg struct {
			BudgetUSD float64 `json:"budget_usd"`
		}
		if json.Unmarshal(m.RuntimeConfig, &cfg) == nil && cfg.BudgetUSD > 0 {
			c += cfg.BudgetUSD
		}
	}
	return math.Round(c*1e6) / 1e6
}
