package mcpserver

import (
	"context"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scidex/substrate/runtimes"
)

// progressRegistry routes the servers' notifications/progress to the calls
// they are about, by the progress token each call sends.
type progressRegistry struct {
	mu    sync.Mutex
	next  uint64
	sinks map[string]*progressSink
}

// progressSink is one call's Progress. done is set, under mu, before the
// call returns, so no report reaches a call that has ended.
type progressSink struct {
	mu   sync.Mutex
	f    func(runtimes.Progress)
	done bool
}

// add registers f and returns the call's token and the function that
// unregisters it.
func (p *progressRegistry) add(f func(runtimes.Progress)) (string, func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	token := "scidex-" + strconv.FormatUint(p.next, 10)
	if p.sinks == nil {
		p.sinks = map[string]*progressSink{}
	}
	s := &progressSink{f: f}
	p.sinks[token] = s
	return token, func() {
		p.mu.Lock()
		delete(p.sinks, token)
		p.mu.Unlock()
		s.mu.Lock()
		s.done = true
		s.mu.Unlock()
	}
}

// deliver is the client's ProgressNotificationHandler.
func (p *progressRegistry) deliver(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	if req == nil || req.Params == nil {
		return
	}
	token, ok := req.Params.ProgressToken.(string)
	if !ok {
		return
	}
	p.mu.Lock()
	s := p.sinks[token]
	p.mu.Unlock()
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.done {
		s.f(toProgress(req.Params))
	}
}

// toProgress maps MCP's progress (a count, and a total when known) onto the
// substrate's (a fraction when known, and the raw numbers).
func toProgress(n *mcp.ProgressNotificationParams) runtimes.Progress {
	pr := runtimes.Progress{Message: n.Message, Data: map[string]any{"progress": n.Progress}}
	if n.Total > 0 {
		pr.Data["total"] = n.Total
		f := min(max(n.Progress/n.Total, 0), 1)
		pr.Fraction = &f
	}
	return pr
}
