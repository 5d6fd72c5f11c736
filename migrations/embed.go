// Package migrations holds the database schema as numbered SQL files, embedded in
// the binary and applied in order by internal/migrate. sqlc reads the same files to
// generate queries, so there is no second, hand-kept copy of the schema.
package migrations

import "embed"

// FS holds every migration: NNNN_name.up.sql and its NNNN_name.down.sql.
//
//go:embed *.sql
var FS embed.FS
