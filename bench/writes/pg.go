package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/scidex/substrate/internal/pgembed"
)

var kvRE = regexp.MustCompile(`(\w+)='?([^' ]*)'?`)

// connArgs turns the cluster's keyword connection string into pgbench/psql flags.
func connArgs(c *pgembed.Cluster) []string {
	kv := map[string]string{}
	for _, m := range kvRE.FindAllStringSubmatch(c.ConnString(), -1) {
		kv[m[1]] = m[2]
	}
	return []string{"-h", kv["host"], "-p", kv["port"], "-U", kv["user"], kv["dbname"]}
}

func psql(c *pgembed.Cluster, sql string) {
	conn, err := pgx.Connect(context.Background(), c.ConnString())
	check(err)
	defer conn.Close(context.Background())
	_, err = conn.Exec(context.Background(), sql)
	check(err)
}

// pgBinDir finds the PostgreSQL binaries the way the embedded cluster does.
func pgBinDir() string {
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		if d := strings.TrimSpace(string(out)); fileExists(filepath.Join(d, "pgbench")) {
			return d
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Strings(dirs)
	for i := len(dirs) - 1; i >= 0; i-- {
		if fileExists(filepath.Join(dirs[i], "pgbench")) {
			return dirs[i]
		}
	}
	return ""
}

func fileExists(p string) bool {
	_, err := exec.LookPath(p)
	return err == nil
}
