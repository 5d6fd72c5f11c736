package toolname_test

import (
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/toolname"
)

func TestValid(t *testing.T) {
	for _, s := range []string{"pk.nca", "text-stats", "literature.evidence_review", "a", "a1.b-2_c", "mcp-textkit.word_count", strings.Repeat("a", toolname.MaxLength)} {
		if !toolname.Valid(s) {
			t.Errorf("%q refused", s)
		}
	}
	for _, s := range []string{"", "Pk.nca", "pk..nca", ".pk", "pk.", "1pk", "pk.-x", "pk.nca ", "pk/nca", "pk:nca", "-pk", "pk.NCA", strings.Repeat("a", toolname.MaxLength+1)} {
		if toolname.Valid(s) {
			t.Errorf("%q accepted", s)
		}
	}
}
