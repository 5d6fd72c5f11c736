package app

import (
	"context"

	"github.com/scidex/substrate/skills"
	"github.com/scidex/substrate/tools"
	"github.com/scidex/substrate/tools/debate"
)

// InstallSkills is the start hook that registers the skills' tools and skill
// artifacts, and the action verbs' tools (Config.OnStart).
func InstallSkills(ctx context.Context, a *App) error {
	if err := skills.Install(ctx, a.Registrar, a.Store, skills.Catalog(skills.Deps{Store: a.Store})); err != nil {
		return err
	}
	debate.Bind(a.Store, a.Dispatch, a.Packets)
	return tools.InstallVerbs(ctx, a.Registrar, tools.Verbs(skills.Deps{Store: a.Store}), a.log)
}
