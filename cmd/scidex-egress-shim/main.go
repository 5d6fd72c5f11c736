// Command scidex-egress-shim is the first program of a networked bwrap
// sandbox, run by the bwrap runtime before the tool; nobody runs it by hand.
//
//	scidex-egress-shim <control-fd> <port> <address-space-bytes> -- <program> [args...]
//
// The sandbox has a network namespace of its own: its loopback and nothing
// else. The shim opens a TCP listener on 127.0.0.1:<port> there, hands it
// over the control socket (an AF_UNIX socket the server passed as
// <control-fd>) to the server, whose egress proxy accepts on it, closes its
// copies, lowers RLIMIT_AS to <address-space-bytes> when that is not 0 (the
// rlimit stand-in for a memory cgroup, set here because the Go runtime
// cannot start under the tool's cap) and executes the program in its place.
// The tool thus reaches the outside only through HTTP_PROXY, which the
// server runs and guards; the shim leaves no process of its own behind.
//
// It imports nothing but syscall, os and strconv, so that it links
// statically, starts in a millisecond and costs the tool nothing once it
// has executed it.
package main

import (
	"os"
	"strconv"
	"syscall"
)

// exitSetup is the shim's status when it could not set the sandbox up; the
// runtime reads the reason from stderr.
const exitSetup = 125

func main() {
	a := os.Args
	if len(a) < 6 || a[4] != "--" {
		fail("usage: scidex-egress-shim <control-fd> <port> <address-space-bytes> -- <program> [args...]", nil)
	}
	ctl, err1 := strconv.Atoi(a[1])
	port, err2 := strconv.Atoi(a[2])
	as, err3 := strconv.ParseUint(a[3], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || ctl < 3 || port < 1 || port > 65535 {
		fail("bad arguments", nil)
	}
	l, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		fail("socket", err)
	}
	if err := syscall.SetsockoptInt(l, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		fail("setsockopt", err)
	}
	if err := syscall.Bind(l, &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		fail("bind 127.0.0.1:"+a[2], err)
	}
	if err := syscall.Listen(l, 128); err != nil {
		fail("listen", err)
	}
	if err := syscall.Sendmsg(ctl, []byte("L"), syscall.UnixRights(l), nil, 0); err != nil {
		fail("hand the listener to the server", err)
	}
	_ = syscall.Close(l)
	_ = syscall.Close(ctl)
	if as > 0 {
		if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: as, Max: as}); err != nil {
			fail("setrlimit", err)
		}
	}
	err = syscall.Exec(a[5], a[5:], os.Environ())
	fail("exec "+a[5], err)
}

func fail(what string, err error) {
	msg := "scidex-egress-shim: " + what
	if err != nil {
		msg += ": " + err.Error()
	}
	_, _ = os.Stderr.WriteString(msg + "\n")
	os.Exit(exitSetup)
}
