package store

import (
	"bytes"
	"slices"

	lru "github.com/hashicorp/golang-lru/v2"
)

// currentRows remembers the current row of artifacts this process wrote
// lately, so that an update based on the version it just wrote (an agent
// editing what it made, a tool call moving through its states) needs no read
// before its write.
//
// It is a hint, never the truth. An update takes a remembered row only when
// its base is the remembered content hash, and its statement writes only if
// the row is still exactly as remembered in every field the update's checks
// read (content hash, version, latest, stored schema version, visibility,
// participants) and still the tuple the remembering write made (xmin):
// ArtifactUpdateWrite's WHERE. A row another process, another
// transaction or an envelope change moved makes the statement write nothing;
// the update forgets the row, reads it and starts again; and a refusal made
// on a remembered row (not found, not allowed, a conflict) is only given once
// made again on the row read. So a stale entry costs a statement or two and
// never changes an answer. Only a write that is one statement takes a
// remembered row, so starting again never follows a partial write.
type currentRows struct {
	lru *lru.Cache[typeID, *Artifact]
}

type typeID struct{ typ, id string }

const (
	// currentRowsSize bounds how many rows are remembered ...
	currentRowsSize = 4096
	// ... and currentRowMaxContent how large a content is remembered, so the
	// cache holds at most 64 MiB of content.
	currentRowMaxContent = 16 << 10
)

func newCurrentRows() *currentRows {
	c, err := lru.New[typeID, *Artifact](currentRowsSize)
	if err != nil {
		panic(err) // only for a size below 1
	}
	return &currentRows{lru: c}
}

// get returns a copy of the remembered current row of typ:id if its content
// hash is base; nil otherwise.
func (c *currentRows) get(typ, id, base string) *Artifact {
	if base == "" {
		return nil
	}
	a, ok := c.lru.Get(typeID{typ, id})
	if !ok || a.ContentHash != base {
		return nil
	}
	return cloneRow(a)
}

// rememberRow remembers a, the row this write made, as its artifact's current
// row once the write commits: as a is now, whatever its holders do with it
// later. Content above currentRowMaxContent, and rows not the latest or
// without the tuple the write made, are not remembered (and forget what was).
func (w *writer) rememberRow(a *Artifact) {
	c := w.store.current
	k := typeID{a.Type, a.ID}
	if !a.IsLatest || a.xmin == "" || len(a.Content) > currentRowMaxContent {
		w.afterCommit(func() { c.lru.Remove(k) })
		return
	}
	r := cloneRow(a)
	// As the database holds it: stored at the schema version it was written at.
	r.StoredSchemaVersion = 0
	w.afterCommit(func() { c.lru.Add(k, r) })
}

// forget drops what is remembered of typ:id.
func (c *currentRows) forget(typ, id string) { c.lru.Remove(typeID{typ, id}) }

// cloneRow copies a with its own content and participants, so neither the
// cache nor its reader sees the other's changes.
func cloneRow(a *Artifact) *Artifact {
	r := *a
	r.Content = bytes.Clone(a.Content)
	r.Provenance = bytes.Clone(a.Provenance)
	r.Participants = slices.Clone(a.Participants)
	if r.Participants == nil {
		r.Participants = []string{}
	}
	return &r
}
