package benchkit

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Build compiles ./cmd/scidex of this module into dir/scidex and returns its
// path. It builds from the module's root, so a command may run from anywhere
// inside the module.
func Build(dir string) string {
	bin := filepath.Join(dir, "scidex")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/scidex")
	cmd.Dir = ModuleRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		Fail(fmt.Errorf("build: %v\n%s", err, out))
	}
	return bin
}

// ModuleRoot is the directory of the substrate module's go.mod, found upwards
// from the working directory.
func ModuleRoot() string {
	dir, err := os.Getwd()
	Check(err)
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/scidex/substrate") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			Fail(fmt.Errorf("run from inside the substrate module"))
		}
		dir = parent
	}
}

// ServerOpts says how to start a server process.
type ServerOpts struct {
	// Bin is the executable: the scidex binary, or another server that logs
	// its address the same way (bench/fanout's floor).
	Bin string
	// Args are its arguments, all of them ("serve", "--addr",
	// "127.0.0.1:0", ...). The address must be logged at info level.
	Args []string
	// Env is added to this process's environment.
	Env []string
	// Group starts the server in a process group of its own, whose id is its
	// pid: what it starts is stopped with it and its CPU can be told apart.
	Group bool
}

// Server is a running server process.
type Server struct {
	// Cmd is the process, for its pid.
	Cmd *exec.Cmd
	// Addr is the host:port it listens on, read from its log.
	Addr string

	group    bool
	exited   chan struct{}
	stopOnce sync.Once
}

// listenRE matches the line the server logs once it listens.
var listenRE = regexp.MustCompile(`msg=listening addr=(\S+)`)

// startTimeout bounds each of the waits of StartServer: for the address in the
// log, then for /readyz.
const startTimeout = 2 * time.Minute

// StartServer starts the server, reads its address from the log line
// `msg=listening addr=...` and returns once /readyz answers 200, polled every
// 2 ms (bench/startup times exactly this). The rest of its log is discarded
// as it comes, so the server never blocks on it; its stopping is registered
// with AtExit.
func StartServer(o ServerOpts) *Server {
	cmd := exec.Command(o.Bin, o.Args...)
	cmd.Env = append(os.Environ(), o.Env...)
	if o.Group {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	stderr, err := cmd.StderrPipe()
	Check(err)
	if err := cmd.Start(); err != nil {
		Fail(fmt.Errorf("start %s: %w", o.Bin, err))
	}
	s := &Server{Cmd: cmd, group: o.Group, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.exited) }()
	AtExit(s.Stop)

	addr := make(chan string, 1)
	var head bytes.Buffer // what it logged before its address, for a failure
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listenRE.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
				_, _ = io.Copy(io.Discard, stderr)
				return
			}
			head.WriteString(sc.Text() + "\n")
		}
		close(addr)
		_, _ = io.Copy(io.Discard, stderr)
	}()
	select {
	case a, ok := <-addr:
		if !ok {
			Fail(fmt.Errorf("%s exited before listening:\n%s", o.Bin, head.String()))
		}
		s.Addr = a
	case <-time.After(startTimeout):
		Fail(fmt.Errorf("%s did not log its address within %s", o.Bin, startTimeout))
	}
	for deadline := time.Now().Add(startTimeout); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		resp, err := http.Get(s.URL() + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
	}
	Fail(fmt.Errorf("%s not ready within %s", o.Bin, startTimeout))
	return nil
}

// URL is the server's base URL, http://host:port.
func (s *Server) URL() string { return "http://" + s.Addr }

// stopGrace is how long Stop waits after SIGTERM before it kills: long enough
// for a server to close thousands of connections and stop its cluster.
const stopGrace = time.Minute

// Stop sends the server (its process group, if it has one) SIGTERM and waits
// until it has exited, killing it after a minute. It may be called more than
// once.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		pid := s.Cmd.Process.Pid
		if s.group {
			pid = -pid
		}
		_ = syscall.Kill(pid, syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(stopGrace):
			_ = syscall.Kill(pid, syscall.SIGKILL)
			<-s.exited
		}
	})
}
