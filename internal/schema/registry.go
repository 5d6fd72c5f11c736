package schema

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/scidex/substrate/internal/dbsqlc"
)

// ErrUnknownType is returned for a type with no schema in the registry.
var ErrUnknownType = errors.New("unknown artifact type")

// recheck is how long a cached latest version is trusted before the registry asks
// the database whether another process registered a newer one.
const recheck = 5 * time.Second

// Registry caches compiled schema versions loaded from the schemas table.
type Registry struct {
	q  *dbsqlc.Queries
	mu sync.RWMutex
	// latest maps a type to its newest compiled version and when that was checked.
	latest map[string]latestEntry
	// versions caches every compiled version by "type@version".
	versions map[string]*Type
	// compiling holds the compiles under way, so that concurrent misses of one
	// version compile it once: on a cold cache, 390 aliases of `schemas` in one
	// query compiled every document once per alias (15 s and 3.3 GB).
	compiling map[string]*compileCall
	// missing are the versions below a type's latest that it never had (the
	// default types are installed at their current version): a version is
	// only ever registered above the latest, so these stay missing, and an
	// artifact stored at an older version is upgraded past them on every read
	// without asking the database again (it asked three times a Prism page).
	missing map[string]bool
	now     func() time.Time
	// refreshing is set while a background refresh runs (one at a time).
	refreshing atomic.Bool
}

// compileCall is one compile of a version that others may wait for.
type compileCall struct {
	done chan struct{}
	t    *Type
	err  error
}

type latestEntry struct {
	t       *Type
	checked time.Time
}

// NewRegistry returns a registry reading through q.
func NewRegistry(q *dbsqlc.Queries) *Registry {
	return &Registry{q: q, latest: map[string]latestEntry{}, versions: map[string]*Type{}, compiling: map[string]*compileCall{}, missing: map[string]bool{}, now: time.Now}
}

// Get returns the newest version of a type's schema, for reads. A cached
// version past its recheck time is returned at once while a background lookup
// refreshes it, so a read's statements do not depend on the clock.
func (r *Registry) Get(ctx context.Context, typ string) (*Type, error) {
	r.mu.RLock()
	e, ok := r.latest[typ]
	r.mu.RUnlock()
	if !ok {
		return r.GetWith(ctx, r.q, typ)
	}
	if r.now().Sub(e.checked) >= recheck && r.refreshing.CompareAndSwap(false, true) {
		go func() {
			defer r.refreshing.Store(false)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, _ = r.GetWith(ctx, r.q, typ)
		}()
	}
	return e.t, nil
}

// GetWith returns the newest version of a type's schema, for writes: a cached
// version past its recheck time is checked against the database first. It reads
// through q: inside a transaction, pass the transaction's queries, so a lookup
// never waits for a second connection from the pool (which, with the pool
// exhausted by such transactions, would wait forever).
func (r *Registry) GetWith(ctx context.Context, q *dbsqlc.Queries, typ string) (*Type, error) {
	r.mu.RLock()
	e, ok := r.latest[typ]
	r.mu.RUnlock()
	if ok && r.now().Sub(e.checked) < recheck {
		return e.t, nil
	}
	v, err := q.SchemaLatestVersion(ctx, typ)
	if err != nil {
		return nil, fmt.Errorf("schema %s: latest version: %w", typ, err)
	}
	if v == 0 {
		return nil, fmt.Errorf("%w %q", ErrUnknownType, typ)
	}
	t, err := r.getVersion(ctx, q, typ, int(v))
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.latest[typ] = latestEntry{t: t, checked: r.now()}
	r.mu.Unlock()
	return t, nil
}

// GetVersion returns one version of a type's schema.
func (r *Registry) GetVersion(ctx context.Context, typ string, version int) (*Type, error) {
	return r.getVersion(ctx, r.q, typ, version)
}

// GetVersionWith is GetVersion reading through q (a transaction's queries).
func (r *Registry) GetVersionWith(ctx context.Context, q *dbsqlc.Queries, typ string, version int) (*Type, error) {
	return r.getVersion(ctx, q, typ, version)
}

func (r *Registry) getVersion(ctx context.Context, q *dbsqlc.Queries, typ string, version int) (*Type, error) {
	key := fmt.Sprintf("%s@%d", typ, version)
	r.mu.RLock()
	t, ok := r.versions[key]
	missing := r.missing[key]
	r.mu.RUnlock()
	if ok {
		return t, nil
	}
	if missing {
		return nil, fmt.Errorf("%w %q version %d", ErrUnknownType, typ, version)
	}
	row, err := q.SchemaGet(ctx, typ, int32(version))
	if errors.Is(err, pgx.ErrNoRows) {
		r.mu.Lock()
		if e, ok := r.latest[typ]; ok && version < e.t.Version {
			r.missing[key] = true
		}
		r.mu.Unlock()
		return nil, fmt.Errorf("%w %q version %d", ErrUnknownType, typ, version)
	}
	if err != nil {
		return nil, fmt.Errorf("schema %s version %d: %w", typ, version, err)
	}
	// Each caller reads the row through its own queries (a transaction's
	// connection never waits for another's); only the compile, which needs no
	// connection, is shared.
	r.mu.Lock()
	if t, ok := r.versions[key]; ok {
		r.mu.Unlock()
		return t, nil
	}
	if c, ok := r.compiling[key]; ok {
		r.mu.Unlock()
		select {
		case <-c.done:
			return c.t, c.err
		case <-ctx.Done():
			return nil, fmt.Errorf("schema %s version %d: %w", typ, version, ctx.Err())
		}
	}
	c := &compileCall{done: make(chan struct{})}
	r.compiling[key] = c
	r.mu.Unlock()
	c.t, c.err = Compile(json.RawMessage(row.Document), int(row.Version), row.ContentHash)
	r.mu.Lock()
	delete(r.compiling, key)
	if c.err == nil {
		r.versions[key] = c.t
	}
	r.mu.Unlock()
	close(c.done)
	return c.t, c.err
}

// List returns the newest version of every registered type, sorted by name.
func (r *Registry) List(ctx context.Context) ([]*Type, error) {
	rows, err := r.q.SchemaListLatest(ctx)
	if err != nil {
		return nil, fmt.Errorf("list schemas: %w", err)
	}
	out := make([]*Type, 0, len(rows))
	for _, row := range rows {
		t, err := r.GetVersion(ctx, row.Type, int(row.Version))
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

// Forget drops the cached latest version of typ so the next Get reads the database;
// the write path calls it after registering a new version.
func (r *Registry) Forget(typ string) {
	r.mu.Lock()
	delete(r.latest, typ)
	r.mu.Unlock()
}

// Raw returns a document as stored, for the GraphQL `document` field.
func (t *Type) RawDocument() json.RawMessage { return t.Raw }
