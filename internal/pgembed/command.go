package pgembed

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// command prepares a PostgreSQL program run as r, in its own session (so a
// terminal's Ctrl-C reaches only scidex, which then stops the server), with
// the PG* environment variables removed so none can redirect it. A nil ctx
// makes a process that outlives any context, as the server must.
func (r runAs) command(ctx context.Context, dir, path string, args ...string) *exec.Cmd {
	var cmd *exec.Cmd
	if ctx != nil {
		cmd = exec.CommandContext(ctx, path, args...)
	} else {
		cmd = exec.Command(path, args...)
	}
	cmd.Dir = dir
	cmd.Env = childEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: r.credential()}
	return cmd
}

func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			env = append(env, kv)
		}
	}
	return env
}
