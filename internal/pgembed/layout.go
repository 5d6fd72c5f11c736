package pgembed

import (
	"fmt"
	"path/filepath"
	"strconv"
)

const (
	// superuser is the PostgreSQL superuser role initdb creates.
	superuser = "scidex"
	// port only names the socket file; TCP is off.
	port = 5432
	// maxSocketPath is sizeof(sockaddr_un.sun_path) minus the NUL byte.
	maxSocketPath = 107
)

// layout holds the absolute paths inside a cluster directory.
type layout struct {
	dir      string // cluster directory (Options.Dir)
	data     string // PGDATA
	initTmp  string // initdb target, renamed to data on success
	run      string // private Unix socket directory
	logDir   string
	logFile  string
	lockFile string
}

func newLayout(dir string) (layout, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return layout{}, fmt.Errorf("pgembed: cluster directory %q: %w", dir, err)
	}
	l := layout{
		dir:      abs,
		data:     filepath.Join(abs, "data"),
		initTmp:  filepath.Join(abs, "data.initdb"),
		run:      filepath.Join(abs, "run"),
		logDir:   filepath.Join(abs, "log"),
		logFile:  filepath.Join(abs, "log", "postgres.log"),
		lockFile: filepath.Join(abs, "scidex.lock"),
	}
	if s := l.socket(); len(s) > maxSocketPath {
		return layout{}, fmt.Errorf("pgembed: cluster directory %s is too deep: the socket path %s is %d bytes, over the %d-byte Unix socket limit; choose a shorter data directory",
			abs, s, len(s), maxSocketPath)
	}
	return l, nil
}

// socket is the path of the server's Unix socket.
func (l layout) socket() string {
	return filepath.Join(l.run, ".s.PGSQL."+strconv.Itoa(port))
}

// pidFile is the path of the postmaster's lock file.
func (l layout) pidFile() string { return filepath.Join(l.data, "postmaster.pid") }
