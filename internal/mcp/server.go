package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/scidex/substrate/graph"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/origin"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/quietlog"
	"github.com/scidex/substrate/internal/request"
)

// Mutations says which mutations agents may run.
type Mutations string

const (
	// MutationsListed (the default) exposes the mutation operation documents
	// as tools; the ad-hoc execute tool runs queries only.
	MutationsListed Mutations = "listed"
	// MutationsNone exposes no mutation: the mutation documents are not tools
	// and execute runs queries only.
	MutationsNone Mutations = "none"
	// MutationsAll also lets execute run any mutation.
	MutationsAll Mutations = "all"
)

// Options configure the MCP server. The zero value (with an Endpoint) serves
// the built-in operations with the listed mutations, without the ad-hoc tools.
type Options struct {
	// Endpoint serves POST /graphql: the substrate server's own handler, its
	// request middleware included. Every tool call is a request to it.
	Endpoint http.Handler
	// Operations is the folder of operation documents; nil means the built-in
	// ones (Operations()).
	Operations fs.FS
	// Mutations: MutationsListed when empty.
	Mutations Mutations
	// Execute adds the execute tool: any GraphQL query (and with
	// MutationsAll, mutation), under the same limits as HTTP.
	Execute bool
	// Schema adds the schema tool: the SDL, or one type's definition.
	Schema bool
	// AllowedOrigins are the browser origins besides the server's own whose
	// pages may call /mcp (--allowed-origins); a request with any other
	// Origin is refused with 403, token or not (DNS rebinding, a page using
	// a token it should not hold).
	AllowedOrigins []string
	// MaxResponseBytes caps what one /mcp request answers, whatever it holds
	// (a JSON-RPC batch is one request): the server's response cap
	// (--max-response-bytes; DefaultMaxResponseBytes when 0).
	MaxResponseBytes int64
	// Logger; nil means slog.Default().
	Logger *slog.Logger
	// Metrics, when set, is told of every tools/call answered
	// (internal/metrics); nil when metrics are off.
	Metrics Metrics
}

// Metrics is what the MCP server reports of each tools/call.
type Metrics interface {
	// MCPCall is the tool called (a tool this server lists, else "other"),
	// whether the answer was an error, and how long it took.
	MCPCall(tool string, failed bool, d time.Duration)
}

// Server is the substrate as an MCP server: the tools generated from the
// operation documents, served over streamable HTTP (ServeHTTP) or stdio
// (RunStdio).
type Server struct {
	opts    Options
	origins origin.Allow
	schema  *ast.Schema
	tools   []*tool // in name order
	mutates map[string]bool
	// HTTP callers share two servers, one per kind of caller, chosen per
	// request from the verified token: stateless, so a server holds no
	// caller's state.
	reader, writer *sdk.Server
	http           http.Handler
	// cat is the substrate's own tools, listed to writers (substrate_tools.go).
	cat catalog
	// getArtifact reads resources (resources.go); nil when the operations
	// have no get_artifact, and then there are none.
	getArtifact *tool
	watch       *watchers
	// closing ends every /mcp request still open (subscriptions/listen
	// streams) when the server shuts down (Close).
	closing context.Context
	close   context.CancelFunc
}

// Caller is whom an MCP session acts for.
type Caller struct {
	// Authorization is sent with every GraphQL request ("Bearer <jwt>"). Empty:
	// each HTTP request's own Authorization header.
	Authorization string
	// Writer is a caller holding the contributor permission: the mutation
	// tools are listed for it. Other callers do not see them, and calling one
	// is refused before anything runs.
	Writer bool
}

// Check loads the operation documents and builds the tools without serving
// them: what New refuses, said before a server starts.
func Check(opts Options) error {
	_, err := build(opts)
	return err
}

// New builds the server. It fails when an operation document does not
// validate against the schema, naming the file.
func New(opts Options) (*Server, error) {
	if opts.Endpoint == nil {
		return nil, errors.New("mcp: Options.Endpoint (the GraphQL handler) is required")
	}
	s, err := build(opts)
	if err != nil {
		return nil, err
	}
	s.origins = origin.New(opts.AllowedOrigins)
	s.closing, s.close = context.WithCancel(context.Background())
	s.reader = s.MCPServer(Caller{})
	s.writer = s.MCPServer(Caller{Writer: true})
	s.http = sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		if canWrite(request.From(r.Context())) {
			return s.writer
		}
		return s.reader
	}, &sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: quietlog.Warn(s.opts.Logger)})
	return s, nil
}

// Close ends the /mcp requests still open, the subscriptions/listen streams,
// each with its final result: the server is shutting down, and an HTTP
// server's shutdown waits for every request. Stdio sessions end with the
// context RunStdio was given.
func (s *Server) Close() { s.close() }

func build(opts Options) (*Server, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxResponseBytes <= 0 {
		opts.MaxResponseBytes = DefaultMaxResponseBytes
	}
	switch opts.Mutations {
	case "":
		opts.Mutations = MutationsListed
	case MutationsListed, MutationsNone, MutationsAll:
	default:
		return nil, fmt.Errorf("mcp: mutations %q: want none, listed or all", opts.Mutations)
	}
	if opts.Operations == nil {
		opts.Operations = Operations()
	}
	// The executor's own schema: the one /graphql validates against, so the
	// tools cannot drift from it.
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	ops, err := loadOperations(opts.Operations, schema)
	if err != nil {
		return nil, fmt.Errorf("mcp: %w", err)
	}
	s := &Server{opts: opts, schema: schema, mutates: map[string]bool{}, watch: newWatchers()}
	inputsOf := toolInputs(ops)
	for _, op := range ops {
		t, err := operationTool(schema, op, inputsOf)
		if err != nil {
			return nil, fmt.Errorf("mcp: %w", err)
		}
		if t.mutation {
			s.mutates[t.def.Name] = true
			if opts.Mutations == MutationsNone {
				continue
			}
		}
		s.tools = append(s.tools, t)
		if t.def.Name == getArtifactTool {
			s.getArtifact = t
		}
	}
	if opts.Execute {
		s.tools = append(s.tools, s.executeTool())
	}
	if opts.Schema {
		s.tools = append(s.tools, s.schemaTool())
	}
	sort.Slice(s.tools, func(i, j int) bool { return s.tools[i].def.Name < s.tools[j].def.Name })
	return s, nil
}

// canWrite reports whether a verified request may see the mutation tools.
func canWrite(rc *request.Context) bool {
	return rc != nil && !rc.Anonymous && rc.Actor.Has(auth.PermContributor)
}

// Tools is the tool list a caller sees, in name order.
func (s *Server) Tools(writer bool) []*sdk.Tool {
	var out []*sdk.Tool
	for _, t := range s.tools {
		if !t.mutation || writer {
			out = append(out, t.def)
		}
	}
	return out
}

// MCPServer is an MCP server for one kind of caller, to run on any transport.
func (s *Server) MCPServer(c Caller) *sdk.Server {
	var srv *sdk.Server
	opts := &sdk.ServerOptions{Logger: quietlog.Warn(s.opts.Logger), Instructions: instructions,
		// Every answer depends on the caller's token (the tools a
		// permission sees, the artifacts a reader may read): no cache but the
		// caller's own may keep it.
		SetCacheable: func(_ context.Context, _ sdk.Request, c *sdk.Cacheable) { c.CacheScope = "private" }}
	if s.getArtifact != nil {
		opts.SubscribeHandler, opts.UnsubscribeHandler = s.subscribeHandler(&srv, c), s.unsubscribeHandler(&srv)
		// The list of resources never changes: it is a template.
		opts.Capabilities = &sdk.ServerCapabilities{Resources: &sdk.ResourceCapabilities{Subscribe: true}}
	}
	// The skills are prompts (prompts.go), answered by a middleware: the
	// capability is said here, as the SDK lists no prompt of its own.
	if opts.Capabilities == nil {
		opts.Capabilities = &sdk.ServerCapabilities{}
	}
	opts.Capabilities.Prompts = &sdk.PromptCapabilities{}
	srv = sdk.NewServer(implementation, opts)
	s.addResources(srv, c)
	if s.getArtifact != nil {
		srv.AddReceivingMiddleware(s.listResources(c))
	}
	srv.AddReceivingMiddleware(s.skillPrompts(c))
	if c.Authorization == "" { // over HTTP, stateless
		srv.AddReceivingMiddleware(refuseLegacySubscribe)
	}
	for _, t := range s.tools {
		if t.mutation && !c.Writer {
			continue
		}
		srv.AddTool(t.def, s.handler(t, c))
	}
	if !c.Writer {
		srv.AddReceivingMiddleware(s.refuseMutations)
	} else {
		s.addTarget(srv, c)
	}
	if s.opts.Metrics != nil {
		srv.AddReceivingMiddleware(s.countCalls) // last: outermost, so it sees the refusals too
	}
	return srv
}

// countCalls tells Metrics of each tools/call the SDK server answers (the
// fast path tells it of its own).
func (s *Server) countCalls(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		call, ok := req.(*sdk.CallToolRequest)
		if !ok || method != "tools/call" {
			return next(ctx, method, req)
		}
		start := time.Now()
		res, err := next(ctx, method, req)
		name := ""
		if call.Params != nil {
			name = call.Params.Name
		}
		r, _ := res.(*sdk.CallToolResult)
		s.countCall(name, err != nil || r == nil || r.IsError, start)
		return res, err
	}
}

// countCall tells Metrics of one call of name: the tool's own name if this
// server has such a tool, else "other", so that a client's made-up names
// are not label values.
func (s *Server) countCall(name string, failed bool, start time.Time) {
	if !s.knownTool(name) {
		name = "other"
	}
	s.opts.Metrics.MCPCall(name, failed, time.Since(start))
}

func (s *Server) knownTool(name string) bool {
	for _, t := range s.tools {
		if t.def.Name == name {
			return true
		}
	}
	return s.cat.has(name)
}

// implementation is who the server says it is, in initialize and in every
// result's _meta (the fast path's too).
var implementation = &sdk.Implementation{Name: "scidex", Title: "SciDEX substrate", Version: version()}

const instructions = `The SciDEX substrate: every durable thing is an artifact, named by a ref (type:id, or type:id@sha256:<hex> for one version). ` +
	`Reads are safe to repeat. Writes name the contentHash they are based on; a VersionConflict or ValidationFailed result is data to act on ` +
	`(retry with mergeHint.suggestedBaseContentHash, fix the paths named), not an error.`

// refuseMutations answers a call of a mutation tool, or of a substrate tool
// (tool.*), by a caller that does not see those tools with PermissionDenied, before it reaches anything, so
// that the refusal says why rather than "unknown tool".
func (s *Server) refuseMutations(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if call, ok := req.(*sdk.CallToolRequest); ok && method == "tools/call" && call.Params != nil && s.mutates[call.Params.Name] &&
			s.opts.Mutations != MutationsNone {
			return refusal(problem.PermissionDenied, "permission denied: "+call.Params.Name+
				" writes, which needs the contributor permission; this token does not hold it. Nothing was written."), nil
		}
		if call, ok := req.(*sdk.CallToolRequest); ok && method == "tools/call" && call.Params != nil && s.cat.has(call.Params.Name) {
			return refusal(problem.PermissionDenied, "permission denied: "+call.Params.Name+
				" runs a substrate tool (invokeTool), which needs the contributor permission; this token does not hold it. Nothing ran."), nil
		}
		return next(ctx, method, req)
	}
}

// handler runs one operation tool: check the arguments against the input
// schema, send the operation with them as its variables, map the answer.
func (s *Server) handler(t *tool, c Caller) sdk.ToolHandler {
	switch {
	case t.op != nil:
	case t.def.Name == executeName:
		return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return s.execute(ctx, c, req, t)
		}
	case t.def.Name == schemaName:
		return func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return s.sdl(req, t), nil
		}
	}
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		args := req.Params.Arguments
		if probs := t.input.check(args); len(probs) > 0 {
			return invalidArguments(t.def.Name, probs), nil
		}
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		resp, err := s.run(ctx, s.credentials(ctx, c, req.Extra), gqlRequest{Query: t.op.source, OperationName: t.op.op.Name, Variables: args})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.def.Name, err)
		}
		return result(resp), nil
	}
}

func invalidArguments(tool string, probs []problem.Detail) *sdk.CallToolResult {
	msgs := make([]string, len(probs))
	for i, p := range probs {
		msgs[i] = p.Path + ": " + p.Message
	}
	return refusal(problem.ValidationFailed, "the arguments do not match "+tool+"'s input schema: "+strings.Join(msgs, "; ")+". Nothing ran.", probs...)
}

// credentials are whom a call acts for: the stdio caller's token, or the
// HTTP request's own Authorization (and browser session cookie), from the
// request's headers or, where the SDK passes none (a subscription made on a
// listen stream), from the context ServeHTTP stored them in.
func (s *Server) credentials(ctx context.Context, c Caller, extra *sdk.RequestExtra) credentials {
	if c.Authorization != "" {
		return credentials{authorization: c.Authorization}
	}
	if extra != nil && extra.Header != nil {
		return credentials{authorization: extra.Header.Get("Authorization"), cookie: extra.Header.Get("Cookie"), csrf: extra.Header.Get("X-CSRF-Token")}
	}
	cred, _ := ctx.Value(credentialsKey{}).(credentials)
	return cred
}

type credentialsKey struct{}

// RunStdio serves c over stdin and stdout until the client disconnects or
// ctx ends.
func (s *Server) RunStdio(ctx context.Context, c Caller) error {
	return s.MCPServer(c).Run(ctx, &sdk.StdioTransport{})
}

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "dev"
}

// Documents are the GraphQL documents this server sends /graphql itself, by
// name: its tools' operations, the substrate tools' invokeTool, and the
// resource and prompt lists. A production server registers them as trusted
// documents, so MCP clients work there for every actor; the execute tool's
// ad hoc queries are not among them (there they run for admins only).
func (s *Server) Documents() map[string]string {
	out := map[string]string{"mcp InvokeTool": invokeQuery, "mcp SkillPrompts": skillsQuery, "mcp ListResources": listResourcesQuery}
	for _, t := range s.tools {
		if t.op != nil {
			out["mcp "+t.def.Name] = t.op.source
		}
	}
	return out
}
