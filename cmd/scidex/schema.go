package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/store"
)

// schemaCmd runs `scidex schema upgrade <type>`: the eager upgrade of a
// type's artifacts stored at older schema versions (store.UpgradeSchema,
// docs/schema-evolution.md), in the database of DATABASE_URL or of the data
// dir (joining a running server's embedded cluster).
func schemaCmd(ctx context.Context, args []string) error {
	usage := &configError{problems: []string{"usage: scidex schema upgrade [--batch N] [--after ID] <type> (rewrite the type's artifacts stored below its current schema version, upgraded)"}}
	if len(args) == 0 || args[0] != "upgrade" {
		return usage
	}
	f := newFlags("schema upgrade")
	c := addCommon(f)
	batch := f.integer("batch", "SCIDEX_UPGRADE_BATCH", store.DefaultUpgradeBatch, "artifacts read a page (each is its own write)", atLeast(1))
	after := f.str("after", "SCIDEX_UPGRADE_AFTER", "", "start after this artifact id (the cursor an interrupted run printed; a rerun from the start skips what is done)")
	if err := f.Parse(args[1:]); err != nil {
		return err
	}
	if f.NArg() != 1 {
		return usage
	}
	log, err := c.logger()
	if err != nil {
		return err
	}
	db, err := openDatabase(ctx, *c.dataDir, log, true)
	if err != nil {
		return err
	}
	defer db.close()
	st := store.New(store.Opts{Pool: db.pool, Logger: log})
	ctx = request.With(ctx, request.System("schema-upgrade", time.Now()))
	rep, err := st.UpgradeSchema(ctx, f.Arg(0), store.UpgradeOpts{Batch: *batch, After: *after,
		Page: func(r store.UpgradeReport) { printUpgrade(os.Stderr, r, false) }})
	if rep != nil {
		printUpgrade(os.Stdout, *rep, err == nil)
	}
	if err != nil {
		if rep != nil && rep.After != "" {
			return fmt.Errorf("%w (resume with --after %s)", err, rep.After)
		}
		return err
	}
	if len(rep.Failed) > 0 {
		return fmt.Errorf("%d artifacts of %s were left at their stored version (listed above)", len(rep.Failed), rep.Type)
	}
	return nil
}

// printUpgrade writes a report: one line so far (a page), or in all with the
// artifacts left as they were.
func printUpgrade(w io.Writer, r store.UpgradeReport, done bool) {
	if r.Immutable {
		fmt.Fprintf(w, "%s: %d artifacts below schema version %d; the type is immutable, so none is rewritten: reads serve them upgraded\n", r.Type, r.Stale, r.Version)
		return
	}
	state := "so far"
	if done {
		state = "done"
	}
	fmt.Fprintf(w, "%s %s: %d stale, %d upgraded to schema version %d, %d already current content restamped, %d written by others meanwhile, %d failed (after %q)\n",
		r.Type, state, r.Stale, r.Upgraded, r.Version, r.Restamped, r.Raced, len(r.Failed), r.After)
	if done {
		for _, f := range r.Failed {
			fmt.Fprintf(w, "  %s: %s\n", f.Ref, strings.TrimSpace(f.Reason))
		}
	}
}
