package app

import (
	"context"

	"github.com/scidex/substrate/skills"
)

// InstallSkills is the start hook that registers the skills' tools and skill
// artifacts (Config.OnStart).
func InstallSkills(ctx context.Context, a *App) error {
	return skills.Install(ctx, a.Registrar, a.Store, skills.Catalog(skills.Deps{Store: a.Store}))
}
