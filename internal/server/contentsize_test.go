package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/store"
)

// distinctWords returns about n bytes of words no two of which are alike:
// the worst case for a full-text index, whose size grows with distinct words.
func distinctWords(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n-8; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("q")
		for v := i; ; v /= 26 {
			b.WriteByte(byte('a' + v%26))
			if v < 26 {
				break
			}
		}
	}
	return b.String()
}

// Content of up to the size limit is indexed without error, however many
// distinct words it has (1 MiB of them overflowed PostgreSQL's tsvector and was
// an INTERNAL_ERROR), and is found by a word from its start, on create and on
// update.
func TestSearchIndexesLargeContent(t *testing.T) {
	env := apitest.New(t)
	tok := apitest.Contributor(t, "ada")
	words := distinctWords(store.MaxContentBytes - 64)
	var created struct {
		CreateArtifact result `json:"createArtifact"`
	}
	env.OK(t, tok, `mutation($c: JSON!) { createArtifact(input: {type: "wiki_page", title: "Glossary", content: $c}) {
	  typename: __typename `+selection(t, env, "CreateArtifactResult")+` } }`, map[string]any{"c": map[string]any{"body": words}}, &created)
	if created.CreateArtifact.Typename != "WriteSuccess" {
		t.Fatalf("create: %+v", created.CreateArtifact)
	}
	found := func(word string) bool {
		t.Helper()
		out := search(t, env, tok, map[string]any{"q": word, "types": []string{"wiki_page"}})
		for _, e := range out.Search.Edges {
			if e.Node.Artifact.Title == "Glossary" && e.Node.Highlight != nil && strings.Contains(*e.Node.Highlight, "<mark>") {
				return true
			}
		}
		return false
	}
	if !found("qaab") {
		t.Errorf("a word from the start is not found")
	}

	var updated struct {
		UpdateArtifact result `json:"updateArtifact"`
	}
	env.OK(t, tok, `mutation($r: Ref!, $h: String!, $c: JSON!) { updateArtifact(input: {ref: $r, baseContentHash: $h, content: $c}) {
	  typename: __typename `+selection(t, env, "UpdateArtifactResult")+` } }`,
		map[string]any{"r": created.CreateArtifact.Ref, "h": created.CreateArtifact.ContentHash, "c": map[string]any{"body": "zymurgy " + words}}, &updated)
	if updated.UpdateArtifact.Typename != "WriteSuccess" {
		t.Fatalf("update: %+v", updated.UpdateArtifact)
	}
	if !found("zymurgy") {
		t.Errorf("the updated content's first word is not found")
	}
}

// Content larger than the limit (1 MiB of canonical JSON) is refused as
// ValidationFailed naming the limit and the size received, on create and on
// update, and nothing is written.
func TestContentSizeLimit(t *testing.T) {
	env := apitest.New(t)
	tok := apitest.Contributor(t, "ada")
	big := map[string]any{"body": strings.Repeat("a", store.MaxContentBytes)}
	wantSize := len(`{"body":""}`) + store.MaxContentBytes

	check := func(what string, r result) {
		t.Helper()
		if r.Typename != "ValidationFailed" || len(r.Problems) != 1 {
			t.Fatalf("%s: %+v", what, r)
		}
		p := r.Problems[0]
		if p.Path != "content" || p.Constraint != "maxBytes" || !strings.Contains(p.Message, fmt.Sprint(store.MaxContentBytes)) ||
			!strings.Contains(p.Message, fmt.Sprint(wantSize)) || string(p.ValueReceived) != fmt.Sprint(wantSize) {
			t.Errorf("%s: %+v (value %s)", what, p, p.ValueReceived)
		}
	}
	before := env.Counts(t)
	var created struct {
		CreateArtifact result `json:"createArtifact"`
	}
	env.OK(t, tok, `mutation($c: JSON!) { createArtifact(input: {type: "wiki_page", title: "Too big", content: $c}) {
	  typename: __typename `+selection(t, env, "CreateArtifactResult")+` } }`, map[string]any{"c": big}, &created)
	check("create", created.CreateArtifact)
	if after := env.Counts(t); !equalCounts(before, after) {
		t.Errorf("create wrote: %v -> %v", before, after)
	}

	// Exactly at the limit is fine; one byte more through an update is not.
	atLimit := map[string]any{"body": strings.Repeat("a", store.MaxContentBytes-len(`{"body":""}`))}
	env.OK(t, tok, `mutation($c: JSON!) { createArtifact(input: {type: "wiki_page", title: "Just fits", content: $c}) {
	  typename: __typename `+selection(t, env, "CreateArtifactResult")+` } }`, map[string]any{"c": atLimit}, &created)
	if created.CreateArtifact.Typename != "WriteSuccess" {
		t.Fatalf("at the limit: %+v", created.CreateArtifact)
	}
	before = env.Counts(t)
	var updated struct {
		UpdateArtifact result `json:"updateArtifact"`
	}
	env.OK(t, tok, `mutation($r: Ref!, $h: String!, $c: JSON!) { updateArtifact(input: {ref: $r, baseContentHash: $h, content: $c}) {
	  typename: __typename `+selection(t, env, "UpdateArtifactResult")+` } }`,
		map[string]any{"r": created.CreateArtifact.Ref, "h": created.CreateArtifact.ContentHash, "c": big}, &updated)
	check("update", updated.UpdateArtifact)
	if after := env.Counts(t); !equalCounts(before, after) {
		t.Errorf("update wrote: %v -> %v", before, after)
	}
}
