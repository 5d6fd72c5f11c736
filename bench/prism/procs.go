package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"time"
)

// Cleanup: every process and directory the benchmark makes is registered here
// and undone in reverse order on exit, on failure and on Ctrl-C.
var (
	cleanMu  sync.Mutex
	cleanups []func()
	tempDir  string
)

func atExit(f func()) {
	cleanMu.Lock()
	defer cleanMu.Unlock()
	cleanups = append(cleanups, f)
}

var cleanOnce sync.Once

func cleanup() {
	cleanOnce.Do(func() {
		cleanMu.Lock()
		fs := cleanups
		cleanMu.Unlock()
		for i := len(fs) - 1; i >= 0; i-- {
			fs[i]()
		}
	})
}

// onSignal cleans up and exits on SIGINT and SIGTERM.
func onSignal() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-ch
		fmt.Fprintln(os.Stderr, "prism: interrupted, cleaning up")
		cleanup()
		if s == os.Interrupt {
			os.Exit(130)
		}
		os.Exit(143)
	}()
}

// startGroup starts cmd in its own process group and registers its stopping:
// SIGTERM to the group (node's cluster workers included), SIGKILL after 5 s.
// It returns the group id.
func startGroup(cmd *exec.Cmd, name string) int {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		fail(fmt.Errorf("start %s: %w", name, err))
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	pgid := cmd.Process.Pid
	atExit(func() {
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

// startServer runs the scidex binary on the benchmark's database with a pool of
// poolSize connections, and returns its GraphQL URL and process group.
func startServer(bin, dbURL string, poolSize int, pprofAddr string) (string, int) {
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data-dir", filepath.Join(tempDir, "data"),
		"--write-rate", "0", "--log-level", "info")
	if pprofAddr != "" {
		cmd.Args = append(cmd.Args, "--pprof-addr", pprofAddr)
	}
	cmd.Env = append(os.Environ(), fmt.Sprintf("DATABASE_URL=%s pool_max_conns=%d", dbURL, poolSize), "SCIDEX_JWT_SECRET="+secret)
	stderr, err := cmd.StderrPipe()
	check(err)
	pgid := startGroup(cmd, "scidex")
	re := regexp.MustCompile(`msg=listening addr=(\S+)`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() { // keep draining: the server must never block on its log
			if m := re.FindStringSubmatch(sc.Text()); m != nil && !sent {
				found <- m[1]
				sent = true
			}
		}
		if !sent {
			close(found)
		}
	}()
	select {
	case addr, ok := <-found:
		if !ok {
			fail(fmt.Errorf("server exited before listening"))
		}
		return "http://" + addr + "/graphql", pgid
	case <-time.After(120 * time.Second):
		fail(fmt.Errorf("server did not start"))
	}
	return "", 0
}

// freePort asks the kernel for a free loopback port.
func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func check(err error) {
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "prism:", err)
	cleanup()
	os.Exit(1)
}
