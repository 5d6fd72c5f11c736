package server_test

import (
	"fmt"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
)

// BenchmarkPrismPage serves the Prism page (20 links, each target voted on and
// ranked) through the whole HTTP handler, to compare the server's own cost per
// page between builds; bench/prism measures it against PostGraphile.
//
//	go test -run '^$' -bench PrismPage ./internal/server/  (with SCIDEX_TEST_DATABASE_URL set,
//	as scripts/test sets it; scripts/test itself adds the race detector)
func BenchmarkPrismPage(b *testing.B) {
	env := apitest.New(b)
	tok := apitest.Contributor(b, "ada")
	main := createH(b, env, tok, map[string]any{"title": "main", "content": map[string]any{"target_gene": "TREM2"}})
	for i := range 20 {
		tgt := createH(b, env, tok, map[string]any{"title": fmt.Sprintf("target %d", i), "content": map[string]any{}})
		mustWrite(b, env, tok, "addLink", "AddLinkInput", map[string]any{"from": unpinned(main.Ref), "predicate": "related_to", "to": unpinned(tgt.Ref)})
		for v := range 3 {
			mustWrite(b, env, apitest.Contributor(b, fmt.Sprintf("voter%d", v)), "addSignal", "AddSignalInput",
				map[string]any{"ref": unpinned(tgt.Ref), "kind": "vote", "value": 1 - 2*((i+v)%2)})
		}
	}
	vars := map[string]any{"ref": unpinned(main.Ref)}
	if r := env.Post(b, tok, PrismQuery, vars); len(r.Errors) > 0 {
		b.Fatalf("%s", r.Raw)
	}
	b.ReportAllocs()
	for b.Loop() {
		env.Post(b, tok, PrismQuery, vars)
	}
}
