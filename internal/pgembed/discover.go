package pgembed

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// serverBinaries are the programs the package runs.
var serverBinaries = []string{"initdb", "postgres"}

// finder locates the PostgreSQL server binaries. Its sources are fields so
// tests can replace them.
type finder struct {
	binDir     string                       // Options.BinDir
	getenv     func(string) string          // reads SCIDEX_PG_BIN
	pgConfig   func() (string, error)       // `pg_config --bindir`
	debianRoot string                       // holds <version>/bin
	lookPath   func(string) (string, error) // searches PATH
	wantMajor  string                       // major version of an existing cluster, if any
}

func defaultFinder(binDir string) finder {
	return finder{
		binDir:     binDir,
		getenv:     os.Getenv,
		pgConfig:   pgConfigBindir,
		debianRoot: "/usr/lib/postgresql",
		lookPath:   exec.LookPath,
	}
}

// explicit reports whether the user named the binary directory.
func (f finder) explicit() bool {
	return f.binDir != "" || f.getenv("SCIDEX_PG_BIN") != ""
}

// find returns the directory that holds all server binaries.
func (f finder) find() (string, error) {
	if f.binDir != "" {
		return checkExplicit(f.binDir, "Options.BinDir")
	}
	if d := f.getenv("SCIDEX_PG_BIN"); d != "" {
		return checkExplicit(d, "SCIDEX_PG_BIN")
	}
	var looked []string
	try := func(dir, label string) bool {
		if hasServerBinaries(dir) {
			return true
		}
		looked = append(looked, label)
		return false
	}
	if f.wantMajor != "" {
		d := filepath.Join(f.debianRoot, f.wantMajor, "bin")
		if hasServerBinaries(d) {
			return d, nil
		}
	}
	if d, err := f.pgConfig(); err == nil && d != "" {
		if try(d, d+" (pg_config --bindir)") {
			return d, nil
		}
	} else {
		looked = append(looked, "pg_config --bindir")
	}
	for _, d := range debianBinDirs(f.debianRoot) {
		if try(d, d) {
			return d, nil
		}
	}
	looked = append(looked, filepath.Join(f.debianRoot, "*", "bin"))
	if p, err := f.lookPath(serverBinaries[0]); err == nil {
		if d := filepath.Dir(p); hasServerBinaries(d) {
			return d, nil
		}
	}
	looked = append(looked, "PATH")
	return "", noBinaries(dedupe(looked))
}

func checkExplicit(dir, label string) (string, error) {
	if hasServerBinaries(dir) {
		return dir, nil
	}
	return "", noBinaries([]string{dir + " (" + label + ")"})
}

func noBinaries(looked []string) error {
	return &hintError{
		kind: ErrNoBinaries,
		msg: fmt.Sprintf("PostgreSQL server binaries (%s) not found in %s: install them (Debian/Ubuntu: apt-get install -y postgresql), or set SCIDEX_PG_BIN to the directory that holds them, or set DATABASE_URL to use an existing database",
			strings.Join(serverBinaries, ", "), strings.Join(looked, ", ")),
	}
}

// hasServerBinaries reports whether dir holds every server binary as an
// executable file.
func hasServerBinaries(dir string) bool {
	for _, name := range serverBinaries {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			return false
		}
	}
	return true
}

// debianBinDirs lists root/<version>/bin, highest version first.
func debianBinDirs(root string) []string {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	type cand struct {
		ver []int
		dir string
	}
	var cands []cand
	for _, e := range entries {
		if ver, ok := parseVersion(e.Name()); ok {
			cands = append(cands, cand{ver, filepath.Join(root, e.Name(), "bin")})
		}
	}
	sort.Slice(cands, func(i, j int) bool { return versionLess(cands[j].ver, cands[i].ver) })
	dirs := make([]string, len(cands))
	for i, c := range cands {
		dirs[i] = c.dir
	}
	return dirs
}

func parseVersion(s string) ([]int, bool) {
	var ver []int
	for _, part := range strings.Split(s, ".") {
		n, err := strconv.Atoi(part)
		if err != nil || n < 0 {
			return nil, false
		}
		ver = append(ver, n)
	}
	return ver, true
}

func versionLess(a, b []int) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}

func pgConfigBindir() (string, error) {
	p, err := exec.LookPath("pg_config")
	if err != nil {
		return "", err
	}
	out, err := exec.Command(p, "--bindir").Output()
	return strings.TrimSpace(string(out)), err
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
