package pgembed

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
)

// DefaultDatabase is the database Start creates when Options.Database is
// empty.
const DefaultDatabase = "scidex"

// Options configures Start.
type Options struct {
	// Dir is the cluster directory, e.g. <data-dir>/postgres. It is created
	// (mode 0700) if missing. It must not be writable by group or others.
	Dir string

	// BinDir is the directory holding initdb and postgres. When empty the
	// binaries are discovered: $SCIDEX_PG_BIN, `pg_config --bindir`, the
	// highest version under /usr/lib/postgresql/*/bin, then PATH. An
	// explicit BinDir (or SCIDEX_PG_BIN) that lacks the binaries is an
	// error; discovery does not fall back from it.
	BinDir string

	// OSUser is the unprivileged OS user that runs initdb and postgres when
	// this process runs as root. It defaults to the owner of an existing
	// cluster, else "postgres" if that user exists, else "nobody". It is
	// ignored when not running as root.
	OSUser string

	// Database is the database that Start makes sure exists and that
	// ConnString connects to. It defaults to DefaultDatabase.
	Database string

	// Settings are extra server settings passed as -c name=value, for
	// example {"fsync": "off"} in tests. listen_addresses,
	// unix_socket_directories and port are managed by this package and
	// cannot be set. An adopted server keeps the settings it was started
	// with.
	Settings map[string]string

	// Join lets Start connect to the cluster as a guest when another live
	// scidex process owns it (holds its directory lock) and its server is
	// ready, instead of failing with ErrInUse: `scidex mcp` beside a running
	// `scidex serve`. A joined cluster is the owner's: Stop leaves it
	// running, and when the owner stops it the guest's connections fail.
	Join bool

	// Logger receives short progress lines. It defaults to slog.Default().
	Logger *slog.Logger
}

var settingName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)

// managedSettings are the settings the package controls itself.
var managedSettings = map[string]bool{
	"listen_addresses":        true,
	"unix_socket_directories": true,
	"port":                    true,
}

// withDefaults validates opts and fills in defaults.
func (o Options) withDefaults() (Options, error) {
	if o.Dir == "" {
		return o, errors.New("pgembed: Options.Dir is required")
	}
	if o.Database == "" {
		o.Database = DefaultDatabase
	}
	if len(o.Database) > 63 {
		return o, fmt.Errorf("pgembed: database name %q is longer than 63 bytes", o.Database)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	for name := range o.Settings {
		if !settingName.MatchString(name) {
			return o, fmt.Errorf("pgembed: invalid setting name %q", name)
		}
		if managedSettings[name] {
			return o, fmt.Errorf("pgembed: setting %q is managed by pgembed and cannot be overridden", name)
		}
	}
	return o, nil
}
