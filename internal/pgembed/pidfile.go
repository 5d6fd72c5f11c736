package pgembed

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// pidFile is the part of PGDATA/postmaster.pid this package reads.
type pidFile struct {
	pid    int
	status string // "starting", "ready", "stopping" or "standby"
}

// readPidFile parses postmaster.pid. Line 1 is the pid and line 8 the
// postmaster status (PostgreSQL 10 and later); a missing status line is
// reported as "".
func readPidFile(path string) (pidFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return pidFile{}, err
	}
	lines := strings.Split(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil || pid <= 0 {
		return pidFile{}, fmt.Errorf("pgembed: %s: bad pid line %q", path, lines[0])
	}
	pf := pidFile{pid: pid}
	if len(lines) > 7 {
		pf.status = strings.TrimSpace(lines[7])
	}
	return pf, nil
}
