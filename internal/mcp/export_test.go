package mcp

import "context"

// Watching is how many resource subscriptions s holds to the artifact ref.
func Watching(s *Server, ref string) int { return s.watch.count(ref) }

// FastProbe is what a test learns of the fast path for one request.
type FastProbe = fastProbe

// Answered reports whether the fast path answered the request.
func (p *FastProbe) Answered() bool { return p.answered }

// WithFastProbe returns ctx carrying a probe: with sdkOnly the request goes to
// the SDK handler alone, otherwise the probe records whether the fast path
// answered it.
func WithFastProbe(ctx context.Context, sdkOnly bool) (context.Context, *FastProbe) {
	p := &fastProbe{off: sdkOnly}
	return context.WithValue(ctx, fastProbeKey{}, p), p
}
