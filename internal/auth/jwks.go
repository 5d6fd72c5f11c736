package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// DefaultJWKSMinRefresh is how often, at most, a JWKS is fetched again because
// a token named an unknown kid (or the cached set grew old).
const DefaultJWKSMinRefresh = 30 * time.Second

// DefaultJWKSMaxAge is how long a fetched JWKS is trusted before the next
// verification tries to refresh it, so keys removed upstream stop working.
const DefaultJWKSMaxAge = 10 * time.Minute

// maxJWKSBytes caps the JWKS response body.
const maxJWKSBytes = 1 << 20

// jwksFetchTimeout bounds one JWKS fetch.
const jwksFetchTimeout = 10 * time.Second

// errRefreshRateLimited means no fetch was made because the last attempt was
// too recent.
var errRefreshRateLimited = errors.New("jwks refresh skipped: rate limited")

// jwksCache holds the keys of one JWKS URL by kid. It is safe for concurrent
// use: lookups share a read lock, and at most one fetch runs at a time, its
// result shared by every caller that waits for it.
type jwksCache struct {
	url        string
	client     *http.Client
	now        func() time.Time
	minRefresh time.Duration
	maxAge     time.Duration

	mu        sync.RWMutex
	keys      map[string]jwkKey
	fetchedAt time.Time  // last successful fetch; zero before the first
	attempted time.Time  // start of the last fetch, successful or not
	inflight  *fetchCall // the fetch under way, if any
}

// fetchCall is one JWKS fetch; err is set before done is closed.
type fetchCall struct {
	done chan struct{}
	err  error
}

// checkJWKSURL accepts https URLs, and http URLs only for loopback hosts (a
// local identity provider, or a test server).
func checkJWKSURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("auth: JWKS URL does not parse")
	}
	switch u.Scheme {
	case "https":
	case "http":
		host := u.Hostname()
		ip := net.ParseIP(host)
		if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return errors.New("auth: JWKS URL must use https (http is allowed only for loopback hosts)")
		}
	default:
		return errors.New("auth: JWKS URL must use https")
	}
	if u.Host == "" {
		return errors.New("auth: JWKS URL has no host")
	}
	return nil
}

// lookup returns the key named kid for a token signed with alg. An unknown kid
// or a stale set triggers a refresh, subject to the rate limit.
func (c *jwksCache) lookup(ctx context.Context, kid, alg string) (any, error) {
	k, ok, stale := c.get(kid)
	if !ok || stale {
		err := c.refresh(ctx)
		switch {
		case err == nil:
			k, ok, _ = c.get(kid)
		case ok:
			// Refresh failed but the cached key is still there: keep serving it
			// rather than failing every request while the JWKS host is down.
		case errors.Is(err, errRefreshRateLimited):
			// No fetch so soon after the last; but that last one may have
			// finished since we looked, so look again.
			k, ok, _ = c.get(kid)
		default:
			return nil, verifyErr(reasonKeysUnavailable, err)
		}
	}
	if !ok {
		return nil, verifyErr(reasonUnknownKeyID, errors.New("no key with the token's kid in the JWKS"))
	}
	if k.alg != alg {
		return nil, verifyErr(reasonKeyAlgMismatch, fmt.Errorf("token alg %s, JWK allows %s", alg, k.alg))
	}
	return k.key, nil
}

// get reads the cache. stale is true when the set is older than maxAge.
func (c *jwksCache) get(kid string) (k jwkKey, ok, stale bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	k, ok = c.keys[kid]
	stale = c.fetchedAt.IsZero() || c.now().Sub(c.fetchedAt) >= c.maxAge
	return k, ok, stale
}

// refresh fetches the JWKS unless a fetch started less than minRefresh ago.
// Callers arriving while a fetch is under way wait for that fetch instead of
// starting another. The fetch runs on its own timeout, not the caller's
// context: a caller that gives up (or an attacker who hangs up) stops waiting
// but does not abort the fetch for everyone else.
func (c *jwksCache) refresh(ctx context.Context) error {
	c.mu.Lock()
	call := c.inflight
	if call == nil {
		now := c.now()
		if !c.attempted.IsZero() && now.Sub(c.attempted) < c.minRefresh {
			c.mu.Unlock()
			return errRefreshRateLimited
		}
		c.attempted = now
		call = &fetchCall{done: make(chan struct{})}
		c.inflight = call
		go c.run(call)
	}
	c.mu.Unlock()

	select {
	case <-call.done:
		return call.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run performs one fetch and publishes its result. On failure the previous
// keys stay in place.
func (c *jwksCache) run(call *fetchCall) {
	ctx, cancel := context.WithTimeout(context.Background(), jwksFetchTimeout)
	defer cancel()
	keys, err := c.fetch(ctx)

	c.mu.Lock()
	if err == nil {
		c.keys = keys
		c.fetchedAt = c.now()
	}
	c.inflight = nil
	c.mu.Unlock()

	call.err = err
	close(call.done)
}

// fetch downloads and parses the JWKS. A set with no usable key is an error,
// and the previous keys are kept.
func (c *jwksCache) fetch(ctx context.Context) (map[string]jwkKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return nil, fmt.Errorf("jwks: %w", err)
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		// Drop the URL from the message: it could carry a credential.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("jwks: fetch failed: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("jwks: fetch returned HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("jwks: reading body: %w", err)
	}
	if len(body) > maxJWKSBytes {
		return nil, fmt.Errorf("jwks: response larger than %d bytes", maxJWKSBytes)
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, errors.New("jwks: response is not a JWK set")
	}
	keys := make(map[string]jwkKey, len(set.Keys))
	var firstErr error
	for _, raw := range set.Keys {
		kid, k, err := parseJWK(raw)
		if err != nil {
			if !errors.Is(err, errSkipKey) && firstErr == nil {
				firstErr = err
			}
			continue
		}
		if _, dup := keys[kid]; dup {
			continue // the first key with a kid wins
		}
		keys[kid] = k
	}
	if len(keys) == 0 {
		if firstErr != nil {
			return nil, fmt.Errorf("jwks: no usable key: %w", firstErr)
		}
		return nil, errors.New("jwks: no usable key (want kty RSA for RS256 or OKP/Ed25519 for EdDSA, each with a kid)")
	}
	return keys, nil
}
