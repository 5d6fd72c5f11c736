package watchdog

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clean stops every PostgreSQL server whose data directory is under dir and
// every other process still working in it (an initdb cut off half-way, a
// backend), then removes dir. A dir that is already gone is no error.
//
// A postmaster gets SIGQUIT, PostgreSQL's immediate shutdown: it ends its
// backends and exits, releasing its shared memory, within a second or so; the
// dir is about to be removed, so nothing needs a clean checkpoint.
func clean(dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	root := filepath.Clean(dir)
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real // /proc shows working directories resolved
	}
	var postmasters []int
	for _, pid := range postmasterPids(root) {
		if alive(pid) && cwdUnder(pid, root) {
			_ = syscall.Kill(pid, syscall.SIGQUIT)
			postmasters = append(postmasters, pid)
		}
	}
	waitGone(postmasters, 10*time.Second)
	rest := processesIn(root)
	for _, pid := range rest {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	waitGone(rest, 5*time.Second)
	return os.RemoveAll(dir)
}

// postmasterPids reads the pid of every postmaster.pid a few levels under
// root: <dbtest dir>/pg/data, <e2e dir>/data/postgres/data.
func postmasterPids(root string) []int {
	var pids []int
	pattern := root
	for depth := 0; depth < 5; depth++ {
		matches, _ := filepath.Glob(filepath.Join(pattern, "postmaster.pid"))
		for _, m := range matches {
			b, err := os.ReadFile(m)
			if err != nil {
				continue
			}
			first, _, _ := strings.Cut(string(b), "\n")
			if pid, err := strconv.Atoi(strings.TrimSpace(first)); err == nil && pid > 0 {
				pids = append(pids, pid)
			}
		}
		pattern = filepath.Join(pattern, "*")
	}
	return pids
}

// processesIn lists the processes, other than this one, whose working
// directory is root or under it (PostgreSQL's all work in their data
// directory; pgembed runs initdb in the cluster directory).
func processesIn(root string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if cwdUnder(pid, root) && alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// cwdUnder reports whether process pid works in root or below it, also when
// that directory has been removed under it.
func cwdUnder(pid int, root string) bool {
	cwd, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd")
	if err != nil {
		return false
	}
	cwd = strings.TrimSuffix(cwd, " (deleted)")
	return cwd == root || strings.HasPrefix(cwd, root+"/")
}

// sweep cleans the directories with prefix in tmp that their owners left
// behind: named <prefix><pid>-…, with an owner lock nobody holds (or, cut off
// between the directory and the lock, none at all after a minute).
// Directories named otherwise are not this package's and are left alone.
func sweep(tmp, prefix string) {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		if _, err := strconv.Atoi(pidText); !ok || err != nil {
			continue
		}
		sweepOne(filepath.Join(tmp, e.Name()))
	}
}

func sweepOne(dir string) {
	f, err := os.Open(filepath.Join(dir, ownerLock))
	if errors.Is(err, fs.ErrNotExist) {
		if fi, err := os.Stat(dir); err == nil && time.Since(fi.ModTime()) > time.Minute {
			_ = clean(dir)
		}
		return
	}
	if err != nil {
		return
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return // its owner is alive
	}
	_ = clean(dir)
}
