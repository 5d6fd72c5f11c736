package auth

import "context"

// principalKey is the context key for the request's Principal.
type principalKey struct{}

// WithPrincipal returns a copy of ctx carrying p, for the server to attach the
// verified identity to a request.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the Principal attached by WithPrincipal, and false if
// there is none.
func PrincipalFrom(ctx context.Context) (*Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(*Principal)
	return p, ok && p != nil
}
