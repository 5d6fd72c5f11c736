package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"
)

// ControlPair returns the two ends of a control socket: the server keeps
// the first and gives the second to the sandbox (as an inherited fd that
// cmd/scidex-egress-shim names in its first argument). Both are
// close-on-exec here; exec.Cmd.ExtraFiles clears the flag on the child's
// copy only.
func ControlPair() (server, sandbox *os.File, err error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("egress control socket: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "egress-control"), os.NewFile(uintptr(fds[1]), "egress-control-sandbox"), nil
}

// ReceiveListener waits on the server's end of a control socket for the
// listener the shim opened in the sandbox's network namespace, and checks
// that it is one: a listening TCP socket. It returns an error when the
// sandbox ends first (every copy of the other end closed) or ctx does.
// ctl is consumed.
func ReceiveListener(ctx context.Context, ctl *os.File) (net.Listener, error) {
	c, err := net.FileConn(ctl)
	ctl.Close()
	if err != nil {
		return nil, fmt.Errorf("egress control socket: %w", err)
	}
	defer c.Close()
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil, errors.New("egress control socket: not a unix socket")
	}
	stop := context.AfterFunc(ctx, func() { _ = uc.SetReadDeadline(time.Now()) })
	defer stop()
	buf, oob := make([]byte, 1), make([]byte, syscall.CmsgSpace(4*4))
	_, oobn, _, _, err := uc.ReadMsgUnix(buf, oob)
	if err != nil {
		return nil, fmt.Errorf("egress control socket: %w", err)
	}
	msgs, err := syscall.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return nil, fmt.Errorf("egress control message: %w", err)
	}
	var fds []int
	for _, m := range msgs {
		if got, err := syscall.ParseUnixRights(&m); err == nil {
			fds = append(fds, got...)
		}
	}
	if len(fds) != 1 {
		for _, fd := range fds {
			_ = syscall.Close(fd)
		}
		return nil, fmt.Errorf("egress control message: %d descriptors, want one listener", len(fds))
	}
	syscall.CloseOnExec(fds[0])
	if err := isTCPListener(fds[0]); err != nil {
		_ = syscall.Close(fds[0])
		return nil, err
	}
	f := os.NewFile(uintptr(fds[0]), "egress-listener")
	defer f.Close()
	l, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("egress listener: %w", err)
	}
	return l, nil
}

// isTCPListener checks that what the sandbox handed over is what the shim
// makes: an IPv4 stream socket, listening.
func isTCPListener(fd int) error {
	dom, err1 := syscall.GetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_DOMAIN)
	typ, err2 := syscall.GetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_TYPE)
	acc, err3 := syscall.GetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_ACCEPTCONN)
	if err := errors.Join(err1, err2, err3); err != nil {
		return fmt.Errorf("egress listener: %w", err)
	}
	if dom != syscall.AF_INET || typ != syscall.SOCK_STREAM || acc != 1 {
		return fmt.Errorf("egress listener: domain %d type %d listening %d, want a listening IPv4 stream socket", dom, typ, acc)
	}
	return nil
}
