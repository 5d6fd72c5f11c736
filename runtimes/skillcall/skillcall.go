package skillcall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/runtimes"
)

// Name is the runtime's name in a tool's `runtime`.
const Name = "skill_call"

// PacketType is the artifact type a call writes.
const PacketType = "agent_work_packet"

// Packets is all the runtime has of the store, supplied where the server is
// composed (internal/workpacket.Writer): the package never sees the database.
// An error either method returns is the store's: a *problem.Problem the
// caller may read (a refusal of the packet, an id in use), anything else an
// internal failure.
type Packets interface {
	// CreatePacket records the agent_work_packet id (the call's id) with
	// title and content, as the caller of ctx, as a server write of its
	// invokeTool; it returns the packet's unpinned ref.
	CreatePacket(ctx context.Context, id, title string, content json.RawMessage) (ref string, err error)
	// Packet reads the agent_work_packet id: its unpinned ref and content.
	Packet(ctx context.Context, id string) (ref string, content json.RawMessage, err error)
}

// Runtime writes work packets.
type Runtime struct {
	st Packets
}

// New returns the runtime writing through st; a nil st is a composition
// error and panics.
func New(st Packets) *Runtime {
	if st == nil {
		panic("skillcall: New needs somewhere to write work packets")
	}
	return &Runtime{st: st}
}

// Name implements runtimes.Runtime.
func (r *Runtime) Name() string { return Name }

// Check implements runtimes.Runtime: runtime_config must be a Config with a
// skill and instructions, and nothing else.
func (r *Runtime) Check(t *runtimes.Tool) []runtimes.Problem {
	_, ps := decode(t.Config)
	return ps
}

// budget is a packet's budget.
type budget struct {
	MaxUSD float64 `json:"max_usd"`
}

// packet is the content of the agent_work_packet a call writes.
type packet struct {
	SkillName    string          `json:"skill_name"`
	Persona      string          `json:"persona,omitempty"`
	Instructions string          `json:"instructions"`
	Inputs       json.RawMessage `json:"inputs"`
	Budget       *budget         `json:"budget,omitempty"`
	MaxSteps     *int            `json:"max_steps,omitempty"`
	Status       string          `json:"status"`
	ToolCall     string          `json:"tool_call"`
}

// Run implements runtimes.Runtime: it writes the call's work packet and
// returns at once, pending, naming the packet; the call stays queued until an
// agent completes the packet.
func (r *Runtime) Run(ctx context.Context, c *runtimes.Call) (*runtimes.Result, error) {
	cfg, ps := decode(c.Tool.Config)
	if len(ps) > 0 {
		return nil, runtimes.Errorf(runtimes.CodeRefused, true, "%s: %s", ps[0].Path, ps[0].Message)
	}
	if c.ID == "" {
		return nil, runtimes.Errorf(runtimes.CodeRefused, true, "a work packet belongs to a recorded tool call, and this call has no id")
	}
	if c.Tool.Caps.WallTime > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Tool.Caps.WallTime)
		defer cancel()
	}
	if err := ctx.Err(); err != nil {
		return nil, ended(ctx)
	}
	call := ref.Ref{Type: "tool_call", ID: c.ID}.String()
	p := packet{SkillName: cfg.Skill, Persona: cfg.Persona, Instructions: cfg.Instructions, Inputs: c.Args,
		MaxSteps: cfg.MaxSteps, Status: "open", ToolCall: call}
	if len(p.Inputs) == 0 {
		p.Inputs = json.RawMessage(`{}`)
	}
	if cfg.BudgetUSD != nil {
		p.Budget = &budget{MaxUSD: *cfg.BudgetUSD}
	}
	content, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode work packet: %w", err)
	}
	title := cfg.Skill
	if cfg.Persona != "" {
		title += " as " + cfg.Persona
	}
	title += " for " + call
	written, err := r.st.CreatePacket(ctx, c.ID, title, content)
	if err == nil {
		return &runtimes.Result{Pending: true, ResultRef: written}, nil
	}
	if ctx.Err() != nil {
		return nil, ended(ctx)
	}
	if idTaken(err) {
		// An earlier attempt of this call (its worker died after the write)
		// wrote the packet: the call waits on that one.
		earlier, content, gerr := r.st.Packet(ctx, c.ID)
		if gerr == nil && toolCallOf(content) == call {
			return &runtimes.Result{Pending: true, ResultRef: earlier}, nil
		}
	}
	if p, ok := problem.As(err); ok {
		// A refusal of the packet (its content, the caller's permission) is
		// safe to show; a database failure is not, and goes to the log.
		msg := p.Message
		if len(p.Details) > 0 {
			msg = p.Details[0].Path + ": " + p.Details[0].Message
		}
		return nil, runtimes.Errorf(runtimes.CodeRefused, true, "the work packet could not be written: %s", msg)
	}
	return nil, fmt.Errorf("write work packet for %s: %w", call, err)
}

// ended is the error of a call whose context ended before its packet was
// written.
func ended(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return runtimes.Errorf(runtimes.CodeWallTimeout, false, "the work packet was not written within the tool's wall time")
	}
	return runtimes.Errorf(runtimes.CodeCancelled, false, "the call was cancelled")
}

// idTaken says whether a create failed because the id is in use.
func idTaken(err error) bool {
	p, ok := problem.As(err)
	if !ok || p.Code != problem.ValidationFailed {
		return false
	}
	for _, d := range p.Details {
		if d.Path == "id" && d.Constraint == "unique" {
			return true
		}
	}
	return false
}

func toolCallOf(content json.RawMessage) string {
	var c struct {
		ToolCall string `json:"tool_call"`
	}
	_ = json.Unmarshal(content, &c)
	return c.ToolCall
}
