// Package bwrap is the bwrap runtime: a tool is a program in its bundle,
// run in a bubblewrap sandbox, JSON arguments on stdin, one JSON value on
// stdout.
//
// # The contract with a tool
//
// runtime_config is exactly {"command": ["<bundle-relative program>",
// "args"...], "data_paths": ["<bundle-relative dir>"]}. The program runs
// with the bundle read-only at /bundle (each data path also at
// /data/<path>), cwd and HOME a writable tmpfs /work, TMPDIR a tmpfs /tmp,
// PATH /usr/local/bin:/usr/bin:/bin and nothing else of the server's
// environment (but, for a networked tool, HTTP_PROXY and HTTPS_PROXY, its
// one way out). Nothing else is writable. It reads the call's arguments on stdin and writes its result
// on stdout; a non-zero exit is a tool_error carrying the end of its stderr.
// It may report progress by writing JSON lines to fd 3 (SCIDEX_PROGRESS_FD):
//
//	{"fraction": 0.5, "message": "aligned 10 of 20 reads"}
//
// each delivered to runtimes.Call.Progress; a malformed line is skipped.
//
// # Why it is built this way
//
// The server writes bwrap's command line itself and a manifest cannot add
// to it: raw flags, absolute host paths and .. escapes are refused by Check
// at registration and again at dispatch. bwrap run as root is no sandbox (it
// could undo its own namespaces), so a root server starts it as
// Options.UID/GID (nobody by default) and a server that is not root starts
// it as itself. The sandbox unshares every namespace, the network's
// included, drops every capability, dies with the server
// (--die-with-parent) and sees /usr, the /bin and /lib links, the few /etc
// files a libc and a shell read and a passwd of its own; never /etc/shadow,
// the server's data, its sockets or the host's /tmp. Its root, /etc and
// /dev are read-only (--remount-ro); /tmp, /work and /dev/shm are its only
// writable places.
//
// A networked tool (network allow or specific) reaches the outside only
// through internal/egress, an HTTP proxy the server runs for the call and
// whose every dial goes through internal/netguard, the outbound guard of
// http_post, with the operator's allow-list (Options.EgressAllow). The
// proxy's listener is on the sandbox's own loopback: cmd/scidex-egress-shim,
// run first in the sandbox, opens it, hands it to the server over a
// control socket (fd 6) and executes the tool with HTTP_PROXY and
// HTTPS_PROXY pointing at it. No packet leaves the sandbox but through that
// listener, and the guard judges every address the proxy connects to.
//
// Caps are enforced by the kernel, not asked for. bwrap is started with
// --block-fd: once it has built the sandbox and before it runs the tool,
// the runtime moves the sandbox into its own cgroup v1 groups under the
// server's cgroup (memory.limit_in_bytes and memsw at the memory cap,
// pids.max, cpu.cfs_quota_us for cpu_count) and only then lets it go, so
// nothing the tool starts escapes them. Where a controller is not usable
// (Options.NoCgroups, a host with cgroup v2 and none delegated) the cap
// falls back to an rlimit set on the blocked process (RLIMIT_AS, _NPROC,
// _CPU; RLIMIT_AS is set by the egress shim in a networked sandbox, since
// a Go program cannot start under it), and each error's details say which
// enforced what. The writable tmpfs mounts are capped at Options.TmpBytes
// with bwrap's --size, which bounds them where no memory cgroup does. A
// watchdog enforces the wall time by killing bwrap's monitor: its child,
// the pid namespace's init, dies with it and the kernel kills everything
// left in the namespace, setsid grandchildren included, which a
// process-group kill would miss.
//
// bwrap's --json-status-fd tells a sandbox that never came up (no exit-code
// line: a mount, the exec itself failed; CodeSetupFailed, Setup true, the
// reason in the server's log since it names host paths) from a tool that
// ran and failed. After the call the cgroup's peak memory
// (memory.max_usage_in_bytes) and CPU time are recorded; an OOM kill
// (memory.oom_control) is CodeMemoryLimit, forks refused at pids.max are
// CodePidsLimit, a full tmpfs is CodeDiskLimit.
//
// Bundles are copied from runtimes.Tool.Bundle into a per-version directory
// under Options.CacheDir, each file checked against its registered sha256;
// a cached file whose stat changed is hashed again at dispatch, and a
// mismatch anywhere is CodeBundleAltered. The cache is an LRU of at most
// Options.CacheBytes; a bundle a running call uses is never evicted. Other sandbox backends (docker,
// batch, k8s) plug in through Backend; a tool asking for one this server has
// not configured is refused by Check.
package bwrap
