package documents_test

import (
	"context"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/documents"
)

// A push is all or none: a refused or failed list leaves nothing of itself
// registered, and registering a document twice says it was known.
func TestRegisterIsAllOrNone(t *testing.T) {
	ctx := context.Background()
	store := documents.New(dbtest.Pool(t))

	first := []documents.Document{{Name: "a.graphql", Document: "query A { __typename }"}}
	reg, err := store.Register(ctx, "push", first)
	if err != nil || len(reg) != 1 || !reg[0].New || reg[0].Hash != documents.Hash(first[0].Document) {
		t.Fatalf("register a: %+v, %v", reg, err)
	}

	again, err := store.Register(ctx, "push", append(first, documents.Document{Name: "b.graphql", Document: "query B { __typename }"}))
	if err != nil || len(again) != 2 || again[0].New || !again[1].New {
		t.Fatalf("register a again with b: %+v, %v (want a known, b new)", again, err)
	}

	_, err = store.Register(ctx, "push", []documents.Document{
		{Name: "c.graphql", Document: "query C { __typename }"}, {Name: "empty.graphql"}})
	if err == nil || !strings.Contains(err.Error(), `"empty.graphql" is empty`) {
		t.Fatalf("a list with an empty document: err %v, want it named", err)
	}

	// A NUL byte is refused by PostgreSQL after c's insert has run: the
	// transaction takes c back with it.
	_, err = store.Register(ctx, "push", []documents.Document{
		{Name: "c.graphql", Document: "query C { __typename }"}, {Name: "nul.graphql", Document: "query N { __typename }\x00"}})
	if err == nil || !strings.Contains(err.Error(), "nul.graphql") {
		t.Fatalf("a list failing in the database: err %v, want the document named", err)
	}

	list, err := store.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range list {
		names = append(names, d.Name)
	}
	if strings.Join(names, ",") != "a.graphql,b.graphql" {
		t.Fatalf("registered: %v, want a.graphql,b.graphql only", names)
	}
	if _, ok, err := store.Lookup(ctx, documents.Hash("query C { __typename }")); ok || err != nil {
		t.Fatalf("c is registered (%v, %v) after its list failed", ok, err)
	}
}
