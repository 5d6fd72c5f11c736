package runtimes

import (
	"errors"
	"fmt"
	"sort"
)

// Registry holds the runtimes of one server, by name. It is filled once at
// start (cmd/scidex) and read concurrently afterwards.
type Registry struct {
	byName map[string]Runtime
}

// NewRegistry returns a registry of rs; two runtimes with one name are an error.
func NewRegistry(rs ...Runtime) (*Registry, error) {
	r := &Registry{byName: map[string]Runtime{}}
	for _, rt := range rs {
		if err := r.Register(rt); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Register adds a runtime. It is not safe once the registry is in use.
func (r *Registry) Register(rt Runtime) error {
	if r.byName == nil {
		r.byName = map[string]Runtime{}
	}
	if _, dup := r.byName[rt.Name()]; dup {
		return fmt.Errorf("runtimes: %q registered twice", rt.Name())
	}
	r.byName[rt.Name()] = rt
	return nil
}

// Get returns the runtime registered under name.
func (r *Registry) Get(name string) (Runtime, bool) {
	if r == nil {
		return nil, false
	}
	rt, ok := r.byName[name]
	return rt, ok
}

// Names lists the registered runtimes, sorted.
func (r *Registry) Names() []string {
	if r == nil {
		return nil
	}
	out := make([]string, 0, len(r.byName))
	for n := range r.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Close closes the runtimes that hold resources (sessions to MCP servers,
// pooled connections): those with a Close method. The server calls it once
// its background work, every call among it, has stopped.
func (r *Registry) Close() error {
	if r == nil {
		return nil
	}
	var errs []error
	for _, name := range r.Names() {
		if c, ok := r.byName[name].(interface{ Close() error }); ok {
			if err := c.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close the %s runtime: %w", name, err))
			}
		}
	}
	return errors.Join(errs...)
}
