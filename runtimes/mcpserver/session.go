package mcpserver

import (
	"context"
	"errors"
	"log/slog"
	"os/exec"
	"sync"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// conn is one configured server and its current session, if any.
type conn struct {
	name string
	srv  Server
	r    *Runtime

	mu  sync.Mutex
	cur *session
	// connecting is the connect in progress, shared by every call that
	// needs the session meanwhile: one handshake serves them all.
	connecting *flight
}

// flight is one connect attempt, made on the runtime's behalf rather than
// any one call's: a call that stops waiting (cancelled, out of wall time)
// leaves it to finish for the calls still waiting and the ones after them.
type flight struct {
	done chan struct{}
	s    *session
	err  error
}

// session is a live MCP session and, for a stdio server, its process.
type session struct {
	cs  *mcp.ClientSession
	cmd *exec.Cmd
	log *slog.Logger
}

// get returns the server's session, connecting it if there is none (or the
// stdio server it had has exited). Concurrent calls share one connect.
func (c *conn) get(ctx context.Context) (*session, error) {
	c.mu.Lock()
	if s := c.cur; s != nil {
		if !s.exited() {
			c.mu.Unlock()
			return s, nil
		}
		s.log.Info("the mcp server has exited; reconnecting")
		c.cur = nil
		c.r.bg.Go(s.close)
	}
	f := c.connecting
	if f == nil {
		f = &flight{done: make(chan struct{})}
		c.connecting = f
		// Close waits for the calls in Run before it waits for bg, so
		// this Go happens before that Wait.
		c.r.bg.Go(func() {
			s, err := c.r.connect(c.r.base, c.name, c.srv)
			c.mu.Lock()
			defer c.mu.Unlock()
			c.connecting = nil
			if err == nil {
				c.cur = s
			}
			f.s, f.err = s, err
			close(f.done)
		})
	}
	c.mu.Unlock()
	select {
	case <-f.done:
		return f.s, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// drop forgets s if it is still the server's session and closes it in the
// background: calls still running on it finish first (the SDK's Close waits
// for them), and the next call connects anew.
func (c *conn) drop(s *session) {
	c.mu.Lock()
	if c.cur != s {
		c.mu.Unlock()
		return
	}
	c.cur = nil
	c.mu.Unlock()
	c.r.bg.Go(s.close)
}

// take removes and returns the current session (for Close).
func (c *conn) take() *session {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.cur
	c.cur = nil
	return s
}

// close ends the session: the SDK closes the server's stdin and waits for it
// to exit (SIGTERM, then SIGKILL, after TerminateGrace each), or ends the
// HTTP session; then whatever is left of a stdio server's process group is
// killed, so helpers it forked do not outlive it.
func (s *session) close() {
	if err := s.cs.Close(); err != nil && !errors.Is(err, mcp.ErrConnectionClosed) {
		s.log.Debug("mcp session closed with an error", "error", err)
	}
	s.killGroup()
}

func (s *session) killGroup() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	// The server was started with Setpgid, so its pid is its group's id.
	if err := syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		s.log.Warn("kill the mcp server's process group", "error", err)
	}
}
