package pgembed

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// prepareClusterDir creates the cluster directory. Missing ancestors are
// created 0755 so the cluster's OS user can traverse them; existing
// ancestors are left alone.
func prepareClusterDir(l layout, r runAs) error {
	if err := mkdirAncestors(filepath.Dir(l.dir)); err != nil {
		return err
	}
	if err := os.Mkdir(l.dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("pgembed: %w", err)
	}
	fi, err := os.Stat(l.dir)
	if err != nil {
		return fmt.Errorf("pgembed: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("pgembed: cluster directory %s is not a directory", l.dir)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("pgembed: cluster directory %s is writable by group or others (mode %04o); make it private (chmod go-w %s)", l.dir, fi.Mode().Perm(), l.dir)
	}
	if err := r.chown(l.dir); err != nil {
		return fmt.Errorf("pgembed: %w", err)
	}
	return nil
}

// preparePrivateDirs creates the run (socket) and log directories, private
// to the cluster's OS user. Only the lock holder calls it.
func preparePrivateDirs(l layout, r runAs) error {
	for _, d := range []string{l.run, l.logDir} {
		if err := privateDir(d, r); err != nil {
			return err
		}
	}
	return nil
}

// mkdirAncestors creates dir and its missing parents with mode 0755,
// regardless of the umask.
func mkdirAncestors(dir string) error {
	var missing []string
	for p := dir; ; p = filepath.Dir(p) {
		if _, err := os.Stat(p); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("pgembed: %w", err)
		}
		missing = append(missing, p)
		if p == filepath.Dir(p) {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("pgembed: %w", err)
		}
		if err := os.Chmod(missing[i], 0o755); err != nil {
			return fmt.Errorf("pgembed: %w", err)
		}
	}
	return nil
}

// privateDir makes d a real directory, mode 0700, owned by the cluster's
// OS user. d is always a fixed name inside the cluster directory.
func privateDir(d string, r runAs) error {
	fi, err := os.Lstat(d)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.Mkdir(d, 0o700); err != nil {
			return fmt.Errorf("pgembed: %w", err)
		}
	case err != nil:
		return fmt.Errorf("pgembed: %w", err)
	case !fi.IsDir():
		return fmt.Errorf("pgembed: %s must be a directory, not %s", d, fi.Mode().Type())
	}
	if err := os.Chmod(d, 0o700); err != nil {
		return fmt.Errorf("pgembed: %w", err)
	}
	if err := r.chown(d); err != nil {
		return fmt.Errorf("pgembed: %w", err)
	}
	return nil
}

// syncDir flushes a directory's entries (e.g. after a rename) to disk.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
