package main

import (
	"context"
)

// migrateCmd applies migrations and seeds the schema registry, then exits. On the
// embedded default it starts the cluster for the purpose and stops it after.
func migrateCmd(ctx context.Context, args []string) error {
	f := newFlags("migrate")
	c := addCommon(f)
	if err := f.Parse(args); err != nil {
		return err
	}
	log, err := c.logger()
	if err != nil {
		return err
	}
	db, err := openDatabase(ctx, *c.dataDir, log, false)
	if err != nil {
		return err
	}
	db.close()
	log.Info("database is up to date")
	return nil
}
