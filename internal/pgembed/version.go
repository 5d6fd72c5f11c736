package pgembed

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// clusterMajor returns the major version recorded in an existing cluster's
// PG_VERSION file, or "" when there is no cluster yet.
func clusterMajor(data string) string {
	b, err := os.ReadFile(filepath.Join(data, "PG_VERSION"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

var versionRE = regexp.MustCompile(`\(PostgreSQL\) (\d+)(?:\.(\d+))?`)

// serverMajor runs `postgres -V` and returns the major version ("15", or
// "9.6" for releases before 10).
func serverMajor(ctx context.Context, postgres string) (string, error) {
	out, err := runAs{}.command(ctx, "", postgres, "-V").Output()
	if err != nil {
		return "", fmt.Errorf("pgembed: %s -V: %w", postgres, err)
	}
	m := versionRE.FindStringSubmatch(string(out))
	if m == nil {
		return "", fmt.Errorf("pgembed: cannot parse %s -V output %q", postgres, strings.TrimSpace(string(out)))
	}
	if len(m[1]) == 1 && m[2] != "" { // 9.x
		return m[1] + "." + m[2], nil
	}
	return m[1], nil
}

// checkVersion fails when the binaries in binDir cannot run the cluster.
func checkVersion(ctx context.Context, binDir string, l layout) error {
	want := clusterMajor(l.data)
	got, err := serverMajor(ctx, filepath.Join(binDir, "postgres"))
	if err != nil || want == "" || got == want {
		return err
	}
	return &hintError{
		kind: ErrNoBinaries,
		msg: fmt.Sprintf("cluster %s was created by PostgreSQL %s but %s holds PostgreSQL %s: install the PostgreSQL %s server binaries (Debian/Ubuntu: apt-get install -y postgresql-%s) and set SCIDEX_PG_BIN to their directory, or upgrade the cluster with pg_upgrade",
			l.data, want, binDir, got, want, want),
	}
}
