package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// get serves GraphQL over HTTP GET, in place of gqlgen's transport.GET, with
// the same answers as post:
//
//   - the variables and extensions parameters must each be one JSON object
//     (gqlgen ran `{"a": 1} }x` as if the bytes after the object were not
//     there), and a query string that does not parse is a 400; all of these
//     carry extensions.code and the request id, which gqlgen's did not;
//   - a mutation or subscription is a 405 with Allow: POST (the GraphQL over
//     HTTP spec: a GET must not change anything, since links and prefetches
//     replay it), not gqlgen's 406;
//   - parse and validation failures get the status post gives them, and
//     @defer is answered as post answers it.
type get struct {
	maxResponseBytes int64 // the sum of an operation's @defer payloads (incremental.go)
}

var _ graphql.Transport = get{}

func (get) Supports(r *http.Request) bool {
	return r.Method == http.MethodGet && r.Header.Get("Upgrade") == ""
}

func (g get) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx := r.Context()
	media := responseMedia(r.Header.Get("Accept"))
	w.Header().Set("Content-Type", media)
	start := graphql.Now()
	refuse := func(status int, format string, args ...any) {
		writeResponse(w, status, exec.DispatchError(ctx, gqlerror.List{gqlerror.Errorf(format, args...)}))
	}

	params, perr := queryParams(r)
	if perr != nil {
		writeResponse(w, http.StatusBadRequest, exec.DispatchError(ctx, gqlerror.List{perr}))
		return
	}
	params.Headers = r.Header
	if params.Query == "" && params.Extensions["persistedQuery"] == nil {
		refuse(http.StatusBadRequest, "the request has no query")
		return
	}
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}

	oc, ok := operationContext(ctx, w, exec, &params, media)
	if !ok {
		return
	}
	if op := oc.Operation; op.Operation != ast.Query {
		w.Header().Set("Allow", http.MethodPost)
		writeResponse(w, http.StatusMethodNotAllowed, exec.DispatchError(graphql.WithOperationContext(ctx, oc), gqlerror.List{gqlerror.Errorf(
			"GET runs queries only, and this is a %s: send it with POST%s", op.Operation, map[bool]string{true: " (a subscription over a websocket)"}[op.Operation == ast.Subscription])}))
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, oc)
	answer(ctx, w, r, g.maxResponseBytes, responses)
}

// queryParams reads a GraphQL request from a GET's query string; the
// variables and extensions parameters must each be one JSON object.
func queryParams(r *http.Request) (graphql.RawParams, *gqlerror.Error) {
	query, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return graphql.RawParams{}, gqlerror.Errorf("the query string does not parse: %v", err)
	}
	params := graphql.RawParams{Query: query.Get("query"), OperationName: query.Get("operationName")}
	for _, p := range []struct {
		name string
		dst  *map[string]any
	}{{"variables", &params.Variables}, {"extensions", &params.Extensions}} {
		if v := query.Get(p.name); v != "" {
			if err := decodeOne(strings.NewReader(v), p.dst); err != nil {
				return graphql.RawParams{}, gqlerror.Errorf("the %s parameter is not one JSON object: %v", p.name, err)
			}
		}
	}
	return params, nil
}

// otherRequests answers what no other transport serves, in place of gqlgen's
// "transport not supported" 400 without a code: OPTIONS lists the methods, a
// POST whose body is not application/json is a 415, any other method a 405
// with Allow; the refusals are GraphQL errors with extensions.code and the
// request id. It must be the last transport.
type otherRequests struct{}

var _ graphql.Transport = otherRequests{}

// allowed are the methods /graphql serves (a websocket upgrade is a GET).
const allowed = "GET, POST"

func (otherRequests) Supports(*http.Request) bool { return true }

func (otherRequests) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	if r.Method == http.MethodOptions {
		w.Header().Set("Allow", "OPTIONS, "+allowed)
		w.WriteHeader(http.StatusOK)
		return
	}
	w.Header().Set("Content-Type", responseMedia(r.Header.Get("Accept")))
	status, msg := http.StatusMethodNotAllowed, fmt.Sprintf("the method %s is not served here: send a query with GET or POST, a mutation with POST", r.Method)
	switch {
	case r.Method == http.MethodPost:
		status = http.StatusUnsupportedMediaType
		ct := r.Header.Get("Content-Type")
		if ct == "" {
			ct = "missing"
		}
		msg = fmt.Sprintf("the request body's Content-Type is %s: send the GraphQL request as a JSON object with Content-Type: application/json", ct)
	case r.Method == http.MethodGet:
		// A GET with an Upgrade header other than a websocket's.
		status, msg = http.StatusBadRequest, "only a websocket upgrade (graphql-transport-ws) is served here"
	default:
		w.Header().Set("Allow", allowed)
	}
	writeResponse(w, status, exec.DispatchError(r.Context(), gqlerror.List{gqlerror.Errorf("%s", msg)}))
}
