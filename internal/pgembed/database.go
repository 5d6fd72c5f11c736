package pgembed

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// connString is the keyword/value connection string for database db over
// the cluster's private socket.
func connString(l layout, db string) string {
	return "host=" + quoteConnValue(l.run) +
		" port=" + strconv.Itoa(port) +
		" user=" + superuser +
		" dbname=" + quoteConnValue(db) +
		" sslmode=disable"
}

// quoteConnValue quotes a value for a libpq keyword/value string.
func quoteConnValue(v string) string {
	v = strings.ReplaceAll(v, `\`, `\\`)
	return `'` + strings.ReplaceAll(v, `'`, `\'`) + `'`
}

// prepareDatabase checks that the server on our socket serves this
// cluster's data directory and creates database db if it is missing. It
// reports whether it created db.
func prepareDatabase(ctx context.Context, l layout, db string) (bool, error) {
	conn, err := pgx.Connect(ctx, connString(l, "postgres"))
	if err != nil {
		return false, fmt.Errorf("pgembed: connect to %s: %w", l.socket(), err)
	}
	defer conn.Close(context.Background())
	var dataDir string
	if err := conn.QueryRow(ctx, "SHOW data_directory").Scan(&dataDir); err != nil {
		return false, fmt.Errorf("pgembed: %w", err)
	}
	if !samePath(dataDir, l.data) {
		return false, fmt.Errorf("pgembed: the server on %s serves %s, not %s", l.socket(), dataDir, l.data)
	}
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", db).Scan(&exists); err != nil {
		return false, fmt.Errorf("pgembed: %w", err)
	}
	if exists {
		return false, nil
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{db}.Sanitize()); err != nil {
		return false, fmt.Errorf("pgembed: create database %q: %w", db, err)
	}
	return true, nil
}

func samePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}
