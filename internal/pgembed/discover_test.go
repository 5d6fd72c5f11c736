package pgembed

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNoBinariesExplicitBinDir(t *testing.T) {
	t.Setenv("SCIDEX_PG_BIN", "")
	empty := t.TempDir()
	dir := filepath.Join(t.TempDir(), "postgres")
	_, err := Start(ctxFor(t), Options{Dir: dir, BinDir: empty, Logger: testLogger(t)})
	assertNoBinaries(t, err, empty)
	if _, statErr := os.Stat(dir); !errors.Is(statErr, os.ErrNotExist) {
		t.Errorf("Start created %s although it could not run", dir)
	}
}

func TestNoBinariesAnywhere(t *testing.T) {
	f := emptyFinder(t)
	_, err := start(ctxFor(t), Options{Dir: filepath.Join(t.TempDir(), "postgres"), Logger: testLogger(t)}, f)
	assertNoBinaries(t, err, "PATH")
	for _, place := range []string{"pg_config", f.debianRoot} {
		if !strings.Contains(err.Error(), place) {
			t.Errorf("error does not name %s: %v", place, err)
		}
	}
}

func assertNoBinaries(t *testing.T, err error, looked string) {
	t.Helper()
	if !errors.Is(err, ErrNoBinaries) {
		t.Fatalf("err = %v, want ErrNoBinaries", err)
	}
	t.Logf("error message: %v", err)
	for _, want := range []string{"apt-get install", "SCIDEX_PG_BIN", "DATABASE_URL", looked} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q: %v", want, err)
		}
	}
}

// emptyFinder is a finder whose every source comes up empty.
func emptyFinder(t *testing.T) finder {
	return finder{
		getenv:     func(string) string { return "" },
		pgConfig:   func() (string, error) { return "", errors.New("no pg_config") },
		debianRoot: t.TempDir(),
		lookPath:   func(string) (string, error) { return "", errors.New("not in PATH") },
	}
}

// fakeBinDir makes dir/<version>/bin hold fake server binaries.
func fakeBinDir(t *testing.T, root, version string) string {
	t.Helper()
	bin := filepath.Join(root, version, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range serverBinaries {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return bin
}

func TestDiscoveryOrder(t *testing.T) {
	f := emptyFinder(t)
	v96 := fakeBinDir(t, f.debianRoot, "9.6")
	v15 := fakeBinDir(t, f.debianRoot, "15")
	v16 := fakeBinDir(t, f.debianRoot, "16")
	fakeBinDir(t, f.debianRoot, "14")
	pathDir := fakeBinDir(t, t.TempDir(), "path")
	cfgDir := fakeBinDir(t, t.TempDir(), "cfg")

	check := func(name string, f finder, want string) {
		t.Helper()
		got, err := f.find()
		if err != nil || got != want {
			t.Errorf("%s: find() = %q, %v; want %q", name, got, err, want)
		}
	}
	check("highest Debian version", f, v16)

	g := f
	g.wantMajor = "15"
	check("version of existing cluster", g, v15)

	g = f
	g.pgConfig = func() (string, error) { return cfgDir, nil }
	check("pg_config before Debian dirs", g, cfgDir)

	g = f
	g.getenv = func(string) string { return v96 }
	check("SCIDEX_PG_BIN", g, v96)

	g = f
	g.binDir = v15
	check("Options.BinDir", g, v15)

	g = emptyFinder(t)
	g.lookPath = func(name string) (string, error) { return filepath.Join(pathDir, name), nil }
	check("PATH", g, pathDir)
}
