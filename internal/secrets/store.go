package secrets

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
)

// EnvPrefix is the prefix of the environment variables that define secrets:
// SCIDEX_SECRET_UNITS_TOKEN defines UNITS_TOKEN.
const EnvPrefix = "SCIDEX_SECRET_"

// MaxFileBytes bounds a secrets file; a larger one is surely not one.
const MaxFileBytes = 1 << 20

// namePattern is what a secret's name looks like.
var namePattern = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,127}$`)

// ValidName reports whether name can name a secret, so that a manifest's
// secret_ref can be judged before the store is asked.
func ValidName(name string) bool { return namePattern.MatchString(name) }

// Options says where the secrets are.
type Options struct {
	// Environ is the environment to read SCIDEX_SECRET_<NAME> from, as
	// os.Environ gives it; nil reads os.Environ(). Tests pass their own.
	Environ []string
	// File is the path of a secrets file, "" for none.
	File string
}

// Store holds the server's secrets by name. It is read once by Load and
// safe for concurrent use afterwards.
type Store struct {
	values map[string]Value
	grants map[string]*grant
}

// Load reads the secrets from the environment and the file. A malformed
// entry, a file others may read or a name defined twice is an error naming
// the entry (never its value): the server should not start on a secrets
// configuration it cannot fully honour.
func Load(opts Options) (*Store, error) {
	s := newStore()
	env := opts.Environ
	if env == nil {
		env = os.Environ()
	}
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, EnvPrefix) {
			continue
		}
		name = strings.TrimPrefix(name, EnvPrefix)
		if err := s.add(name, value, "environment variable "+EnvPrefix+name); err != nil {
			return nil, fmt.Errorf("load secrets: %w", err)
		}
	}
	if opts.File != "" {
		if err := s.loadFile(opts.File); err != nil {
			return nil, fmt.Errorf("load secrets: %w", err)
		}
	}
	return s, nil
}

func newStore() *Store {
	return &Store{values: map[string]Value{}, grants: map[string]*grant{}}
}

// New returns a store of the given secrets and grants, checked like loaded
// ones (a grant names a secret of values). It is for tests and for callers
// that get their secrets elsewhere.
func New(values map[string]string, grants map[string]Grant) (*Store, error) {
	s := newStore()
	for _, name := range sortedKeys(values) {
		if err := s.add(name, values[name], "secret "+name); err != nil {
			return nil, err
		}
	}
	for _, name := range sortedKeys(grants) {
		if err := s.addGrant(name, grants[name], "grant of "+name); err != nil {
			return nil, err
		}
	}
	for _, name := range sortedKeys(grants) {
		if !s.Has(name) {
			return nil, fmt.Errorf("a grant names secret %s, which is not defined", name)
		}
	}
	return s, nil
}

// addGrant checks a secret's grant and records it; where says where it was
// written. A secret has at most one grant.
func (s *Store) addGrant(name string, g Grant, where string) error {
	if !ValidName(name) {
		return fmt.Errorf("%s: the name is not a secret name (upper-case letters, digits and _, starting with a letter, at most 128)", where)
	}
	where = strings.TrimSuffix(where, ", secret "+name)
	if _, dup := s.grants[name]; dup {
		return fmt.Errorf("%s: secret %s is granted twice; keep one grant", where, name)
	}
	checked, err := g.check()
	if err != nil {
		return fmt.Errorf("%s: the grant of secret %s: %w", where, name, err)
	}
	s.grants[name] = checked
	return nil
}

// Granted reports whether the operator lets tool send the secret called
// name to target (a Target: the host:port a URL dials). A secret without a
// grant, or not in the store, is granted to nothing.
func (s *Store) Granted(name, tool, target string) bool {
	if s == nil || target == "" {
		return false
	}
	g, ok := s.grants[name]
	if !ok || !s.Has(name) {
		return false
	}
	return g.tools[tool] && g.hosts[target]
}

// Ungranted lists, sorted, the secrets the store holds that no tool may use
// (defined without a grant): the server warns of them at start.
func (s *Store) Ungranted() []string {
	var out []string
	for _, n := range s.Names() {
		if _, ok := s.grants[n]; !ok {
			out = append(out, n)
		}
	}
	return out
}

// add checks one secret and adds it; where says where it came from, for the
// error (never the value).
func (s *Store) add(name, value, where string) error {
	if !ValidName(name) {
		// A file's malformed name may be a value written in the wrong
		// place, so only a variable's name (never secret) is quoted.
		shown := "the name"
		if strings.HasPrefix(where, "environment") {
			shown = fmt.Sprintf("%q", name)
		}
		return fmt.Errorf("%s: %s is not a secret name (upper-case letters, digits and _, starting with a letter, at most 128)", where, shown)
	}
	if value == "" {
		return fmt.Errorf("%s: secret %s is empty", where, name)
	}
	for _, r := range value {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%s: secret %s holds a control character (a secret goes into an HTTP header)", where, name)
		}
	}
	if _, dup := s.values[name]; dup {
		return fmt.Errorf("%s: secret %s is defined twice (in the environment and in the secrets file, or twice in the file); keep one", where, name)
	}
	s.values[name] = Value{v: value}
	return nil
}

// Lookup returns the secret called name.
func (s *Store) Lookup(name string) (Value, bool) {
	if s == nil {
		return Value{}, false
	}
	v, ok := s.values[name]
	return v, ok
}

// Has reports whether the store holds a secret called name.
func (s *Store) Has(name string) bool {
	_, ok := s.Lookup(name)
	return ok
}

// Names lists the secrets' names, sorted (names are not secret; an operator's
// startup log may show them).
func (s *Store) Names() []string {
	if s == nil {
		return nil
	}
	out := make([]string, 0, len(s.values))
	for n := range s.values {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
