package server

import (
	"context"
	"sync"
	"time"

	"github.com/scidex/substrate/internal/auth"
)

// tokenCache remembers tokens that verified, so that a client sending the same
// token on every request pays for the signature check once. An entry is used
// only while the token is unexpired, and for at most tokenCacheTTL (so a change
// of keys takes effect within it); refused tokens are never cached.
type tokenCache struct {
	mu      sync.Mutex
	entries map[string]tokenEntry
}

type tokenEntry struct {
	p        *auth.Principal
	verified time.Time
}

const (
	tokenCacheTTL  = time.Minute
	tokenCacheSize = 10000
)

func (c *tokenCache) verify(ctx context.Context, v *auth.Verifier, token string, now time.Time) (*auth.Principal, error) {
	c.mu.Lock()
	e, ok := c.entries[token]
	c.mu.Unlock()
	if ok && now.Before(e.p.ExpiresAt) && now.Sub(e.verified) < tokenCacheTTL {
		return e.p, nil
	}
	p, err := v.Verify(ctx, token)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.entries == nil || len(c.entries) >= tokenCacheSize {
		c.entries = make(map[string]tokenEntry) // start over rather than track recency
	}
	c.entries[token] = tokenEntry{p: p, verified: now}
	c.mu.Unlock()
	return p, nil
}
