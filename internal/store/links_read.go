package store

import (
	"context"
	"fmt"
	"time"
)

// Link is a typed edge between two artifacts.
type Link struct {
	PK        int64
	FromPK    int64
	Predicate string
	ToPK      int64
	ToHash    *string
	Evidence  []string
	CreatedBy string
	CreatedAt time.Time
	// Other is the artifact at the link's other end (the target of an outgoing
	// link, the source of an incoming one), when the link was read with it.
	Other *Artifact
}

// Link directions, relative to the artifact asked about.
const (
	DirOut  = "OUT"
	DirIn   = "IN"
	DirBoth = "BOTH"
)

// LinkQuery selects links of one direction and predicates, a page at a time.
type LinkQuery struct {
	Direction  string
	Predicates []string
	// Limit is how many rows to fetch per artifact (a page plus one, to learn
	// whether there is a next page).
	Limit   int
	AfterPK int64
	// Brief reads the other ends without their content (Artifact.Brief), for
	// a selection of them that reads none; out links only, the others ignore it.
	Brief bool
}

// CountLinks counts the links of one artifact in a direction with predicates.
func (s *Store) CountLinks(ctx context.Context, pk int64, direction string, predicates []string) (int, error) {
	cond := "from_pk = $1"
	switch direction {
	case DirIn:
		cond = "to_pk = $1"
	case DirBoth:
		cond = "(from_pk = $1 OR to_pk = $1)"
	}
	if predicates == nil {
		predicates = []string{}
	}
	var n int
	err := s.db.QueryRow(ctx, "SELECT count(*) FROM links WHERE "+cond+
		" AND (cardinality($2::text[]) = 0 OR predicate = ANY ($2::text[]))", pk, predicates).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count links: %w", err)
	}
	return n, nil
}
