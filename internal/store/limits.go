package store

import (
	"encoding/json"
	"fmt"

	"github.com/scidex/substrate/internal/canon"
	"github.com/scidex/substrate/internal/problem"
)

// MaxContentBytes caps an artifact's content: 1 MiB of its canonical JSON
// (RFC 8785, the form its hash is taken over, so the size does not depend on
// the client's whitespace or key order). A larger document belongs in a file
// a dataset or figure links to; the limit also bounds what one artifact adds to
// a response (internal/server's response cap is eight times it).
const MaxContentBytes = 1 << 20

// checkContentSize refuses content whose canonical JSON is larger than
// MaxContentBytes, with the size received.
func checkContentSize(raw json.RawMessage) []problem.Detail {
	// Canonical JSON is at most 5.25 times longer than its source (a number
	// such as 1e20 is spelt out in 21 digits; everything else only shrinks), so
	// short content needs no canonicalisation.
	if len(raw) <= MaxContentBytes/6 {
		return nil
	}
	c, err := canon.Canonical(raw)
	if err != nil {
		return nil // not JSON: the content validation reports it
	}
	if len(c) <= MaxContentBytes {
		return nil
	}
	return []problem.Detail{problem.Field("content", "maxBytes",
		fmt.Sprintf("is %d bytes of canonical JSON; the limit is %d bytes (1 MiB): keep large data in a file the artifact links to", len(c), MaxContentBytes), len(c))}
}
