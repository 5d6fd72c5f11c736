package main

import (
	"fmt"
	"net"
	"os/exec"
	"syscall"
	"time"

	"github.com/scidex/substrate/bench/internal/benchkit"
)

// tempDir is the run's scratch directory (benchkit.Stack.Dir).
var tempDir string

// pgDataDir is the run's cluster data directory (benchkit.Stack.PGData), for
// the CPU accounting.
var pgDataDir string

func pgData() string { return pgDataDir }

// startGroup starts cmd (PostGraphile's node) in its own process group and
// registers its stopping: SIGTERM to the group (node's cluster workers
// included), SIGKILL after 5 s. It returns the group id.
func startGroup(cmd *exec.Cmd, name string) int {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		benchkit.Fail(fmt.Errorf("start %s: %w", name, err))
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	pgid := cmd.Process.Pid
	benchkit.AtExit(func() {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-done
		}
	})
	return pgid
}

// freePort asks the kernel for a free loopback port.
func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	benchkit.Check(err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
