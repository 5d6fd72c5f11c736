package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/scidex/substrate/internal/problem"
)

// validateSkillTools checks a skill's dependencies.tools: each names a
// registered tool, and that tool is active (a skill built on a draft or a
// retired tool would not run for its users).
func validateSkillTools(ctx context.Context, c *Checker, in *ValidationInput) ([]problem.Detail, error) {
	var content struct {
		Dependencies struct {
			Tools []string `json:"tools"`
		} `json:"dependencies"`
	}
	if err := json.Unmarshal(in.Content, &content); err != nil {
		return nil, nil // the content schema reports it
	}
	var out []problem.Detail
	for i, name := range content.Dependencies.Tools {
		path := fmt.Sprintf("content.dependencies.tools.%d", i)
		row, err := c.w.q.ArtifactGetByTypeID(ctx, "tool", name) // tools are public
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			out = append(out, problem.Field(path, "skill_tools_active", fmt.Sprintf("no tool named %q is registered", name), name))
		case err != nil:
			return nil, err
		case row.LifecycleState == nil || *row.LifecycleState != "active":
			out = append(out, problem.Field(path, "skill_tools_active",
				fmt.Sprintf("tool %s is %s, not active: a skill depends only on active tools", name, deref(row.LifecycleState)), name))
		}
	}
	return out, nil
}
