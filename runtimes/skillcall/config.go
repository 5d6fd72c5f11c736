package skillcall

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/scidex/substrate/internal/toolname"
	"github.com/scidex/substrate/runtimes"
)

// Config is a skill_call tool's runtime_config: the packet every call of the
// tool writes, but for its inputs (the call's arguments).
type Config struct {
	// Skill is the dotted name of the skill the agent is to apply.
	Skill string `json:"skill"`
	// Persona is the role the agent adopts (skeptic, theorist...).
	Persona string `json:"persona,omitempty"`
	// Instructions say what to do and what to hand back (markdown).
	Instructions string `json:"instructions"`
	// MaxSteps bounds the agent's steps (tool calls or turns).
	MaxSteps *int `json:"max_steps,omitempty"`
	// BudgetUSD is the most the agent may spend, in US dollars.
	BudgetUSD *float64 `json:"budget_usd,omitempty"`
}

// shape is said in every refusal of a malformed runtime_config.
const shape = `a skill_call runtime_config is {"skill": "<skill name>", "instructions": "<what to do>", ` +
	`"persona"?: "<role>", "max_steps"?: <n ≥ 1>, "budget_usd"?: <dollars ≥ 0>} and nothing else`

// decode reads runtime_config strictly and checks each field; every problem
// names its path in the manifest.
func decode(raw json.RawMessage) (*Config, []runtimes.Problem) {
	c, err := runtimes.DecodeConfig[Config](raw)
	if err != nil {
		return nil, []runtimes.Problem{{Path: "runtime_config", Constraint: "skill_call_config", Message: fmt.Sprintf("%s: %v", shape, err)}}
	}
	var ps []runtimes.Problem
	switch {
	case c.Skill == "":
		ps = append(ps, runtimes.Problem{Path: "runtime_config.skill", Constraint: "required",
			Message: "a skill_call tool names the skill its work packets ask for, e.g. literature.evidence_review"})
	case !toolname.Valid(c.Skill):
		ps = append(ps, runtimes.Problem{Path: "runtime_config.skill", Constraint: "pattern",
			Message: fmt.Sprintf("%q is not a skill name: %s (at most %d bytes)", c.Skill, toolname.Rule, toolname.MaxLength)})
	}
	if strings.TrimSpace(c.Instructions) == "" {
		ps = append(ps, runtimes.Problem{Path: "runtime_config.instructions", Constraint: "required",
			Message: "a skill_call tool says what the agent is to do and hand back, in runtime_config.instructions"})
	}
	if c.MaxSteps != nil && *c.MaxSteps < 1 {
		ps = append(ps, runtimes.Problem{Path: "runtime_config.max_steps", Constraint: "minimum",
			Message: fmt.Sprintf("max_steps is at least 1, not %d", *c.MaxSteps)})
	}
	if c.BudgetUSD != nil && !(*c.BudgetUSD >= 0) {
		ps = append(ps, runtimes.Problem{Path: "runtime_config.budget_usd", Constraint: "minimum",
			Message: fmt.Sprintf("budget_usd is a number of dollars, at least 0, not %v", *c.BudgetUSD)})
	}
	if len(ps) > 0 {
		return nil, ps
	}
	return &c, nil
}
