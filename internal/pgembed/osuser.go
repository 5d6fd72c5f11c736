package pgembed

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// runAs is the OS identity that runs initdb and postgres.
type runAs struct {
	name       string
	uid, gid   uint32
	groups     []uint32
	switchUser bool // true when this process is root and must drop to uid/gid
}

// resolveRunAs picks the identity for the cluster's processes. Unless this
// process is root, that is the current user.
func resolveRunAs(osUser string, l layout) (runAs, error) {
	if os.Geteuid() != 0 {
		return runAs{name: "uid " + strconv.Itoa(os.Geteuid()), uid: uint32(os.Geteuid()), gid: uint32(os.Getegid())}, nil
	}
	owner, ownerGID, haveOwner := fileOwner(l.data)
	var (
		u   *user.User
		err error
	)
	switch {
	case osUser != "":
		if u, err = user.Lookup(osUser); err != nil {
			return runAs{}, fmt.Errorf("pgembed: OS user %q for the embedded PostgreSQL: %w", osUser, err)
		}
	case haveOwner && owner != 0:
		if u, err = user.LookupId(strconv.Itoa(int(owner))); err != nil {
			// The cluster belongs to a uid without a passwd entry; run as it.
			return runAs{name: "uid " + strconv.Itoa(int(owner)), uid: owner, gid: ownerGID, switchUser: true}, nil
		}
	default:
		if u, err = user.Lookup("postgres"); err != nil {
			if u, err = user.Lookup("nobody"); err != nil {
				return runAs{}, errors.New("pgembed: running as root, but neither OS user \"postgres\" nor \"nobody\" exists; set OSUser to an unprivileged user")
			}
		}
	}
	r, err := userRunAs(u)
	if err != nil {
		return runAs{}, err
	}
	if r.uid == 0 {
		return runAs{}, fmt.Errorf("pgembed: PostgreSQL cannot run as root (OS user %q); set OSUser to an unprivileged user", r.name)
	}
	if haveOwner && owner != r.uid {
		return runAs{}, fmt.Errorf("pgembed: cluster %s is owned by uid %d, not by OS user %q (uid %d); set OSUser to its owner", l.data, owner, r.name, r.uid)
	}
	return r, nil
}

func userRunAs(u *user.User) (runAs, error) {
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return runAs{}, fmt.Errorf("pgembed: OS user %q: %w", u.Username, err)
	}
	r := runAs{name: u.Username, uid: uint32(uid), gid: uint32(gid), switchUser: true}
	gids, _ := u.GroupIds() // best effort: supplementary groups
	for _, g := range gids {
		if n, err := strconv.ParseUint(g, 10, 32); err == nil {
			r.groups = append(r.groups, uint32(n))
		}
	}
	return r, nil
}

func fileOwner(path string) (uid, gid uint32, ok bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return st.Uid, st.Gid, true
}

// credential returns the process credential to use, or nil to keep ours.
func (r runAs) credential() *syscall.Credential {
	if !r.switchUser {
		return nil
	}
	return &syscall.Credential{Uid: r.uid, Gid: r.gid, Groups: r.groups}
}

// chown gives path to the cluster's OS user when this process is root.
func (r runAs) chown(path string) error {
	if !r.switchUser {
		return nil
	}
	return os.Lchown(path, int(r.uid), int(r.gid))
}

// canSearch reports whether r may traverse the directory described by fi.
// ACLs are not considered.
func (r runAs) canSearch(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	perm := fi.Mode().Perm()
	if st.Uid == r.uid {
		return perm&0o100 != 0
	}
	if st.Gid == r.gid {
		return perm&0o010 != 0
	}
	for _, g := range r.groups {
		if st.Gid == g {
			return perm&0o010 != 0
		}
	}
	return perm&0o001 != 0
}

// checkTraversable fails fast when the cluster's OS user could not reach
// dir because an existing ancestor denies it search permission. It only
// matters when this process is root; otherwise the user reached dir itself.
func (r runAs) checkTraversable(dir string) error {
	if !r.switchUser {
		return nil
	}
	existing := dir
	for {
		if _, err := os.Stat(existing); err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			return nil
		}
		existing = parent
	}
	resolved, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return fmt.Errorf("pgembed: resolve %s: %w", existing, err)
	}
	skip := ""
	if existing == dir {
		skip = resolved // the cluster directory itself is chowned to r
	}
	for p := resolved; ; p = filepath.Dir(p) {
		if p != skip {
			fi, err := os.Stat(p)
			if err != nil {
				return fmt.Errorf("pgembed: %w", err)
			}
			if !r.canSearch(fi) {
				return fmt.Errorf("pgembed: data directory %s is unreachable for OS user %q, which runs PostgreSQL because PostgreSQL refuses to run as root: %s (mode %04o) is not traversable by that user; choose a data directory under a world-traversable path such as /var/lib/scidex, or grant the user search permission on %s",
					dir, r.name, p, fi.Mode().Perm(), p)
			}
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}
