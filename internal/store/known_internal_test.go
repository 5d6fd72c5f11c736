package store

import (
	"fmt"
	"testing"

	"github.com/scidex/substrate/internal/ref"
)

// A ref to an artifact the server read for the request, unpinned or pinned
// to the version read, is known to exist; a ref to another version of it, or
// to anything else, is still asked of the database.
func TestKnownRefs(t *testing.T) {
	tool := &Artifact{Type: "tool", ID: "pk.nca", ContentHash: "sha256:" + fmt.Sprintf("%064x", 1)}
	c := &Checker{w: &writer{op: writeOp{Known: []*Artifact{tool}}}}
	other := "sha256:" + fmt.Sprintf("%064x", 2)
	refs := []ref.Ref{
		ref.MustParse("tool:pk.nca"),
		ref.MustParse("tool:pk.nca@" + tool.ContentHash),
		ref.MustParse("tool:pk.nca@" + other),
		ref.MustParse("hypothesis:h1"),
	}
	out := map[string]bool{}
	rest := c.known(refs, out)
	if len(rest) != 2 || rest[0] != refs[2] || rest[1] != refs[3] {
		t.Fatalf("left to check: %v, want the other version and the hypothesis", rest)
	}
	if !out["tool:pk.nca"] || !out["tool:pk.nca@"+tool.ContentHash] || out["tool:pk.nca@"+other] || out["hypothesis:h1"] {
		t.Fatalf("known: %v", out)
	}
	for _, none := range [][]*Artifact{nil, {nil}} {
		if n := len((&Checker{w: &writer{op: writeOp{Known: none}}}).known(refs, map[string]bool{})); n != len(refs) {
			t.Fatalf("with nothing known (%v), %d of %d refs are left to check", none, n, len(refs))
		}
	}
}
