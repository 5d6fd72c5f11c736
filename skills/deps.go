package skills

import (
	"github.com/scidex/substrate/internal/budget"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/skills/chem"
)

// Deps is what the skills' functions use beyond their arguments.
type Deps struct {
	// Store is where a skill reads the artifacts it is pointed at and
	// records the figures it draws, as the caller.
	Store *store.Store
	// DatasetDir is where dataset files are read: a dataset artifact's
	// files[].path is relative to it, and nothing outside it can be opened
	// (symlinks included). Empty: files are not read, only tables kept
	// inline.
	DatasetDir string
	// Sandbox runs the library skills' workers (chem.sar_table's RDKit
	// script): the server's bwrap runtime. Nil: those skills refuse to run.
	Sandbox chem.Sandbox
	// Budgets are the actors' budgets a verb spends from in its own
	// transaction (market.trade's cost). Nil: budget.New with no operator
	// default, as the dispatcher's own default.
	Budgets *budget.Budgets
	// GPUs is how many GPUs the operator says this server has (--gpus) and
	// MaxVRAMGB the most VRAM one gpu.submit job may ask for
	// (--gpu-max-vram-gb).
	GPUs      int
	MaxVRAMGB float64
}
