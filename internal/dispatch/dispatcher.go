package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/budget"
	"github.com/scidex/substrate/internal/canon"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/queue"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/schema"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/internal/toolname"
	"github.com/scidex/substrate/internal/toolspec"
	"github.com/scidex/substrate/runtimes"
)

// Opts configures a Dispatcher.
type Opts struct {
	Store    *store.Store
	Runtimes *runtimes.Registry
	Logger   *slog.Logger
	// Bundles gives runtimes the bytes of tool bundle files.
	Bundles runtimes.Bundle
	// Limits are the per-actor, per-tool rate limits (nil: unlimited).
	Limits *RateLimits
	// Cache enables the result cache for deterministic tools.
	Cache bool
	// Caps are the operator's default and maximum resource caps: a tool runs
	// with the default of each cap it declares none of, and never above the
	// maximum (zero fields: DefaultCapLimits).
	Caps toolspec.CapLimits
	// CacheTTL is how long a cached result is served (default
	// DefaultCacheTTL); older entries are not read and CollectCache deletes
	// them.
	CacheTTL time.Duration
	// Queue runs asynchronous calls; nil refuses them.
	Queue Queue
	// SyncLimit is the longest wall time a tool may declare and still run
	// synchronously; a longer one is queued (default 2 minutes).
	SyncLimit time.Duration
	// OnFinish is told of every call that finished (succeeded, failed,
	// cancelled), after its record is committed, wherever it ran: runSkill
	// stores a queued skill call's skill_result from it.
	OnFinish func(ctx context.Context, d *Dispatcher, call *store.Artifact)
	// Process names this process as tool_workers knows it (queue.Heartbeat):
	// every call it runs names it, and while it beats its calls are not
	// recovered. Empty: the calls name none, and count as lost at once.
	Process string
	// PacketTTL is how long a call waits on outside work (a skill_call's
	// work packet) when its tool declares no wall time (default
	// DefaultPacketTTL).
	PacketTTL time.Duration
	// Budgets holds each costed call's estimate against its caller's budget
	// and debits its cost at the finish (nil: budget.New with no default
	// limit, so only the budgets an admin set apply).
	Budgets *budget.Budgets
	// SweepEvery is how often Sweep looks for lost calls and runs the
	// Awaiter's step, which expires work packets (default every 2 s;
	// negative: never, for tests that sweep themselves).
	SweepEvery time.Duration
	// Metrics, when set, is told of every finished call (internal/metrics);
	// nil when metrics are off.
	Metrics Metrics
	// Tracer, when set, makes a span of each call's run in its runtime
	// (internal/tracing); nil when tracing is off.
	Tracer Tracer
}

// Tracer is what the dispatcher reports each runtime call to: StartCall as
// the runtime is handed the call, with the context the runtime runs in (its
// span rides in it), and end once the call's outcome is settled.
type Tracer interface {
	StartCall(ctx context.Context, tool, version, runtime, callID string) (context.Context, func(status string, costUSD float64, errCode string))
}

// Metrics is what the dispatcher reports of the calls it finishes: once per
// finish written (a replay of one is not another), wherever the call ran.
type Metrics interface {
	// ToolCallFinished is a call's tool name, runtime, final status, duration
	// and cost in US dollars (0 when free or unknown).
	ToolCallFinished(tool, runtime, status string, duration time.Duration, costUSD float64)
}

// Dispatcher runs tool calls.
type Dispatcher struct {
	opts    Opts
	store   *store.Store
	log     *slog.Logger
	schemas sync.Map // pinned tool ref + "#in"/"#out" → *jsonschema.Schema
	running sync.Map // call id → context.CancelFunc, for calls running here
	usage   *usage
	live    *queue.Liveness // whether the processes running calls beat
	awaiter Awaiter         // the owner of the work calls wait on (Await)
}

// New returns a dispatcher.
func New(o Opts) *Dispatcher {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.SyncLimit == 0 {
		o.SyncLimit = 2 * time.Minute
	}
	if o.PacketTTL == 0 {
		o.PacketTTL = DefaultPacketTTL
	}
	if o.SweepEvery == 0 {
		o.SweepEvery = 2 * time.Second
	}
	if o.Budgets == nil {
		o.Budgets = budget.New(budget.Default{})
	}
	o.Caps = o.Caps.WithDefaults() // once: every load bounds its tool by them
	d := &Dispatcher{opts: o, store: o.Store, log: o.Logger, live: queue.NewLiveness(o.Store.Pool())}
	d.usage = newUsage(d)
	return d
}

// InvokeInput is invokeTool's input.
type InvokeInput struct {
	Name           string          `json:"name"`
	Version        string          `json:"version,omitempty"`
	Args           json.RawMessage `json:"args"`
	Async          bool            `json:"async,omitempty"`
	IdempotencyKey string          `json:"-"`
	// SkillRun marks a call runSkill makes; it is recorded on the call.
	SkillRun *SkillRun `json:"-"`
}

// SkillRun is what a call made by runSkill records of it: the skill, and
// whether a skill_result is stored when the call succeeds.
type SkillRun struct {
	Skill       string `json:"skill"`
	StoreResult bool   `json:"store_result"`
}

// tool is a loaded tool version.
type tool struct {
	art *store.Artifact
	m   *toolspec.Manifest
	rt  runtimes.Runtime
}

// Store is the store the dispatcher records calls in.
func (d *Dispatcher) Store() *store.Store { return d.store }

// Budgets are the actors' budgets the dispatcher holds and debits calls on.
func (d *Dispatcher) Budgets() *budget.Budgets { return d.opts.Budgets }

// Logger is the dispatcher's logger.
func (d *Dispatcher) Logger() *slog.Logger { return d.log }

// Load returns the tool named name: its latest version, or the one whose
// content.version is version. Absent is NOT_FOUND naming the tool.
func (d *Dispatcher) Load(ctx context.Context, name, version string) (*store.Artifact, error) {
	t, err := d.load(ctx, name, version)
	if err != nil {
		return nil, err
	}
	return t.art, nil
}

// known is what a call's record may name without the store checking it
// again: the tool version this request read (store.ServerOpts.Known); none
// for a tool that could not be loaded.
func (t *tool) known() []*store.Artifact {
	if t.art == nil {
		return nil
	}
	return []*store.Artifact{t.art}
}

// readers says on o who may read a call of t: its caller (the record's
// creator) and the tool's owner, as the tool_call schema's policy.read
// (participants) has it, or everyone when the tool declares its calls public.
func (t *tool) readers(o store.ServerOpts) store.ServerOpts {
	if t.m.CallsPublic {
		o.Visibility = schema.ReadPublic
	} else {
		o.Participants = []string{t.art.CreatedBy}
	}
	return o
}

func (d *Dispatcher) load(ctx context.Context, name, version string) (*tool, error) {
	if !toolname.Valid(name) {
		return nil, problem.Invalid(problem.Field("input.name", "pattern",
			"a tool name is lower-case letters, digits, '_' and '-' in dot-separated segments, e.g. pk.nca", name))
	}
	a, err := d.store.Get(ctx, ref.Ref{Type: toolspec.ToolType, ID: name})
	if errors.Is(err, store.ErrNotFound) {
		return nil, problem.New(problem.NotFound, "no tool named %q; find tools with the tools query", name)
	}
	if err != nil {
		return nil, fmt.Errorf("load tool %s: %w", name, err)
	}
	if s := state(a); s == "deprecated" || s == "archived" {
		// The tool as a whole was retired: no version of it runs, pinned or not.
		return nil, problem.New(problem.PermissionDenied, "tool %s is %s and no longer runs", name, s)
	}
	if version == "" && state(a) == "draft" {
		// A newer version waits for review: a call by name runs the newest
		// reviewed one, if there is one (a tool never reviewed runs its draft,
		// for its author and admins only).
		if active, err := d.store.LatestInState(ctx, a, "active"); err == nil {
			a = active
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("load tool %s: %w", name, err)
		}
	}
	m, err := toolspec.Decode(a.Content)
	if err != nil {
		return nil, err
	}
	if version != "" && m.Version != version {
		if a, m, err = d.version(ctx, a, version); err != nil {
			return nil, err
		}
	}
	rt, ok := d.opts.Runtimes.Get(m.Runtime)
	if !ok {
		return nil, problem.New(problem.PermissionDenied, "tool %s needs the %s runtime, which this server does not run", name, m.Runtime)
	}
	m.Bound(d.opts.Caps)
	return &tool{art: a, m: m, rt: rt}, nil
}

// version finds the version of a tool whose manifest says version.
func (d *Dispatcher) version(ctx context.Context, latest *store.Artifact, version string) (*store.Artifact, *toolspec.Manifest, error) {
	before := latest.Version + 1
	for {
		page, err := d.store.History(ctx, latest, 100, before)
		if err != nil {
			return nil, nil, fmt.Errorf("tool %s history: %w", latest.ID, err)
		}
		for _, a := range page {
			m, err := toolspec.Decode(a.Content)
			if err == nil && m.Version == version {
				return a, m, nil
			}
			before = a.Version
		}
		if len(page) < 100 {
			return nil, nil, problem.New(problem.NotFound, "tool %s has no version %s", latest.ID, version)
		}
	}
}

// authorize says whether rc may run t: anyone with contributor runs an active
// tool; a draft runs for its author and admins only.
func authorize(rc *request.Context, t *tool) error {
	if rc == nil || rc.Anonymous || !rc.Actor.Has(auth.PermContributor) {
		return problem.New(problem.PermissionDenied, "invoking a tool needs the contributor permission")
	}
	switch state := state(t.art); state {
	case "active":
		return nil
	case "draft":
		if rc.Actor.ID == t.art.CreatedBy || rc.Actor.Has(auth.PermAdmin) {
			return nil
		}
		return problem.New(problem.PermissionDenied,
			"tool %s %s is a draft: only its author and admins run it until a reviewer makes it active", t.m.Name, t.m.Version)
	default:
		return problem.New(problem.PermissionDenied, "tool %s %s is %s and no longer runs", t.m.Name, t.m.Version, state)
	}
}

// state is a version's lifecycle state ("" for none).
func state(a *store.Artifact) string {
	if a.LifecycleState == nil {
		return ""
	}
	return *a.LifecycleState
}

// compiled returns the tool's input or output schema, compiled once per
// tool version.
func (d *Dispatcher) compiled(t *tool, which string, raw json.RawMessage) (*jsonschema.Schema, error) {
	key := t.art.Ref().String() + "#" + which
	if s, ok := d.schemas.Load(key); ok {
		return s.(*jsonschema.Schema), nil
	}
	s, err := schema.CompileJSONSchema(raw)
	if err != nil {
		return nil, fmt.Errorf("tool %s: %s schema: %w", t.m.Name, which, err)
	}
	d.schemas.Store(key, s)
	return s, nil
}

// checkArgs validates args against the tool's input_schema; every problem
// names its path under args.
func (d *Dispatcher) checkArgs(t *tool, args json.RawMessage) error {
	var obj map[string]json.RawMessage
	if len(args) == 0 || json.Unmarshal(args, &obj) != nil || obj == nil {
		return problem.Invalid(problem.Field("input.args", "type", "args is a JSON object of the tool's arguments", json.RawMessage(orNull(args))))
	}
	s, err := d.compiled(t, "input", t.m.InputSchema)
	if err != nil {
		return err
	}
	ps := schema.ValidateJSON(s, "input.args", args)
	var checked []problem.Detail
	if c, ok := t.rt.(runtimes.ArgsChecker); ok {
		for _, p := range c.CheckArgs(t.m.RuntimeTool(t.art.Ref().String(), nil), args) {
			checked = append(checked, problem.Detail{Path: "input.args." + p.Path, Constraint: p.Constraint, Message: p.Message, Value: p.Value, Suggestion: p.Suggestion})
		}
	}
	if len(ps) == 0 && len(checked) == 0 {
		return nil
	}
	// Where the runtime's own check (a skill's) refuses what the schema
	// refuses too, it says more — the units a quantity takes, a suggestion
	// ("mg/kg?") — so its problems come first, and the schema's only at the
	// paths it did not name.
	out := checked
	for _, p := range ps {
		if !underAny(p.Path, checked) {
			out = append(out, p)
		}
	}
	return problem.Invalid(out...)
}

// underAny reports whether path is one of the problems' paths or below one.
func underAny(path string, ds []problem.Detail) bool {
	for _, d := range ds {
		if path == d.Path || strings.HasPrefix(path, d.Path+".") || strings.HasPrefix(path, d.Path+"[") {
			return true
		}
	}
	return false
}

// checkOutput validates a result against output_schema: the violations are
// recorded on the call, never hidden.
func (d *Dispatcher) checkOutput(t *tool, out json.RawMessage) []violation {
	if len(t.m.OutputSchema) == 0 {
		return []violation{}
	}
	s, err := d.compiled(t, "output", t.m.OutputSchema)
	if err != nil {
		return []violation{{Path: "", Constraint: "output_schema", Message: err.Error()}}
	}
	vs := []violation{}
	for _, p := range schema.ValidateJSON(s, "result", out) {
		vs = append(vs, violation{Path: p.Path, Constraint: p.Constraint, Message: p.Message})
	}
	return vs
}

func orNull(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}

// inputsHash is the canonical (RFC 8785) hash of the arguments.
func inputsHash(args json.RawMessage) (string, error) {
	h, err := canon.HashJSON(args)
	if err != nil {
		return "", fmt.Errorf("hash args: %w", err)
	}
	return h, nil
}

// later is rc at a later moment: the rows a call writes when it finishes
// carry the time it finished, not the time it was asked for.
func later(rc *request.Context) *request.Context {
	c := *rc
	c.Now = request.Clock(time.Now())
	return &c
}
