package bwrap

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
)

// The sandbox's file descriptors beyond stdin, stdout and stderr, in the
// order of exec.Cmd.ExtraFiles: the tool's progress fd, and bwrap's status
// and block fds (which bwrap keeps to itself: the tool never sees them).
const (
	progressFD = 3
	statusFD   = 4
	blockFD    = 5
)

// sandboxPath is the environment's PATH inside the sandbox.
const sandboxPath = "/usr/local/bin:/usr/bin:/bin"

// systemMounts is the read-only system a tool sees: /usr, the top-level
// links or directories a merged or split /usr layout needs (/bin, /lib...),
// and of /etc only what the dynamic linker and a shell read, plus a passwd
// and group of the server's own making. Never the host's /etc as a whole:
// /etc/shadow, credentials and configuration of the server stay out.
func systemMounts(etcDir string) []string {
	a := []string{"--ro-bind", "/usr", "/usr"}
	for _, top := range []string{"bin", "sbin", "lib", "lib32", "lib64", "libx32"} {
		p := "/" + top
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(p); err == nil {
				a = append(a, "--symlink", target, p)
			}
		case fi.IsDir():
			a = append(a, "--ro-bind", p, p)
		}
	}
	a = append(a, "--dir", "/etc")
	for _, f := range []string{"ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "alternatives"} {
		a = append(a, "--ro-bind-try", "/etc/"+f, "/etc/"+f)
	}
	for _, f := range []string{"passwd", "group", "hosts", "nsswitch.conf"} {
		a = append(a, "--ro-bind", filepath.Join(etcDir, f), "/etc/"+f)
	}
	return a
}

// networkMounts are the /etc pieces a networked tool needs to check
// certificates. No resolv.conf: the sandbox has no DNS to ask, its proxy
// resolves names.
var networkMounts = []string{
	"--ro-bind-try", "/etc/ssl", "/etc/ssl",
	"--ro-bind-try", "/etc/ca-certificates", "/etc/ca-certificates",
	"--ro-bind-try", "/etc/pki", "/etc/pki",
}

// The egress shim inside a networked sandbox: where its binary is mounted,
// the fd of its control socket (after the progress, status and block fds)
// and the loopback port its proxy listener takes.
const (
	shimPath  = "/run/scidex/egress-shim"
	controlFD = 6
	proxyPort = 3128
)

// proxyURL is HTTP_PROXY and HTTPS_PROXY inside a networked sandbox.
var proxyURL = "http://127.0.0.1:" + strconv.Itoa(proxyPort)

// writeEtc writes the sandbox's own passwd, group, hosts and nsswitch.conf
// into dir: enough for `id`, `whoami` and localhost, and nothing of the
// host's accounts.
func writeEtc(dir string, uid, gid int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := map[string]string{
		"passwd": fmt.Sprintf("root:x:0:0:root:/nonexistent:/usr/sbin/nologin\ntool:x:%d:%d:sandboxed tool:/work:/usr/sbin/nologin\n", uid, gid),
		"group":  fmt.Sprintf("root:x:0:\ntool:x:%d:\n", gid),
		"hosts":  "127.0.0.1 localhost sandbox\n::1 localhost sandbox\n",
		// files only: a sandbox has no name service daemon to ask.
		"nsswitch.conf": "passwd: files\ngroup: files\nhosts: files dns\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// argv is bwrap's command line for a sandbox: built here from the prepared
// call alone, so nothing of a manifest reaches it but the program, its
// arguments and the data directories, all checked to lie inside the bundle.
//
// Every sandbox has a network namespace of its own, networked or not: a
// networked one gets the egress shim as its first program, which hands the
// server a listener on its loopback and executes the tool with HTTP_PROXY
// pointing at it (shimAS is the RLIMIT_AS the shim sets, 0 for none). The
// root, /etc and /dev are read-only; the only writable places are the
// size-capped tmpfs mounts /tmp, /work and /dev/shm.
func (b *bwrapBackend) argv(s *Sandbox, shimAS uint64) []string {
	networked := s.Caps.Network != "deny"
	a := []string{"--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--hostname", "sandbox"}
	a = append(a, b.system...)
	if networked {
		a = append(a, networkMounts...)
		a = append(a, "--ro-bind", b.shim, shimPath)
	}
	tmp := strconv.FormatInt(b.o.TmpBytes, 10)
	a = append(a, "--proc", "/proc", "--dev", "/dev",
		"--size", tmp, "--tmpfs", "/dev/shm",
		"--size", tmp, "--tmpfs", "/tmp",
		"--size", tmp, "--tmpfs", "/work",
		"--ro-bind", s.BundleDir, "/bundle")
	for _, d := range s.DataPaths {
		a = append(a, "--ro-bind", filepath.Join(s.BundleDir, filepath.FromSlash(d)), path.Join("/data", d))
	}
	// Last, once every mount point exists: bwrap's own root tmpfs and the
	// /dev tmpfs become read-only (each remount is of that mount alone).
	a = append(a, "--remount-ro", "/dev", "--remount-ro", "/")
	a = append(a, "--clearenv",
		"--setenv", "PATH", sandboxPath,
		"--setenv", "HOME", "/work",
		"--setenv", "TMPDIR", "/tmp",
		"--setenv", "LANG", "C.UTF-8",
		"--setenv", "SCIDEX_PROGRESS_FD", strconv.Itoa(progressFD))
	if networked {
		for _, v := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"} {
			a = append(a, "--setenv", v, proxyURL)
		}
	}
	a = append(a, "--chdir", "/work",
		"--json-status-fd", strconv.Itoa(statusFD),
		"--block-fd", strconv.Itoa(blockFD),
		"--")
	if networked {
		a = append(a, shimPath, strconv.Itoa(controlFD), strconv.Itoa(proxyPort), strconv.FormatUint(shimAS, 10), "--")
	}
	a = append(a, path.Join("/bundle", s.Command[0]))
	return append(a, s.Command[1:]...)
}
