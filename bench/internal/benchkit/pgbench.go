package benchkit

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// PgbenchOpts says what pgbench runs: the raw-SQL floor a benchmark compares
// the server with.
type PgbenchOpts struct {
	// Conn is the cluster's connection string.
	Conn string
	// Script is the path of the pgbench script, run prepared.
	Script string
	// Clients is pgbench's -c: as many as the server's clients.
	Clients int
	// Seconds is pgbench's -T.
	Seconds int
	// Dir is pgbench's working directory, where its -l logs go.
	Dir string
	// Args are more flags (-l --log-prefix ...).
	Args []string
}

var tpsRE = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)

// Pgbench runs the script with two threads and returns the transactions per
// second pgbench reports (without the connection time).
func Pgbench(o PgbenchOpts) float64 {
	args := []string{"-n", "-M", "prepared", "-c", strconv.Itoa(o.Clients), "-j", "2", "-T", strconv.Itoa(o.Seconds), "-f", o.Script}
	args = append(append(args, o.Args...), ConnArgs(o.Conn)...)
	cmd := exec.Command(filepath.Join(PGBinDir(), "pgbench"), args...)
	cmd.Dir = o.Dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		Fail(fmt.Errorf("pgbench: %v\n%s", err, out))
	}
	m := tpsRE.FindSubmatch(out)
	if m == nil {
		Fail(fmt.Errorf("pgbench output has no tps:\n%s", out))
	}
	tps, _ := strconv.ParseFloat(string(m[1]), 64)
	return tps
}

var kvRE = regexp.MustCompile(`(\w+)='?([^' ]*)'?`)

// ConnParams splits the cluster's keyword/value connection string.
func ConnParams(conn string) map[string]string {
	kv := map[string]string{}
	for _, m := range kvRE.FindAllStringSubmatch(conn, -1) {
		kv[m[1]] = m[2]
	}
	return kv
}

// ConnArgs turns the connection string into pgbench and psql flags.
func ConnArgs(conn string) []string {
	kv := ConnParams(conn)
	return []string{"-h", kv["host"], "-p", kv["port"], "-U", kv["user"], kv["dbname"]}
}

// ExecSQL runs statements on a connection of its own.
func ExecSQL(ctx context.Context, conn, sql string) {
	c, err := pgx.Connect(ctx, conn)
	Check(err)
	defer c.Close(ctx)
	_, err = c.Exec(ctx, sql)
	Check(err)
}

// PGBinDir finds the PostgreSQL client binaries the way the embedded cluster
// finds its server binaries: $SCIDEX_PG_BIN, pg_config, or the newest
// /usr/lib/postgresql/*/bin with a pgbench.
func PGBinDir() string {
	if d := os.Getenv("SCIDEX_PG_BIN"); d != "" {
		return d
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		if d := strings.TrimSpace(string(out)); exists(filepath.Join(d, "pgbench")) {
			return d
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Strings(dirs)
	for i := len(dirs) - 1; i >= 0; i-- {
		if exists(filepath.Join(dirs[i], "pgbench")) {
			return dirs[i]
		}
	}
	Fail(fmt.Errorf("pgbench not found"))
	return ""
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
