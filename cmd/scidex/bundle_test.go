package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// newBundle writes a bundle directory of files (path → content) under a
// temporary directory and returns it, with a secret file beside it, outside
// the bundle: what a symlink would smuggle out.
func newBundle(t *testing.T, files map[string]string) (dir, secret string) {
	t.Helper()
	root := t.TempDir()
	secret = filepath.Join(root, "shadow")
	if err := os.WriteFile(secret, []byte("root:$6$registrars-own-secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(root, "bundle")
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, secret
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// The registrar uploads regular files inside the bundle directory and
// nothing else: a symlink at any level (to a file outside, to a directory,
// to a file inside), a fifo, a device, a listed path leaving the directory
// are each refused with an error naming the path, and nothing is collected.
// Before, `scidex tool register` followed a listed symlink and uploaded its
// target.
func TestBundleRefusesWhatIsNotItsOwnFile(t *testing.T) {
	base := map[string]string{"tool.json": "{}", "run.sh": "#!/bin/sh\necho '{}'\n", "lib/util.sh": "true\n"}
	tests := []struct {
		name   string
		setup  func(t *testing.T, dir, secret string)
		listed []string // nil: the whole directory (a bwrap bundle)
		want   string
	}{
		{"listed symlink to a file outside", func(t *testing.T, dir, secret string) { symlink(t, secret, filepath.Join(dir, "data.txt")) },
			[]string{"run.sh", "data.txt"}, "data.txt: is a symlink"},
		{"whole-bundle symlink to a file outside", func(t *testing.T, dir, secret string) { symlink(t, secret, filepath.Join(dir, "data.txt")) },
			nil, "data.txt: is a symlink"},
		{"symlinked directory", func(t *testing.T, dir, secret string) {
			symlink(t, filepath.Dir(secret), filepath.Join(dir, "up"))
		}, []string{"up/shadow"}, "up/shadow: up is a symlink"},
		{"whole-bundle symlinked directory", func(t *testing.T, dir, secret string) {
			symlink(t, filepath.Dir(secret), filepath.Join(dir, "up"))
		}, nil, "up: is a symlink"},
		{"symlink inside pointing inside", func(t *testing.T, dir, _ string) { symlink(t, "run.sh", filepath.Join(dir, "alias.sh")) },
			[]string{"alias.sh"}, "alias.sh: is a symlink"},
		{"whole-bundle symlink inside pointing inside", func(t *testing.T, dir, _ string) { symlink(t, "lib", filepath.Join(dir, "lib2")) },
			nil, "lib2: is a symlink"},
		{"symlinked manifest", func(t *testing.T, dir, secret string) {
			_ = os.Remove(filepath.Join(dir, "tool.json"))
			symlink(t, secret, filepath.Join(dir, "tool.json"))
		}, []string{"tool.json"}, "tool.json: is a symlink"},
		{"fifo", func(t *testing.T, dir, _ string) {
			if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{"pipe"}, "pipe: is a fifo"},
		{"whole-bundle fifo", func(t *testing.T, dir, _ string) {
			if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, nil, "pipe: is a fifo"},
		{"absolute path", func(t *testing.T, dir, secret string) {}, []string{"/etc/passwd"}, "/etc/passwd: the path is not a plain relative path"},
		{"dot-dot path", func(t *testing.T, dir, secret string) {}, []string{"../shadow"}, "shadow: the path is not a plain relative path"},
		{"missing file", func(t *testing.T, dir, secret string) {}, []string{"nope.sh"}, "nope.sh: does not exist"},
		{"directory listed as a file", func(t *testing.T, dir, secret string) {}, []string{"lib"}, "lib: is a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, secret := newBundle(t, base)
			tt.setup(t, dir, secret)
			m := map[string]any{}
			if tt.listed != nil {
				var fs []any
				for _, p := range tt.listed {
					fs = append(fs, map[string]any{"path": p})
				}
				m["files"] = fs
			}
			got, err := bundle(dir, m, tt.listed == nil)
			if err == nil {
				t.Fatalf("bundle collected %d files, want a refusal saying %q", len(got), tt.want)
			}
			if got != nil {
				t.Errorf("a refused bundle still collected %d files", len(got))
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "nothing was registered") {
				t.Errorf("error %q, want it to say %q and that nothing was registered", err, tt.want)
			}
			if strings.Contains(err.Error(), "registrars-own-secret") {
				t.Errorf("the error shows the secret: %q", err)
			}
		})
	}

	// A device node needs root to make; /dev/null stands for one, opened as
	// the bundle directory's own entry.
	t.Run("device node", func(t *testing.T) {
		b, err := openBundle("/dev")
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		if _, err := b.readFile("null"); err == nil || !strings.Contains(err.Error(), "/dev/null: is a device") {
			t.Errorf("reading /dev/null as a bundle file: %v", err)
		}
	})
}

// A plain bundle is collected as before: every regular file but the
// manifest, README and examples for a whole-directory runtime, the listed
// ones otherwise, and the manifest's files list is dropped (the server makes
// it).
func TestBundleCollectsRegularFiles(t *testing.T) {
	dir, _ := newBundle(t, map[string]string{"tool.json": "{}", "README.md": "#", "run.sh": "echo", "lib/util.sh": "true",
		"examples/a.json": "{}", ".git/config": "x"})
	got, err := bundle(dir, map[string]any{}, true)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, u := range got {
		paths = append(paths, u.Path)
	}
	if strings.Join(paths, ",") != "lib/util.sh,run.sh" {
		t.Errorf("whole bundle: %v", paths)
	}
	m := map[string]any{"files": []any{map[string]any{"path": "lib/util.sh", "sha256": "x"}}}
	got, err = bundle(dir, m, false)
	if err != nil || len(got) != 1 || got[0].Path != "lib/util.sh" || got[0].ContentBase64 != "dHJ1ZQ==" {
		t.Errorf("listed: %+v, %v", got, err)
	}
	if _, ok := m["files"]; ok {
		t.Error("the manifest's files list was sent")
	}
	if mf, err := readManifest(dir, ""); err != nil || len(mf) != 0 {
		t.Errorf("readManifest: %v, %v", mf, err)
	}
}
