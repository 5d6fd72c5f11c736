package model

import (
	"context"
	"time"
)

// Link is a typed edge; From, To and CreatedBy resolve lazily through the
// request's loaders.
type Link struct {
	PK          int64
	FromPK      int64
	ToPK        int64
	Predicate   string
	Evidence    []string
	CreatedByID string
	CreatedAt   time.Time
}

// ArtifactConnection is a page of artifacts. TotalCount runs CountFunc only when
// a client asks for it.
type ArtifactConnection struct {
	Edges     []*ArtifactEdge
	PageInfo  *PageInfo
	CountFunc func(ctx context.Context) (int, error)
}
