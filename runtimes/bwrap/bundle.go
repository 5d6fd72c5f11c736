package bwrap

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/scidex/substrate/runtimes"
)

// cache keeps each tool version's bundle materialized in its own directory
// under Options.CacheDir, owned by the server and read-only to the sandbox.
// A file is hashed when it is copied in from the Bundle, and hashed again
// whenever its size, mtime or inode differ from what was verified, so a file
// altered at its source or in the cache is refused at dispatch rather than
// run.
//
// The cache is bounded: it is an LRU of at most max bytes of bundles. Past
// the cap the least recently used entries that no running call holds are
// removed (a call holds its entry from prepare to release), to be
// materialized again from the store when next called. An entry larger than
// the cap on its own is used and removed once released.
type cache struct {
	dir string
	max int64

	mu       sync.Mutex
	entries  map[string]*entry           // entry dir → its bookkeeping
	total    int64                       // bytes of every entry on disk
	clock    uint64                      // advanced at every use
	verified map[string]map[string]stamp // entry dir → bundle path → stamp
}

// entry is one bundle directory of the cache.
type entry struct {
	lock  sync.Mutex // held while the entry is materialized or verified
	size  int64      // bytes on disk, 0 while absent
	used  uint64     // cache.clock at the last use
	inUse int        // calls between prepare and release
}

// stamp is what a verified file looked like; a change means hash it again.
type stamp struct {
	size  int64
	mtime int64
	ino   uint64
}

// newCache opens the cache in dir, capped at max bytes: entries left by an
// earlier process are counted (the least recently modified first out),
// unfinished copies are removed, and the cache is trimmed to its cap.
func newCache(dir string, max int64) *cache {
	c := &cache{dir: dir, max: max, entries: map[string]*entry{}, verified: map[string]map[string]stamp{}}
	ents, _ := os.ReadDir(dir)
	type old struct {
		dir   string
		mtime int64
	}
	var found []old
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case strings.HasPrefix(e.Name(), ".tmp-"):
			_ = os.RemoveAll(p)
		case strings.HasPrefix(e.Name(), ".") || !e.IsDir():
		default:
			if fi, err := e.Info(); err == nil {
				found = append(found, old{p, fi.ModTime().UnixNano()})
			}
		}
	}
	sort.Slice(found, func(i, j int) bool { return found[i].mtime < found[j].mtime })
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range found {
		c.clock++
		size := dirSize(f.dir)
		c.entries[f.dir] = &entry{size: size, used: c.clock}
		c.total += size
	}
	c.evictLocked()
	return c
}

// prepare returns the directory of t's verified bundle, materializing it on
// first use, and the release the caller must call once the call has ended:
// until then the entry is not evicted, by this process or (through a shared
// flock on the directory) by another sharing the cache dir. prog is the
// bundle path of the program, made executable.
func (c *cache) prepare(ctx context.Context, t *runtimes.Tool, prog string) (string, func(), error) {
	dir := filepath.Join(c.dir, entryName(t))
	e := c.acquire(dir)
	e.lock.Lock()
	defer e.lock.Unlock()
	fail := func(err error) (string, func(), error) {
		c.release(dir)
		return "", nil, err
	}
	held, err := hold(dir)
	if err != nil {
		return fail(err)
	}
	if held == nil {
		if err := c.materialize(ctx, dir, t, prog); err != nil {
			return fail(err)
		}
		c.mu.Lock()
		c.setSizeLocked(dir, dirSize(dir))
		c.evictLocked()
		c.mu.Unlock()
		if held, err = hold(dir); err != nil || held == nil {
			return fail(fmt.Errorf("hold the bundle cache entry: %v", err))
		}
	} else if err := c.verify(dir, t.Files); err != nil {
		held.Close()
		return fail(err)
	}
	return dir, func() { held.Close(); c.release(dir) }, nil
}

// hold opens dir and takes a shared flock on it, which an eviction takes
// exclusively: nil when dir is absent or was removed while the lock was
// awaited.
func hold(dir string) (*os.File, error) {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open bundle cache entry: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock bundle cache entry: %w", err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil || st.Nlink == 0 {
		f.Close()
		return nil, nil
	}
	return f, nil
}

// acquire marks dir's entry in use (making the entry if need be).
func (c *cache) acquire(dir string) *entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[dir]
	if !ok {
		e = &entry{}
		c.entries[dir] = e
	}
	e.inUse++
	c.clock++
	e.used = c.clock
	return e
}

// release ends a call's hold on dir's entry and trims the cache.
func (c *cache) release(dir string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[dir]
	if e == nil {
		return
	}
	e.inUse--
	if e.inUse == 0 && e.size == 0 {
		delete(c.entries, dir)
	}
	c.evictLocked()
}

func (c *cache) setSizeLocked(dir string, size int64) {
	if e := c.entries[dir]; e != nil {
		c.total += size - e.size
		e.size = size
	}
}

// evictLocked removes least recently used entries no call holds until the
// cache is within its cap. An entry no call of this process holds is not
// locked either (acquire precedes the lock); one another process's call
// holds (its flock) is skipped and counted as just used.
func (c *cache) evictLocked() {
	for tries := len(c.entries); c.total > c.max && tries > 0; tries-- {
		var victim string
		var oldest *entry
		for d, e := range c.entries {
			if e.inUse == 0 && e.size > 0 && (oldest == nil || e.used < oldest.used) {
				victim, oldest = d, e
			}
		}
		if oldest == nil {
			return
		}
		if f, err := os.Open(victim); err == nil {
			if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
				f.Close()
				c.clock++
				oldest.used = c.clock
				continue
			}
			_ = os.RemoveAll(victim)
			f.Close()
		}
		c.total -= oldest.size
		delete(c.entries, victim)
		delete(c.verified, victim)
	}
}

// dirSize is the bytes of the regular files under dir.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// entryName names a tool version's cache directory: readable, and keyed by
// the registered hashes so that a re-registered bundle never reuses a stale
// directory.
func entryName(t *runtimes.Tool) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", t.Ref, t.Name, t.Version)
	for _, f := range t.Files {
		fmt.Fprintf(h, "%s\x00%s\x00", f.Path, f.SHA256)
	}
	safe := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
				return r
			}
			return '_'
		}, s)
	}
	return safe(t.Name) + "@" + safe(t.Version) + "-" + hex.EncodeToString(h.Sum(nil))[:20]
}

// materialize copies t's files from its Bundle into a fresh directory,
// checking each against its registered hash, and renames it into place.
func (c *cache) materialize(ctx context.Context, dir string, t *runtimes.Tool, prog string) error {
	if t.Bundle == nil && len(t.Files) > 0 {
		return runtimes.Errorf(runtimes.CodeSetupFailed, true, "the bundle of %s@%s is not available to the runtime", t.Name, t.Version)
	}
	tmp, err := os.MkdirTemp(c.dir, ".tmp-")
	if err != nil {
		return fmt.Errorf("materialize bundle: %w", err)
	}
	defer os.RemoveAll(tmp)
	stamps := map[string]stamp{}
	for _, f := range t.Files {
		st, err := copyFile(ctx, t.Bundle, f, tmp, f.Path == prog)
		if err != nil {
			return err
		}
		stamps[f.Path] = st
	}
	if err := filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			err = os.Chmod(p, 0o755)
		}
		return err
	}); err != nil {
		return fmt.Errorf("materialize bundle: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(dir); serr == nil {
			// Another process sharing the cache put it in place first.
			return c.verify(dir, t.Files)
		}
		return fmt.Errorf("materialize bundle: %w", err)
	}
	c.mu.Lock()
	c.verified[dir] = stamps
	c.mu.Unlock()
	return nil
}

// copyFile copies one bundle file into root, hashing it on the way.
func copyFile(ctx context.Context, b runtimes.Bundle, f runtimes.File, root string, exe bool) (stamp, error) {
	rc, err := b.Open(ctx, f)
	if err != nil {
		return stamp{}, runtimes.Errorf(runtimes.CodeSetupFailed, true, "the bundle file %q could not be read: %v", f.Path, err)
	}
	defer rc.Close()
	dst := filepath.Join(root, filepath.FromSlash(f.Path))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return stamp{}, fmt.Errorf("materialize bundle: %w", err)
	}
	mode := os.FileMode(0o644)
	if exe {
		mode = 0o755
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return stamp{}, fmt.Errorf("materialize bundle: %w", err)
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(out, h), rc)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return stamp{}, runtimes.Errorf(runtimes.CodeSetupFailed, true, "the bundle file %q could not be copied: %v", f.Path, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != f.SHA256 {
		return stamp{}, altered(f.Path, got)
	}
	if err := os.Chmod(dst, mode); err != nil { // the umask may have narrowed it
		return stamp{}, fmt.Errorf("materialize bundle: %w", err)
	}
	return stampOf(dst)
}

// verify checks a cached bundle against the registered hashes, hashing only
// the files that changed since they were last verified (all of them after a
// restart). An altered file removes the entry, so that the next call starts
// again from the stored bundle.
func (c *cache) verify(dir string, files []runtimes.File) error {
	c.mu.Lock()
	known := c.verified[dir]
	c.mu.Unlock()
	fresh := map[string]stamp{}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		st, err := stampOf(p)
		if err != nil {
			c.drop(dir)
			return runtimes.Errorf(runtimes.CodeBundleAltered, true, "the bundle file %q is missing from the runtime's copy of the bundle", f.Path)
		}
		if old, ok := known[f.Path]; !ok || old != st {
			got, err := hashFile(p)
			if err != nil {
				return fmt.Errorf("verify bundle: %w", err)
			}
			if got != f.SHA256 {
				c.drop(dir)
				return altered(f.Path, got)
			}
		}
		fresh[f.Path] = st
	}
	c.mu.Lock()
	c.verified[dir] = fresh
	c.mu.Unlock()
	return nil
}

func (c *cache) drop(dir string) {
	c.mu.Lock()
	delete(c.verified, dir)
	c.setSizeLocked(dir, 0)
	c.mu.Unlock()
	_ = os.RemoveAll(dir)
}

func altered(path, got string) *runtimes.Error {
	return runtimes.Errorf(runtimes.CodeBundleAltered, true,
		"the bundle file %q no longer matches the sha256 it was registered with; register the tool again", path).
		With("file", path).With("sha256", got)
}

func stampOf(p string) (stamp, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return stamp{}, err
	}
	if !fi.Mode().IsRegular() {
		return stamp{}, fmt.Errorf("%s is not a regular file", filepath.Base(p))
	}
	st := stamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = sys.Ino
	}
	return st, nil
}

func hashFile(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
