package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scidex/substrate/internal/request"
)

// The fast path answers the request agents send most, a single stateless
// tools/call of one of the generated tools on the current protocol revision,
// without the SDK's per-request machinery: the SDK's stateless handler builds
// a ServerSession and a jsonrpc2 connection for every POST, hands the message
// through goroutines and decodes it several times over, which measured more
// than the GraphQL query the call runs (bench/mcp, bench/RESULTS.md P9).
//
// It is not a second implementation of a tool: the call runs the very
// handler the SDK server has registered for the tool (Server.handler), and
// the answer is that handler's result with the two things the SDK adds to a
// result on this revision (the serverInfo _meta and resultType "complete"),
// encoded with the SDK's own types and JSON-RPC encoder, or, for the plain
// data result nearly every call returns, written out directly in the same
// shape (dataResult). What it does not do is decide anything
// the SDK decides: whenever a request is not plainly of that one shape
// (another method, a batch, a notification, an older revision or none, a
// header or _meta field it does not expect, a tool it does not hold, a
// mutation the caller may not run, JSON it is unsure the SDK would read the
// same way), it leaves the request untouched for the SDK handler. The
// differential test (fastpath_test.go) sends the same requests both ways and
// requires the same status and JSON.
//
// Anything later added to the SDK servers that acts on tools/call (a
// receiving middleware, a tool registered there directly) must be reflected
// here or make fastTool refuse the call.

// fastRevision is the protocol revision the stateless handler negotiates,
// with its per-request _meta (SEP-2575), and legacyRevision the one today's
// npm and Python SDK clients negotiate (after an initialize of their own):
// the fast path answers a tools/call on either, each as the SDK does.
const (
	fastRevision   = "2026-07-28"
	legacyRevision = "2025-11-25"
)

// fastMaxDepth bounds the nesting the fast path reads; deeper bodies go to
// the SDK, whose decoder has its own (larger) limit.
const fastMaxDepth = 64

// serveFast answers r if it is a plain stateless tools/call of an operation
// tool, and reports whether it did. When it reports false, nothing was
// written and r's body is as it was.
func (s *Server) serveFast(w http.ResponseWriter, r *http.Request) bool {
	probe, _ := r.Context().Value(fastProbeKey{}).(*fastProbe)
	if probe != nil && probe.off {
		return false
	}
	h := r.Header
	rev := h.Get("Mcp-Protocol-Version")
	legacy := rev == legacyRevision
	if r.Method != http.MethodPost || (rev != fastRevision && !legacy) ||
		(!legacy && h.Get("Mcp-Method") != "tools/call") || (legacy && (len(h.Values("Mcp-Method")) > 0 || len(h.Values("Mcp-Name")) > 0)) ||
		h.Get("Content-Type") != "application/json" || !acceptsBoth(h.Values("Accept")) ||
		len(h.Values("Last-Event-ID")) > 0 || len(h.Values("Mcp-Session-Id")) > 0 || !hostAllowed(r) || r.Body == nil {
		return false
	}
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil || len(body) > sdk.DefaultMaxRequestBodyBytes {
		return false
	}
	call, ok := parseFastCall(body, legacy)
	if !ok || (!legacy && call.name != h.Get("Mcp-Name")) {
		return false
	}
	writer := canWrite(request.From(r.Context()))
	t := s.fastTool(call.name, writer)
	if t == nil {
		return false
	}
	// The same handler the SDK server runs for this tool, with the same
	// request: the arguments as sent, the HTTP header (the credentials). The
	// _meta is not passed on: it holds only the three members checked above,
	// which no handler reads.
	req := &sdk.CallToolRequest{
		Params: &sdk.CallToolParamsRaw{Name: call.name, Arguments: call.arguments},
		Extra:  &sdk.RequestExtra{Header: r.Header},
	}
	// Like the SDK (jsonrpc2 detaches handlers from the connection's
	// cancellation, and the stateless handler waits for them), a call runs to
	// its end even if the client goes away: a write is not cut off midway.
	ctx := withAnswerBudget(context.WithoutCancel(r.Context()), s.opts.MaxResponseBytes) // as ServeHTTP's
	start := time.Now()
	res, err := s.handler(t, Caller{Writer: writer})(ctx, req)
	if s.opts.Metrics != nil {
		s.countCall(call.name, err != nil || res == nil || res.IsError, start)
	}
	if probe != nil {
		probe.answered = true // before the answer, which the test waits for
	}
	writeFast(w, call.id, res, err, legacy)
	return true
}

// fastProbe, in a request's context, turns the fast path off for it or
// records that the fast path answered it: how the differential test sends a
// request to the SDK alone and knows which requests the fast path took. Only
// tests set it (export_test.go).
type fastProbe struct{ off, answered bool }

type fastProbeKey struct{}

// fastTool is the generated tool a caller may call by name, or nil: the
// substrate's own tools, tools the caller does not see and unknown names are
// the SDK's to answer.
func (s *Server) fastTool(name string, writer bool) *tool {
	for _, t := range s.tools {
		if t.def.Name == name {
			if t.mutation && !writer {
				return nil
			}
			return t
		}
	}
	return nil
}

// writeFast writes what the SDK writes for a tools/call on this revision: the
// handler's error as a JSON-RPC error (code 0 unless it carries one, as the
// SDK's jsonrpc2 does), or the result with the server's info in its _meta and
// resultType "complete", in an application/json response.
func writeFast(w http.ResponseWriter, id jsonrpc.ID, res *sdk.CallToolResult, err error, legacy bool) {
	data, ok := dataResult(id, res, err, legacy)
	if !ok {
		data, err = sdkResult(id, res, err, legacy)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(data)
}

// sdkResult encodes any answer with the SDK's own types and encoder; on the
// legacy revision without what the current one adds (the serverInfo _meta,
// resultType).
func sdkResult(id jsonrpc.ID, res *sdk.CallToolResult, err error, legacy bool) ([]byte, error) {
	resp := &jsonrpc.Response{ID: id}
	if err != nil {
		resp.Error = err
		return jsonrpc.EncodeMessage(resp)
	}
	if res.Content == nil {
		res.Content = []sdk.Content{} // as the SDK does, so content is never null
	}
	if legacy {
		raw, err := json.Marshal(res)
		if err != nil {
			return nil, err
		}
		resp.Result = raw
		return jsonrpc.EncodeMessage(resp)
	}
	if res.Meta == nil {
		res.Meta = sdk.Meta{}
	}
	if _, ok := res.Meta[sdk.MetaKeyServerInfo]; !ok {
		res.Meta[sdk.MetaKeyServerInfo] = implementation
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	// resultType is unexported in the SDK; its MarshalJSON writes it last.
	resp.Result = append(raw[:len(raw)-1], `,"resultType":"complete"}`...)
	return jsonrpc.EncodeMessage(resp)
}

// dataResult encodes the answer of nearly every call, an operation's data
// (result() in result.go: the data as structured content and as its one
// text), straight into the response: the SDK's encoding of the same result
// re-validates and compacts the data at each of its three nested encoders,
// which measured a tenth of the server's time on a get_artifact. It reports
// false for any other result.
func dataResult(id jsonrpc.ID, res *sdk.CallToolResult, err error, legacy bool) ([]byte, bool) {
	if err != nil || res == nil || res.IsError || res.Meta != nil || res.InputRequests != nil || res.RequestState != "" || len(res.Content) != 1 {
		return nil, false
	}
	data, ok := res.StructuredContent.(json.RawMessage)
	text, isText := res.Content[0].(*sdk.TextContent)
	if !ok || !isText || text.Meta != nil || text.Annotations != nil || text.Text != string(data) {
		return nil, false
	}
	idJSON, err1 := json.Marshal(id.Raw())
	textJSON, err2 := json.Marshal(text.Text)
	if err1 != nil || err2 != nil {
		return nil, false
	}
	b := make([]byte, 0, len(serverInfoJSON)+len(idJSON)+len(textJSON)+len(data)+160)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, idJSON...)
	if legacy {
		b = append(b, `,"result":{"content":[{"type":"text","text":`...)
	} else {
		b = append(b, `,"result":{"_meta":{"`+sdk.MetaKeyServerInfo+`":`...)
		b = append(b, serverInfoJSON...)
		b = append(b, `},"content":[{"type":"text","text":`...)
	}
	b = append(b, textJSON...)
	b = append(b, `}],"structuredContent":`...)
	b = append(b, data...)
	if legacy {
		b = append(b, `}}`...)
	} else {
		b = append(b, `,"resultType":"complete"}}`...)
	}
	return b, true
}

// serverInfoJSON is implementation as the SDK writes it in a result's _meta.
var serverInfoJSON, _ = json.Marshal(implementation)

// fastCall is a tools/call the fast path will answer.
type fastCall struct {
	id        jsonrpc.ID
	name      string
	arguments json.RawMessage
}

// integerID is an id the SDK reads back unchanged (it decodes ids as
// float64): an integer of at most 15 digits.
var integerID = regexp.MustCompile(`^-?(0|[1-9][0-9]{0,14})$`)

// parseFastCall reads body as one tools/call on the current revision (on the
// legacy one: without _meta), with exactly the members it knows, each of the
// type it expects. Anything else is not a fast call.
func parseFastCall(body []byte, legacy bool) (fastCall, bool) {
	var c fastCall
	if !utf8.Valid(body) || !shallow(body) {
		return c, false
	}
	var env map[string]json.RawMessage
	if json.Unmarshal(body, &env) != nil || !onlyKeys(env, "jsonrpc", "id", "method", "params") || len(env) != 4 {
		return c, false
	}
	if str(env["jsonrpc"]) != "2.0" || str(env["method"]) != "tools/call" {
		return c, false
	}
	switch id := env["id"]; {
	case len(id) > 0 && id[0] == '"':
		var sid string
		if json.Unmarshal(id, &sid) != nil {
			return c, false
		}
		c.id, _ = jsonrpc.MakeID(sid)
	case integerID.Match(id):
		var n float64 // as the SDK reads it
		if json.Unmarshal(id, &n) != nil {
			return c, false
		}
		c.id, _ = jsonrpc.MakeID(n)
	default:
		return c, false
	}
	var params map[string]json.RawMessage
	if !object(env["params"]) || json.Unmarshal(env["params"], &params) != nil || !onlyKeys(params, "name", "arguments", "_meta") {
		return c, false
	}
	if _, hasMeta := params["_meta"]; legacy && hasMeta {
		return c, false // a progress token, say: the SDK's to answer
	}
	if c.name = str(params["name"]); c.name == "" {
		return c, false
	}
	if args, ok := params["arguments"]; ok {
		if !object(args) {
			return c, false
		}
		c.arguments = args
	}
	if legacy {
		return c, true
	}
	var meta map[string]json.RawMessage
	if !object(params["_meta"]) || json.Unmarshal(params["_meta"], &meta) != nil ||
		!onlyKeys(meta, sdk.MetaKeyProtocolVersion, sdk.MetaKeyClientInfo, sdk.MetaKeyClientCapabilities) ||
		str(meta[sdk.MetaKeyProtocolVersion]) != fastRevision {
		return c, false
	}
	// The SDK refuses a call whose clientCapabilities or clientInfo do not
	// decode into its types; decoded here into the same types (more strictly:
	// encoding/json also matches differently cased keys), so that what is
	// accepted here the SDK accepts too.
	var caps struct {
		sdk.ClientCapabilities
		Roots *sdk.RootCapabilities `json:"roots,omitempty"`
	}
	if !object(meta[sdk.MetaKeyClientCapabilities]) || json.Unmarshal(meta[sdk.MetaKeyClientCapabilities], &caps) != nil {
		return c, false
	}
	if info, ok := meta[sdk.MetaKeyClientInfo]; ok {
		var impl sdk.Implementation
		if !object(info) || json.Unmarshal(info, &impl) != nil {
			return c, false
		}
	}
	return c, true
}

func onlyKeys(m map[string]json.RawMessage, keys ...string) bool {
	n := 0
	for _, k := range keys {
		if _, ok := m[k]; ok {
			n++
		}
	}
	return n == len(m)
}

// str is a JSON string's value; "" for anything else. raw has been
// validated as part of its document, so one without escapes is its text.
func str(raw json.RawMessage) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

func object(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '{' }

// shallow reports whether body is a JSON object (not a batch) nested at most
// fastMaxDepth deep.
func shallow(body []byte) bool {
	body = bytes.TrimLeft(body, " \t\r\n")
	if len(body) == 0 || body[0] != '{' {
		return false
	}
	depth, inString, escaped := 0, false, false
	for _, b := range body {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			if depth++; depth > fastMaxDepth {
				return false
			}
		case b == '}' || b == ']':
			depth--
		}
	}
	return true
}

// acceptsBoth: an Accept naming both application/json and text/event-stream
// exactly (the SDK also takes wildcards, which are left to it).
func acceptsBoth(values []string) bool {
	var j, e bool
	for _, v := range values {
		for _, tok := range strings.Split(v, ",") {
			base, _, _ := strings.Cut(tok, ";")
			switch strings.TrimSpace(base) {
			case "application/json":
				j = true
			case "text/event-stream":
				e = true
			}
		}
	}
	return j && e
}

// hostAllowed is the SDK's DNS rebinding check, in the direction that hands a
// doubtful request to it: a request that reached a loopback address is fast
// only with a loopback Host.
func hostAllowed(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil || !loopback(local.String()) {
		return true
	}
	return loopback(r.Host)
}

func loopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
