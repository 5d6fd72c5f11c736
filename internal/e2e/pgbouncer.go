package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/scidex/substrate/internal/dbtest/watchdog"
)

// PgBouncer is a running pgbouncer in transaction pooling mode in front of one
// test database.
type PgBouncer struct {
	// URL connects through the pooler, with the query mode a transaction
	// pooler without prepared-statement support (PgBouncer < 1.21) needs: a
	// named prepared statement (pgx's default) lives on one server connection
	// and the next transaction may get another, so pgx caches only statement
	// descriptions and sends each query parsed, bound and executed in one
	// round trip (cache_describe). The text modes (exec, simple_protocol)
	// would work with the pooler too but send a []byte argument as bytea,
	// which PostgreSQL refuses where the store passes JSON.
	URL string
	// AdminURL connects to the pooler's admin console (SHOW STATS, SHOW
	// POOLS), which speaks only the simple protocol.
	AdminURL string
	// Database is the name clients connect to.
	Database string
	proc     *Daemon
}

// PgBouncerOpts configures StartPgBouncer.
type PgBouncerOpts struct {
	// Upstream is the database to pool, as a libpq/pgx connection string on
	// a server that lets its user in without a password over the given
	// host (the test cluster: trust over its Unix socket).
	Upstream string
	// PoolSize is how many server connections the pooler keeps to it.
	// Default 16.
	PoolSize int
}

// StartPgBouncer runs pgbouncer on a free loopback port with a generated
// configuration, clients authenticating with SCRAM against a generated
// password, and waits until it answers a query through to PostgreSQL. It is
// stopped when the test ends. pgbouncer refuses to run as root: then it runs
// as the owner of the upstream's socket directory (the only user besides root
// that can enter it), or as nobody for a TCP upstream.
func StartPgBouncer(t testing.TB, o PgBouncerOpts) *PgBouncer {
	t.Helper()
	bin := NeedBinary(t, "pgbouncer")
	up, err := pgconn.ParseConfig(o.Upstream)
	if err != nil {
		t.Fatalf("pgbouncer upstream: %v", err)
	}
	if o.PoolSize == 0 {
		o.PoolSize = 16
	}
	cred := dropCredential(t, up.Host)
	dir := sharedDir(t, "scidex-pgbouncer-", cred)
	port := FreePort(t)
	password := randomHex(t, 16)
	const dbName = "scidex"
	userList := fmt.Sprintf("%q %q\n", up.User, password)
	// deploy/pgbouncer.ini, with this test's database, port and auth file.
	ini := deployedINI(t, map[string]string{
		dbName:              fmt.Sprintf("host=%s port=%d dbname=%s user=%s", up.Host, up.Port, up.Database, up.User),
		"listen_addr":       "127.0.0.1",
		"listen_port":       strconv.Itoa(port),
		"auth_file":         filepath.Join(dir, "userlist.txt"),
		"default_pool_size": strconv.Itoa(o.PoolSize),
		"stats_users":       up.User,
	})
	writeOwned(t, filepath.Join(dir, "userlist.txt"), userList, cred)
	cfg := filepath.Join(dir, "pgbouncer.ini")
	writeOwned(t, cfg, ini, cred)

	cmd := exec.Command(bin, cfg)
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	d := StartDaemon(t, "pgbouncer", cmd)
	base := fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/", up.User, password, port)
	pb := &PgBouncer{
		URL:      base + dbName + "?sslmode=disable&default_query_exec_mode=cache_describe",
		AdminURL: base + "pgbouncer?sslmode=disable&default_query_exec_mode=simple_protocol",
		Database: dbName,
		proc:     d,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := pollUntil(ctx, func() error {
		if err := d.Exited(); err != nil {
			return err
		}
		c, err := pgx.Connect(ctx, pb.URL)
		if err != nil {
			return err
		}
		defer c.Close(context.Background())
		_, err = c.Exec(ctx, "SELECT 1")
		return err
	}); err != nil {
		t.Fatalf("pgbouncer did not come up: %v\n%s", err, d.Log())
	}
	return pb
}

// Log returns what pgbouncer logged so far.
func (p *PgBouncer) Log() string { return p.proc.Log() }

// Stats returns the admin console's SHOW STATS row of the pooled database:
// column name to value (total_xact_count, total_query_count, ...).
func (p *PgBouncer) Stats(t testing.TB) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, p.AdminURL)
	if err != nil {
		t.Fatalf("pgbouncer admin console: %v", err)
	}
	defer c.Close(context.Background())
	rows, err := c.Query(ctx, "SHOW STATS")
	if err != nil {
		t.Fatalf("pgbouncer SHOW STATS: %v", err)
	}
	defer rows.Close()
	for rows.Next() {
		row := map[string]string{}
		for i, v := range rows.RawValues() { // text format: the simple protocol
			row[rows.FieldDescriptions()[i].Name] = string(v)
		}
		if row["database"] == p.Database {
			return row
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("pgbouncer SHOW STATS: %v", err)
	}
	t.Fatalf("pgbouncer SHOW STATS has no row for %s", p.Database)
	return nil
}

// dropCredential is who pgbouncer runs as: nil (this process's user) unless
// this process is root.
func dropCredential(t testing.TB, host string) *syscall.Credential {
	t.Helper()
	if os.Geteuid() != 0 {
		return nil
	}
	if strings.HasPrefix(host, "/") {
		if fi, err := os.Stat(host); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != 0 {
				return &syscall.Credential{Uid: st.Uid, Gid: st.Gid}
			}
		}
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Fatalf("pgbouncer refuses root and there is no user nobody: %v", err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}

// sharedDir is a fresh directory the given user can read (t.TempDir is 0700
// and belongs to this process's user), removed when the test ends.
func sharedDir(t testing.TB, prefix string, cred *syscall.Credential) string {
	t.Helper()
	dir, err := watchdog.TempDir(prefix) // removed if this process dies first
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = watchdog.Remove(dir) })
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// writeOwned writes a 0600 file owned by the given user (or this process's).
func writeOwned(t testing.TB, path, content string, cred *syscall.Credential) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if cred != nil {
		if err := os.Chown(path, int(cred.Uid), int(cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
}

func randomHex(t testing.TB, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// FreePort returns a loopback TCP port that was free a moment ago, for a
// program that must be told its port in advance.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// deployedINI is deploy/pgbouncer.ini with the values of set in place of its
// own (each key must be in the file: the test runs the deployed settings,
// only its addresses differ).
func deployedINI(t testing.TB, set map[string]string) string {
	t.Helper()
	raw, err := os.ReadFile(RepoFile(t, "deploy", "pgbouncer.ini"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	done := map[string]bool{}
	for i, l := range lines {
		key, _, ok := strings.Cut(l, "=")
		key = strings.TrimSpace(key)
		if v, want := set[key]; ok && want && !strings.HasPrefix(strings.TrimSpace(l), ";") {
			lines[i] = key + " = " + v
			done[key] = true
		}
	}
	for k := range set {
		if !done[k] {
			t.Fatalf("deploy/pgbouncer.ini has no %s setting", k)
		}
	}
	return strings.Join(lines, "\n")
}
