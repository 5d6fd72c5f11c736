package store_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/store"
)

// A brief read of links gives each target without its content and with every
// other field as the whole read gives it: the view it reads (migration 0024)
// is the artifacts table column for column, not only type for type (two text
// columns swapped would still compile).
func TestBriefLinkTargetsAreWholeButForContent(t *testing.T) {
	s := store.New(store.Opts{Pool: dbtest.Pool(t)})
	ctx := as("ada")
	from, err := s.CreateArtifact(ctx, store.CreateParams{Type: "hypothesis", Title: "from", Content: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	to, err := s.CreateArtifact(as("grace"), store.CreateParams{Type: "hypothesis", Title: "to",
		Content: json.RawMessage(`{"target_gene":"TREM2","confidence":0.5}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateArtifact(as("linus"), store.UpdateParams{Ref: to.Artifact.Unpinned().String(), BaseContentHash: to.ContentHash,
		Patch: json.RawMessage(`[{"op":"replace","path":"/confidence","value":0.75}]`)}); err != nil {
		t.Fatal(err) // created_by and updated_by now differ
	}
	if _, err := s.AddLink(ctx, store.LinkParams{From: from.Artifact.Unpinned().String(), Predicate: "related_to", To: to.Artifact.Unpinned().String()}); err != nil {
		t.Fatal(err)
	}
	read := func(brief bool) *store.Artifact {
		t.Helper()
		got, err := s.LinksFor(ctx, []int64{from.Artifact.PK}, store.LinkQuery{Direction: store.DirOut, Limit: 5, Brief: brief})
		if err != nil {
			t.Fatal(err)
		}
		ls := got[from.Artifact.PK]
		if len(ls) != 1 || ls[0].Other == nil {
			t.Fatalf("links %+v", ls)
		}
		return ls[0].Other
	}
	whole, brief := read(false), read(true)
	if whole.Brief || len(whole.Content) == 0 {
		t.Fatalf("the whole read: brief %v, content %s", whole.Brief, whole.Content)
	}
	if !brief.Brief || brief.Content != nil {
		t.Fatalf("the brief read: brief %v, content %s", brief.Brief, brief.Content)
	}
	if whole.CreatedBy != "grace" || whole.UpdatedBy != "linus" {
		t.Fatalf("the whole read: created by %q, updated by %q", whole.CreatedBy, whole.UpdatedBy)
	}
	b := *brief
	b.Brief, b.Content = false, whole.Content
	if !reflect.DeepEqual(&b, whole) {
		t.Errorf("brief but for content:\n%+v\nwhole:\n%+v", &b, whole)
	}
}
