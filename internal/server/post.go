package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Response media types of the GraphQL-over-HTTP spec.
const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
)

// post serves GraphQL over HTTP POST with a JSON body, in place of gqlgen's
// transport.POST, closer to the GraphQL-over-HTTP spec and cheaper:
//
//   - a document that fails to parse or validate is answered 200 when the
//     client accepts application/json (the spec's SHOULD; gqlgen says 422) and
//     400 when it accepts application/graphql-response+json;
//   - a request without a query (nor a persisted query's hash) is a 400, and
//     so is a body with anything but whitespace after its JSON value (which
//     gqlgen ignored: `{…} }garbage{` ran the operation and committed it);
//   - a response to such a request error has no data entry, not "data": null;
//   - an operation with @defer is streamed as multipart/mixed to a client that
//     accepts it, and answered whole to one that does not (incremental.go);
//   - the response is written as gqlgen built it. Its data is JSON already;
//     marshalling gqlgen's Response struct again made encoding/json validate
//     and copy all of it, 7 % of the server's CPU on the Prism page
//     (bench/prism).
//
// The request body has been read and size-checked by the request middleware.
// e2e/graphql-http runs the graphql-http server audit against it.
type post struct {
	maxResponseBytes int64 // the sum of an operation's @defer payloads (incremental.go)
}

var _ graphql.Transport = post{}

func (post) Supports(r *http.Request) bool {
	if r.Method != http.MethodPost || r.Header.Get("Upgrade") != "" {
		return false
	}
	media, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && media == mediaJSON
}

func (p post) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx := r.Context()
	media := responseMedia(r.Header.Get("Accept"))
	w.Header().Set("Content-Type", media)
	start := graphql.Now()

	var params graphql.RawParams
	if err := decodeOne(r.Body, &params); err != nil {
		writeResponse(w, http.StatusBadRequest, exec.DispatchError(ctx, gqlerror.List{gqlerror.Errorf("the request body is not a GraphQL request in JSON: %v", err)}))
		return
	}
	if params.Query == "" && params.Extensions["persistedQuery"] == nil {
		// Not a GraphQL-over-HTTP request at all, rather than a document that
		// fails: a 400 for either media type.
		writeResponse(w, http.StatusBadRequest, exec.DispatchError(ctx, gqlerror.List{gqlerror.Errorf("the request has no query")}))
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}

	oc, ok := operationContext(ctx, w, exec, &params, media)
	if !ok {
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, oc)
	answer(ctx, w, r, p.maxResponseBytes, responses)
}

// decodeOne decodes exactly one JSON value from r into v: anything after it
// but JSON whitespace is an error naming where it starts.
func decodeOne(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	end := dec.InputOffset()
	rest := io.MultiReader(dec.Buffered(), r)
	var buf [512]byte
	for off := end; ; {
		n, err := rest.Read(buf[:])
		for i, c := range buf[:n] {
			if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
				return fmt.Errorf("unexpected %q at byte %d, after the JSON value that ends at byte %d: send exactly one JSON object", c, off+int64(i), end)
			}
		}
		off += int64(n)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// responseMedia picks the response media type from the Accept header: the
// first of application/json and application/graphql-response+json it names,
// application/json for none, */* or application/*, and
// application/graphql-response+json when it names neither.
func responseMedia(accept string) string {
	if strings.TrimSpace(accept) == "" {
		return mediaJSON
	}
	for part := range strings.SplitSeq(accept, ",") {
		media, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch media {
		case "*/*", "application/*", mediaJSON:
			return mediaJSON
		case mediaGraphQLResponse:
			return mediaGraphQLResponse
		}
	}
	return mediaGraphQLResponse
}

// writeResponse writes resp as responseJSON does, with status: its pieces one
// after another, the data as gqlgen wrote it (a page's tens of kilobytes are
// not copied once more to be framed), with their length.
func writeResponse(w http.ResponseWriter, status int, resp *graphql.Response) {
	parts := responseParts(resp)
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	w.Header().Set("Content-Length", strconv.Itoa(n))
	w.WriteHeader(status)
	for _, p := range parts {
		if _, err := w.Write(p); err != nil {
			return
		}
	}
}

// responseJSON is resp as {"errors": …, "data": …, "extensions": …}, each
// entry only when present; data is copied as it is.
func responseJSON(resp *graphql.Response) []byte {
	return bytes.Join(responseParts(resp), nil)
}

// responseParts is responseJSON in pieces, the data one of them.
func responseParts(resp *graphql.Response) [][]byte {
	parts := make([][]byte, 0, 7)
	sep := []byte(`{"`)
	entry := func(name string, raw []byte) {
		parts = append(parts, sep, []byte(name+`":`), raw)
		sep = []byte(`,"`)
	}
	if len(resp.Errors) > 0 {
		raw, err := json.Marshal(resp.Errors)
		if err != nil {
			raw = []byte(`[{"message":"the errors could not be encoded"}]`)
		}
		entry("errors", raw)
	}
	if resp.Data != nil {
		entry("data", resp.Data)
	}
	if len(resp.Extensions) > 0 {
		if raw, err := json.Marshal(resp.Extensions); err == nil {
			entry("extensions", raw)
		}
	}
	if len(parts) == 0 {
		return [][]byte{[]byte("{}")}
	}
	return append(parts, []byte("}"))
}

// operationContext parses and validates the request's document. A document
// that fails is answered here: 200 with application/json, 400 with
// application/graphql-response+json when the failure is the request's
// (GraphQL over HTTP), and ok is false.
func operationContext(ctx context.Context, w http.ResponseWriter, exec graphql.GraphExecutor, params *graphql.RawParams, media string) (*graphql.OperationContext, bool) {
	oc, errs := exec.CreateOperationContext(ctx, params)
	if errs == nil {
		return oc, true
	}
	status := http.StatusOK
	if media == mediaGraphQLResponse && errcode.GetErrorKind(errs) == errcode.KindProtocol {
		status = http.StatusBadRequest
	}
	writeResponse(w, status, exec.DispatchError(graphql.WithOperationContext(ctx, oc), errs))
	return nil, false
}
