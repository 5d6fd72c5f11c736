package auth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestTokenFromRequest(t *testing.T) {
	tests := []struct {
		name   string
		header string
		cookie string
		want   string
	}{
		{"bearer header", "Bearer abc.def.ghi", "", "abc.def.ghi"},
		{"scheme is case-insensitive", "bearer  abc.def.ghi ", "", "abc.def.ghi"},
		{"header wins over cookie", "Bearer from.header.x", "from.cookie.x", "from.header.x"},
		{"cookie", "", "from.cookie.x", "from.cookie.x"},
		{"basic auth falls back to cookie", "Basic dXNlcjpwdw==", "from.cookie.x", "from.cookie.x"},
		{"empty bearer", "Bearer ", "", ""},
		{"nothing", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/graphql", nil)
			if tt.header != "" {
				r.Header.Set("Authorization", tt.header)
			}
			if tt.cookie != "" {
				r.AddCookie(&http.Cookie{Name: CookieName, Value: tt.cookie})
			}
			if got := TokenFromRequest(r); got != tt.want {
				t.Errorf("TokenFromRequest = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTokenFromInitPayload(t *testing.T) {
	tests := []struct {
		name    string
		payload map[string]any
		want    string
	}{
		{"Authorization", map[string]any{"Authorization": "Bearer a.b.c"}, "a.b.c"},
		{"authorization", map[string]any{"authorization": "Bearer a.b.c"}, "a.b.c"},
		{"token", map[string]any{"token": " a.b.c "}, "a.b.c"},
		{"non-string", map[string]any{"Authorization": 7}, ""},
		{"nil payload", nil, ""},
	}
	for _, tt := range tests {
		if got := TokenFromInitPayload(tt.payload); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestPrincipalContext(t *testing.T) {
	if _, ok := PrincipalFrom(context.Background()); ok {
		t.Error("empty context has a principal")
	}
	p := &Principal{Actor: Actor{ID: "a", Kind: KindHuman}}
	got, ok := PrincipalFrom(WithPrincipal(context.Background(), p))
	if !ok || got != p {
		t.Errorf("PrincipalFrom = %v, %v", got, ok)
	}
	if _, ok := PrincipalFrom(WithPrincipal(context.Background(), nil)); ok {
		t.Error("nil principal reported as present")
	}
}
