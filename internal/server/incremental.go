package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// Incremental delivery of @defer over GET and POST. An operation whose first
// response says hasNext is answered in one of two ways:
//
//   - to a client that accepts multipart/mixed (Apollo Client, urql and Relay
//     through meros), as the GraphQL-over-HTTP incremental delivery RFC
//     writes it: one part for the initial payload, then one part per deferred
//     group, {"incremental": [{data, path, label, errors}], "hasNext": …},
//     each written and flushed as the executor hands it over, and each
//     followed by the boundary at once, so the client knows the part is whole
//     without waiting for the next one;
//   - to any other client, as one response with every deferred group merged
//     into the initial data at its path (what the operation answers without
//     @defer, the deferred fields after the others in their object): nothing
//     is silently left out.
//
// The response cap (--max-response-bytes) bounds each payload as it bounds a
// query's (capResponses, over every transport) and, here, their sum: past
// it, the rest is one error.

// An incremental response: its media type, the boundary between its parts,
// and what comes before each part's JSON and after it.
const (
	mediaMultipartMixed = "multipart/mixed"
	multipartBoundary   = "-"
	multipartType       = mediaMultipartMixed + `; boundary="` + multipartBoundary + `"; deferSpec=20220824`
	partHeader          = "\r\nContent-Type: application/json; charset=utf-8\r\n\r\n"
	partDelimiter       = "\r\n--" + multipartBoundary
)

// acceptsMultipart reports whether the Accept header names multipart/mixed
// (with any parameters: Apollo Client sends deferSpec=20220824).
func acceptsMultipart(accept string) bool {
	for part := range strings.SplitSeq(accept, ",") {
		media, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err == nil && media == mediaMultipartMixed {
			return true
		}
	}
	return false
}

// hasNext reports whether resp says more responses follow.
func hasNext(resp *graphql.Response) bool { return resp != nil && resp.HasNext != nil && *resp.HasNext }

// answer writes the responses of an operation: first alone unless it says
// more follow, then streamed or merged (see above). limit caps the sum of the
// payloads' data.
func answer(ctx context.Context, w http.ResponseWriter, r *http.Request, limit int64, responses graphql.ResponseHandler) {
	first := responses(ctx)
	if !hasNext(first) {
		writeResponse(w, http.StatusOK, first)
		return
	}
	if acceptsMultipart(r.Header.Get("Accept")) && canFlush(w) {
		streamParts(ctx, w, limit, first, responses)
		return
	}
	writeResponse(w, http.StatusOK, mergeDeferred(ctx, limit, first, responses))
}

// streamParts writes first and every response after it as multipart/mixed.
func streamParts(ctx context.Context, w http.ResponseWriter, limit int64, first *graphql.Response, responses graphql.ResponseHandler) {
	h := w.Header()
	h.Set("Content-Type", multipartType)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: pass each part on at once
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)

	part := responseJSON(first)
	part = append(part[:len(part)-1], `,"hasNext":true}`...)
	used, more, over := int64(len(first.Data)), true, false
	for b := []byte("\r\n--" + multipartBoundary); ; {
		b = append(append(append(b, partHeader...), part...), partDelimiter...)
		if _, err := w.Write(b); err != nil {
			drainResponses(ctx, responses) // the client went away: let the groups finish
			return
		}
		_ = rc.Flush()
		if !more {
			break
		}
		resp := responses(ctx)
		if resp == nil {
			break
		}
		more = hasNext(resp)
		if used += int64(len(resp.Data)); used > limit {
			resp, more, over = tooLarge(ctx, limit), false, true
		}
		part, b = incrementalJSON(resp, more), b[:0]
	}
	_, _ = io.WriteString(w, "--\r\n")
	if over {
		drainResponses(ctx, responses)
	}
}

// incrementalJSON is a subsequent payload of the 2022-08-24 format: the
// deferred group, with its path, label and errors, in "incremental", and
// whether more follow; the group's extensions on the payload.
func incrementalJSON(resp *graphql.Response, more bool) []byte {
	var b bytes.Buffer
	b.WriteString(`{"incremental":[`)
	item := *resp
	item.HasNext, item.Extensions = nil, nil
	if item.Data == nil {
		item.Data = json.RawMessage("null")
	}
	raw, err := json.Marshal(&item)
	if err != nil {
		raw = []byte(`{"data":null,"errors":[{"message":"the deferred payload could not be encoded"}]}`)
	}
	b.Write(raw)
	fmt.Fprintf(&b, `],"hasNext":%t`, more)
	if len(resp.Extensions) > 0 {
		if raw, err := json.Marshal(resp.Extensions); err == nil {
			b.WriteString(`,"extensions":`)
			b.Write(raw)
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// mergeDeferred reads every response after first and merges each one's data
// into first's at its path, and its errors into first's. A group whose path
// is gone (an error nulled the object it belongs to) adds only its errors.
func mergeDeferred(ctx context.Context, limit int64, first *graphql.Response, responses graphql.ResponseHandler) *graphql.Response {
	var data *jnode
	if first.Data != nil {
		data, _ = parseJSON(first.Data)
	}
	used := int64(len(first.Data))
	out := *first
	out.HasNext = nil
	for resp := responses(ctx); resp != nil; resp = responses(ctx) {
		if used += int64(len(resp.Data)); used > limit {
			drainResponses(ctx, responses)
			return tooLarge(ctx, limit)
		}
		out.Errors = append(out.Errors, resp.Errors...)
		for k, v := range resp.Extensions {
			if out.Extensions == nil {
				out.Extensions = map[string]any{}
			}
			out.Extensions[k] = v
		}
		if data == nil || resp.Data == nil || string(resp.Data) == "null" {
			continue // a group replaced by its error (over the cap) adds only the error
		}
		add, err := parseJSON(resp.Data)
		if err != nil {
			continue
		}
		if at := data.at(resp.Path); at != nil {
			at.merge(add)
		}
	}
	if data != nil {
		var b bytes.Buffer
		data.write(&b)
		out.Data = b.Bytes()
	}
	return &out
}

// drainResponses reads the responses still to come, so the executor's
// deferred groups finish rather than wait for a reader.
func drainResponses(ctx context.Context, responses graphql.ResponseHandler) {
	for responses(ctx) != nil {
	}
}

// tooLarge replaces the deferred payloads past the limit on their sum.
func tooLarge(ctx context.Context, limit int64) *graphql.Response {
	return tooLargeResponse(ctx, limit, fmt.Sprintf("the response's deferred payloads are larger together than the limit of %d bytes (--max-response-bytes): "+
		"ask for fewer fields or smaller pages", limit))
}

// jnode is a JSON value that keeps its object members in order: an object
// (keys and vals), an array (vals) or a scalar (raw, as it was written).
type jnode struct {
	kind byte // '{', '[' or 0
	keys []string
	vals []*jnode
	raw  json.RawMessage
}

func parseJSON(b []byte) (*jnode, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return parseNode(dec, b)
}

// parseNode reads the next value of dec, which reads b; a scalar keeps its
// bytes as written.
func parseNode(dec *json.Decoder, b []byte) (*jnode, error) {
	start := dec.InputOffset()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		n := &jnode{kind: '{'}
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := parseNode(dec, b)
			if err != nil {
				return nil, err
			}
			n.keys = append(n.keys, key.(string))
			n.vals = append(n.vals, v)
		}
		_, err := dec.Token()
		return n, err
	case json.Delim('['):
		n := &jnode{kind: '['}
		for dec.More() {
			v, err := parseNode(dec, b)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
		}
		_, err := dec.Token()
		return n, err
	}
	// The offset before a value may still be before the ':' or ',' that
	// precedes it.
	return &jnode{raw: bytes.TrimLeft(b[start:dec.InputOffset()], " \t\r\n:,")}, nil
}

// at is the node at path, or nil when the path leads nowhere (a null, a
// missing member, an index out of range).
func (n *jnode) at(path ast.Path) *jnode {
	for _, el := range path {
		switch el := el.(type) {
		case ast.PathName:
			n = n.member(string(el))
		case ast.PathIndex:
			if n.kind != '[' || int(el) < 0 || int(el) >= len(n.vals) {
				return nil
			}
			n = n.vals[el]
		}
		if n == nil {
			return nil
		}
	}
	return n
}

func (n *jnode) member(key string) *jnode {
	if n.kind != '{' {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// merge adds src's members to n: objects member by member, lists of the same
// length element by element, anything else replaced.
func (n *jnode) merge(src *jnode) {
	switch {
	case n.kind == '{' && src.kind == '{':
		for i, k := range src.keys {
			if m := n.member(k); m != nil {
				m.merge(src.vals[i])
				continue
			}
			n.keys = append(n.keys, k)
			n.vals = append(n.vals, src.vals[i])
		}
	case n.kind == '[' && src.kind == '[' && len(n.vals) == len(src.vals):
		for i := range src.vals {
			n.vals[i].merge(src.vals[i])
		}
	default:
		*n = *src
	}
}

func (n *jnode) write(b *bytes.Buffer) {
	switch n.kind {
	case '{':
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			key, _ := json.Marshal(k)
			b.Write(key)
			b.WriteByte(':')
			n.vals[i].write(b)
		}
		b.WriteByte('}')
	case '[':
		b.WriteByte('[')
		for i, v := range n.vals {
			if i > 0 {
				b.WriteByte(',')
			}
			v.write(b)
		}
		b.WriteByte(']')
	default:
		b.Write(n.raw)
	}
}
