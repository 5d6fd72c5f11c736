// Package documents keeps the trusted documents of production mode: the
// GraphQL operations a production server runs for actors without the admin
// permission (an allow-list, the "trusted documents" or persisted-operations
// pattern). A document is known by the sha256 of its text as clients send
// it, byte for byte; a client sends the text, or only its hash in the
// persistedQuery extension and the server supplies the text.
//
// Operators register their clients' documents with `scidex documents push`;
// the server registers its own at start (the MCP tools' operations, the live
// page's).
package documents

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/scidex/substrate/internal/dbsqlc"
)

// Hash is a document's id: the lower-case hex sha256 of its text.
func Hash(document string) string {
	sum := sha256.Sum256([]byte(document))
	return hex.EncodeToString(sum[:])
}

// Store reads and registers trusted documents.
type Store struct {
	db DB
	q  *dbsqlc.Queries

	mu    sync.RWMutex
	known map[string]string // hash → text, of documents found registered
}

// maxCached bounds the documents kept in memory; past it the cache starts
// over (a registered document is looked up again, never refused).
const maxCached = 10000

// DB is what the store runs on: a pool (or a connection) that can begin the
// transaction a registration is made in.
type DB interface {
	dbsqlc.DBTX
	Begin(ctx context.Context) (pgx.Tx, error)
}

// New is a store on db.
func New(db DB) *Store {
	return &Store{db: db, q: dbsqlc.New(db), known: map[string]string{}}
}

// Document is one document to register.
type Document struct {
	Name     string // a label: the file, the operation
	Document string
}

// Registered is what registering one document did.
type Registered struct {
	Name, Hash string
	New        bool // false: it was registered before
}

// Register registers documents under source ("push", "mcp"…), all or none:
// an empty document refuses the whole list before anything is written, and a
// database error midway leaves nothing of it registered.
func (s *Store) Register(ctx context.Context, source string, docs []Document) ([]Registered, error) {
	for _, d := range docs {
		if d.Document == "" {
			return nil, fmt.Errorf("document %q is empty", d.Name)
		}
	}
	tx, err := s.db.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("register trusted documents: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op once committed
	q := s.q.WithTx(tx)
	out := make([]Registered, 0, len(docs))
	now := time.Now()
	for _, d := range docs {
		h := Hash(d.Document)
		inserted, err := q.TrustedDocumentInsert(ctx, dbsqlc.TrustedDocumentInsertParams{
			Hash: h, Document: d.Document, Name: d.Name, Source: source, RegisteredAt: now})
		if err != nil {
			return nil, fmt.Errorf("register %s: %w", d.Name, err)
		}
		out = append(out, Registered{Name: d.Name, Hash: h, New: inserted})
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("register trusted documents: %w", err)
	}
	return out, nil
}

// Lookup is the text of the registered document of hash; ok is false when
// none is registered. Found documents are remembered: registrations are
// never withdrawn while a server runs.
func (s *Store) Lookup(ctx context.Context, hash string) (text string, ok bool, err error) {
	s.mu.RLock()
	text, ok = s.known[hash]
	s.mu.RUnlock()
	if ok {
		return text, true, nil
	}
	text, err = s.q.TrustedDocumentGet(ctx, hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("trusted documents: %w", err)
	}
	s.mu.Lock()
	if len(s.known) >= maxCached {
		s.known = map[string]string{}
	}
	s.known[hash] = text
	s.mu.Unlock()
	return text, true, nil
}

// Listed is one registered document, as List gives it.
type Listed struct {
	Hash, Name, Source string
	RegisteredAt       time.Time
	Bytes              int
}

// List is every registered document, oldest first.
func (s *Store) List(ctx context.Context) ([]Listed, error) {
	rows, err := s.q.TrustedDocumentList(ctx)
	if err != nil {
		return nil, fmt.Errorf("trusted documents: %w", err)
	}
	out := make([]Listed, len(rows))
	for i, r := range rows {
		out[i] = Listed{Hash: r.Hash, Name: r.Name, Source: r.Source, RegisteredAt: r.RegisteredAt, Bytes: int(r.Bytes)}
	}
	return out, nil
}
