package auth

import (
	"net/http"
	"strings"
)

// CookieName is the cookie that carries the JWT for browser clients.
const CookieName = "scidex_jwt"

// TokenFromRequest returns the JWT an HTTP request carries: the Authorization
// header's Bearer token if there is one, else the scidex_jwt cookie. It returns
// "" when neither is present; the token itself is checked by Verify.
func TokenFromRequest(r *http.Request) string {
	tok, _ := TokenSource(r)
	return tok
}

// TokenSource is TokenFromRequest, and whether the token came from the
// cookie (which a browser attaches by itself, so its request needs the
// defences of internal/session).
func TokenSource(r *http.Request) (token string, cookie bool) {
	if tok, ok := bearer(r.Header.Get("Authorization")); ok {
		return tok, false
	}
	if c, err := r.Cookie(CookieName); err == nil && c.Value != "" {
		return c.Value, true
	}
	return "", false
}

// TokenFromInitPayload returns the JWT a websocket connection_init payload
// carries: an "Authorization" (or "authorization") member holding
// "Bearer <token>", or else a "token" member holding the bare token. It
// returns "" when the payload carries neither.
func TokenFromInitPayload(payload map[string]any) string {
	for _, key := range []string{"Authorization", "authorization"} {
		if s, ok := payload[key].(string); ok {
			if tok, ok := bearer(s); ok {
				return tok
			}
		}
	}
	if s, ok := payload["token"].(string); ok {
		return strings.TrimSpace(s)
	}
	return ""
}

// bearer extracts the token from a "Bearer <token>" value; the scheme is
// case-insensitive.
func bearer(v string) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(v), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}
