package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// bundleDir reads the files of a tool bundle and nothing else. The registrar
// uploads what it reads to a server that runs it for others, so a bundle that
// names a file outside its directory (../../etc/shadow, an absolute path) or
// holds a symlink — to a file or a directory, pointing out of the bundle or
// into it: one rule — would upload the registrar's own files. Every path is
// opened from the directory one component at a time with O_NOFOLLOW, so no
// symlink is ever followed, even one swapped in while the bundle is read; the
// file is checked to be a regular file (not a device, a fifo or a socket)
// before it is opened and again once it is.
type bundleDir struct {
	dir string // as the registrar named it, for messages
	fd  int
}

// openBundle opens dir itself, which may be reached through a symlink: the
// registrar chose it.
func openBundle(dir string) (*bundleDir, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open the bundle directory %s: %w", dir, err)
	}
	return &bundleDir{dir: dir, fd: fd}, nil
}

func (b *bundleDir) Close() error { return unix.Close(b.fd) }

// refused is the error for a bundle path the registrar will not upload.
func (b *bundleDir) refused(rel, why string) error {
	return fmt.Errorf("refusing bundle file %s: %s; only regular files inside the bundle directory are uploaded, and nothing was registered",
		filepath.Join(b.dir, filepath.FromSlash(rel)), why)
}

// readFile reads the regular file at rel, a slash-separated path inside the
// bundle.
func (b *bundleDir) readFile(rel string) ([]byte, error) {
	f, err := b.open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read bundle file %s: %w", filepath.Join(b.dir, filepath.FromSlash(rel)), err)
	}
	return data, nil
}

// open opens rel from the bundle directory one component at a time.
func (b *bundleDir) open(rel string) (*os.File, error) {
	if rel == "" || rel == "." || path.IsAbs(rel) || path.Clean(rel) != rel ||
		rel == ".." || strings.HasPrefix(rel, "../") {
		return nil, b.refused(rel, "the path is not a plain relative path inside the bundle")
	}
	parts := strings.Split(rel, "/")
	dirfd := b.fd
	for i, name := range parts {
		fd, err := b.step(dirfd, name, strings.Join(parts[:i+1], "/"), rel, i == len(parts)-1)
		if dirfd != b.fd {
			_ = unix.Close(dirfd)
		}
		if err != nil {
			return nil, err
		}
		dirfd = fd
	}
	return os.NewFile(uintptr(dirfd), rel), nil
}

// step opens name, the component at of rel, in the directory dirfd: a
// directory unless it is the last component, a regular file if it is, and
// never a symlink. It looks before it opens (opening a device or a fifo can
// have effects of its own) and checks the open file again.
func (b *bundleDir) step(dirfd int, name, at, rel string, last bool) (int, error) {
	which := func(why string) string {
		if at != rel {
			return at + " " + why
		}
		return why
	}
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); errors.Is(err, unix.ENOENT) {
		return -1, b.refused(rel, which("does not exist"))
	} else if err != nil {
		return -1, b.refused(rel, which(err.Error()))
	}
	if why := kindProblem(st.Mode, last); why != "" {
		return -1, b.refused(rel, which(why))
	}
	flags := unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	if last {
		flags |= unix.O_NONBLOCK // a fifo swapped in does not block the open
	} else {
		flags |= unix.O_DIRECTORY
	}
	fd, err := unix.Openat(dirfd, name, flags, 0)
	if err != nil {
		return -1, b.refused(rel, which("changed while it was read ("+err.Error()+")"))
	}
	if err := unix.Fstat(fd, &st); err != nil || kindProblem(st.Mode, last) != "" {
		_ = unix.Close(fd)
		return -1, b.refused(rel, which("changed while it was read"))
	}
	return fd, nil
}

// kindProblem says what is wrong with a path component of mode: a symlink
// anywhere, anything but a directory before the last component, anything but
// a regular file at it.
func kindProblem(mode uint32, last bool) string {
	switch t := mode & unix.S_IFMT; {
	case t == unix.S_IFLNK:
		return "is a symlink"
	case !last && t != unix.S_IFDIR:
		return "is not a directory"
	case !last:
		return ""
	case t == unix.S_IFREG:
		return ""
	case t == unix.S_IFDIR:
		return "is a directory"
	case t == unix.S_IFCHR || t == unix.S_IFBLK:
		return "is a device"
	case t == unix.S_IFIFO:
		return "is a fifo"
	case t == unix.S_IFSOCK:
		return "is a socket"
	}
	return "is not a regular file"
}

// walk lists the files a runtime that runs its bundle uploads: every file
// of the directory but tool.json, README.md, examples/ and hidden
// directories. A symlink, device, fifo or socket among them is refused, not
// skipped: the registrar would not see that it was left out.
func (b *bundleDir) walk() ([]string, error) {
	var paths []string
	err := filepath.WalkDir(b.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(b.dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case rel == ".":
			return nil
		case d.IsDir() && (rel == "examples" || strings.HasPrefix(d.Name(), ".")):
			return filepath.SkipDir
		case d.IsDir() || rel == "tool.json" || rel == "README.md":
			return nil
		case !d.Type().IsRegular():
			return b.refused(rel, kindProblem(modeBits(d.Type()), true))
		}
		paths = append(paths, rel)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the bundle: %w", err)
	}
	return paths, nil
}

// modeBits turns an fs.FileMode type into the stat mode kindProblem reads.
func modeBits(t fs.FileMode) uint32 {
	switch {
	case t&fs.ModeSymlink != 0:
		return unix.S_IFLNK
	case t&fs.ModeNamedPipe != 0:
		return unix.S_IFIFO
	case t&fs.ModeSocket != 0:
		return unix.S_IFSOCK
	case t&fs.ModeDevice != 0:
		return unix.S_IFCHR
	}
	return 0
}
