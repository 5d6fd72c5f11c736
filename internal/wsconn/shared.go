package wsconn

import (
	"encoding/json"
	"sync"

	"github.com/99designs/gqlgen/graphql"
)

// responses holds the encoded responses of shared sources' recent values
// (ondemand.Shared), so that operations that would encode the same response
// for the same value encode it once: the first to deliver it executes and
// encodes, the others send its bytes. It keeps the last two generations of
// up to perGeneration responses each; a value delivered later than that is
// executed again, which is only slower.
type responses struct {
	mu       sync.Mutex
	cur, old map[responseKey][]byte
}

const perGeneration = 4096

// responseKey is an operation (document, operation name, variables) and the
// key its source named the value by.
type responseKey struct {
	op    string
	value any
}

func (r *responses) get(k responseKey) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	if b, ok := r.cur[k]; ok {
		return b
	}
	return r.old[k]
}

func (r *responses) put(k responseKey, b []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.cur) >= perGeneration || r.cur == nil {
		r.old, r.cur = r.cur, make(map[responseKey][]byte, 64)
	}
	r.cur[k] = b
}

// operationKey is what makes two operations answer alike: the document, the
// operation's name and the coerced variables (encoding/json sorts map keys).
// "" when the variables do not encode.
func operationKey(rc *graphql.OperationContext) string {
	vars, err := json.Marshal(rc.Variables)
	if err != nil {
		return ""
	}
	return rc.RawQuery + "\x00" + rc.OperationName + "\x00" + string(vars)
}

// shareable reports whether a response may be sent to another operation:
// one with errors (which carry the operation's request id) or extensions
// (per-response figures) may not.
func shareable(resp *graphql.Response) bool {
	return len(resp.Errors) == 0 && len(resp.Extensions) == 0 && resp.Label == "" && resp.Path == nil && resp.HasNext == nil
}
