package store

import (
	"encoding/json"
	"time"

	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/ref"
)

// Artifact is one version of an artifact with its envelope. For the current
// version of a live artifact IsLatest is true.
type Artifact struct {
	PK             int64
	Type           string
	ID             string
	Version        int
	Title          string
	Content        json.RawMessage
	ContentHash    string
	LifecycleState *string
	SchemaVersion  int
	// StoredSchemaVersion is the schema version the content was stored at;
	// below SchemaVersion, Content was upgraded on read (evolve.go).
	StoredSchemaVersion int
	CreatedAt           time.Time
	UpdatedAt           time.Time
	CreatedBy           string
	UpdatedBy           string
	IsLatest            bool
	SupersededBy        *string
	QualityScore        *float64
	Provenance          json.RawMessage
	// Visibility is who may read it: schema.ReadPublic or ReadParticipants,
	// stamped from the type's policy.
	Visibility string
	// Participants may read a participants-only artifact besides its creator
	// and its recipients (see privacy.go).
	Participants []string
	// Current is true when this is the artifact's newest version (even if the
	// artifact itself has been superseded).
	Current bool
	// Brief is true when the content was not read (LinkQuery.Brief): Content
	// is nil, and the artifact answers only selections that read no content.
	Brief bool

	// xmin is the row's tuple as the write that returned it made it (its
	// transaction id), on rows a write returned; "" on rows read (current.go).
	xmin string
}

// Ref returns the pinned reference of this version.
func (a *Artifact) Ref() ref.Ref { return ref.Ref{Type: a.Type, ID: a.ID, Hash: a.ContentHash} }

// Unpinned returns "<type>:<id>".
func (a *Artifact) Unpinned() ref.Ref { return ref.Ref{Type: a.Type, ID: a.ID} }

func fromRow(r dbsqlc.Artifact) *Artifact {
	return &Artifact{
		PK: r.Pk, Type: r.Type, ID: r.ID, Version: int(r.Version), Title: r.Title, Content: json.RawMessage(r.Content),
		ContentHash: r.ContentHash, LifecycleState: r.LifecycleState, SchemaVersion: int(r.SchemaVersion),
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, CreatedBy: r.CreatedBy, UpdatedBy: r.UpdatedBy,
		IsLatest: r.IsLatest, SupersededBy: r.SupersededBy, QualityScore: r.QualityScore,
		Provenance: json.RawMessage(r.Provenance), Visibility: r.Visibility, Participants: r.Participants, Current: true,
	}
}

// atVersion returns the envelope of a carrying version v's mutable fields.
func atVersion(a *Artifact, v dbsqlc.ArtifactVersion) *Artifact {
	if int(v.Version) == a.Version {
		return a
	}
	out := *a
	out.Version = int(v.Version)
	out.Title = v.Title
	out.Content = json.RawMessage(v.Content)
	out.ContentHash = v.ContentHash
	out.LifecycleState = v.LifecycleState
	out.SchemaVersion = int(v.SchemaVersion)
	out.UpdatedAt = v.CreatedAt
	out.UpdatedBy = v.CreatedBy
	out.IsLatest = false
	out.Current = false
	return &out
}
