package toolspec

import (
	"fmt"
	"time"

	"github.com/scidex/substrate/internal/problem"
)

// CapLimits are the operator's bounds on what a tool's resource_caps may ask
// for (ARCHITECTURE.md §5: operator resources are granted, never claimed).
// Default is what a tool declaring none of a cap runs with, and the most a
// tool may ask for unless an admin writes it; Max is what no tool may ask
// for, whoever writes it. A zero field is DefaultCapLimits' value.
type CapLimits struct {
	Default, Max CapSet
}

// CapSet holds one value of each cap the operator bounds.
type CapSet struct {
	WallTime time.Duration
	MemoryGB float64
	CPUs     float64
}

// DefaultCapLimits are the limits of a server configured with none: a
// minute, half a GiB and one CPU by default (the sandbox's own defaults
// before the operator set any), at most an hour, 8 GB and 4 CPUs.
func DefaultCapLimits() CapLimits {
	return CapLimits{
		Default: CapSet{WallTime: time.Minute, MemoryGB: 0.5, CPUs: 1},
		Max:     CapSet{WallTime: time.Hour, MemoryGB: 8, CPUs: 4},
	}
}

// WithDefaults fills each zero field from DefaultCapLimits.
func (l CapLimits) WithDefaults() CapLimits {
	d := DefaultCapLimits()
	fill := func(v *CapSet, d CapSet) {
		if v.WallTime <= 0 {
			v.WallTime = d.WallTime
		}
		if v.MemoryGB <= 0 {
			v.MemoryGB = d.MemoryGB
		}
		if v.CPUs <= 0 {
			v.CPUs = d.CPUs
		}
	}
	fill(&l.Default, d.Default)
	fill(&l.Max, d.Max)
	return l
}

// capField is one bounded cap of a manifest, in the manifest's unit.
type capField struct {
	name          string  // its key in resource_caps
	unit          string  // how a message names its unit
	asked         float64 // what the manifest declares; 0 when it declares none
	def, max      float64
	agentDeadline bool // the cap spends no server resource (see CheckCaps)
}

func capFields(l CapLimits, m *Manifest) []capField {
	rc := m.ResourceCaps
	return []capField{
		// A skill_call's wall time is how long an agent may take over its work
		// packet, not time the server computes: only its maximum applies.
		{"wall_time_min", "minutes", rc.WallTimeMin, l.Default.WallTime.Minutes(), l.Max.WallTime.Minutes(), m.Runtime == "skill_call"},
		{"memory_gb", "GB", rc.MemoryGB, l.Default.MemoryGB, l.Max.MemoryGB, false},
		{"cpu_count", "CPUs", rc.CPUCount, l.Default.CPUs, l.Max.CPUs, false},
	}
}

// CheckCaps holds a manifest's resource caps to the operator's limits (l,
// its defaults filled): no cap above its maximum, whoever writes it; unless
// granted (an admin writes it, or it is content already granted), no cap
// above its default and no network but deny. Each problem names the field,
// what was asked and the limit it passes.
func CheckCaps(l CapLimits, m *Manifest, granted bool) []problem.Detail {
	var out []problem.Detail
	for _, f := range capFields(l, m) {
		path := "content.resource_caps." + f.name
		switch {
		case f.asked > f.max:
			out = append(out, problem.Field(path, "resource_cap_max",
				fmt.Sprintf("%s %g is above this server's maximum of %g %s; no tool may ask for more", f.name, f.asked, f.max, f.unit), f.asked))
		case f.asked > f.def && !granted && !f.agentDeadline:
			out = append(out, problem.Field(path, "resource_cap_admin",
				fmt.Sprintf("%s %g is above this server's default of %g %s: only an admin registers a tool asking for more than the default (at most %g %s)",
					f.name, f.asked, f.def, f.unit, f.max, f.unit), f.asked))
		}
	}
	if n := m.ResourceCaps.Network; n != "" && n != "deny" && !granted {
		out = append(out, problem.Field("content.resource_caps.network", "resource_cap_admin",
			fmt.Sprintf("network %q reaches beyond the sandbox: only an admin registers a tool with network allow or specific (the default is deny)", n), n))
	}
	return out
}

// Bound makes m the manifest as this server runs it: each bounded cap it
// declares none of at the operator's default, and none above the operator's
// maximum (a version written before a maximum was lowered runs within it).
// l has its defaults filled (WithDefaults).
func (m *Manifest) Bound(l CapLimits) {
	rc := &m.ResourceCaps
	for _, c := range []struct {
		v        *float64
		def, max float64
	}{
		{&rc.WallTimeMin, l.Default.WallTime.Minutes(), l.Max.WallTime.Minutes()},
		{&rc.MemoryGB, l.Default.MemoryGB, l.Max.MemoryGB},
		{&rc.CPUCount, l.Default.CPUs, l.Max.CPUs},
	} {
		if *c.v <= 0 {
			*c.v = c.def
		}
		*c.v = min(*c.v, c.max)
	}
}
