package server_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/server"
)

func claims(mut func(jwt.MapClaims)) jwt.MapClaims {
	c := jwt.MapClaims{"sub": "mallory", "iss": "scidex", "aud": "scidex", "actor_kind": "human",
		"permissions": []string{"contributor"}, "iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix()}
	if mut != nil {
		mut(c)
	}
	return c
}

func hs(t *testing.T, secret []byte, c jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(secret)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Bad tokens are refused with UNAUTHENTICATED before anything runs, and nothing is written.
func TestBadTokensRefused(t *testing.T) {
	env := apitest.New(t)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	edTok, _ := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims(nil)).SignedString(edKey)
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
	payload := base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"mallory","iss":"scidex","aud":"scidex","actor_kind":"human","permissions":["admin"],"exp":9999999999}`))
	cases := map[string]string{
		"alg none":           header + "." + payload + ".",
		"wrong key":          hs(t, []byte("another-secret-0123456789abcdef-0123456789"), claims(nil)),
		"expired":            hs(t, apitest.Secret, claims(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Hour).Unix() })),
		"wrong audience":     hs(t, apitest.Secret, claims(func(c jwt.MapClaims) { c["aud"] = "someone-else" })),
		"wrong issuer":       hs(t, apitest.Secret, claims(func(c jwt.MapClaims) { c["iss"] = "evil" })),
		"no exp":             hs(t, apitest.Secret, claims(func(c jwt.MapClaims) { delete(c, "exp") })),
		"unpinned algorithm": edTok,
		"garbage":            "not.a.jwt",
		"unknown permission": hs(t, apitest.Secret, claims(func(c jwt.MapClaims) { c["permissions"] = []string{"root"} })),
	}
	before := env.Counts(t)
	for name, tok := range cases {
		r := env.Post(t, tok, createMutation, map[string]any{"in": map[string]any{"type": "hypothesis", "title": "x", "content": map[string]any{}}})
		if r.Status != http.StatusUnauthorized || len(r.Errors) != 1 || r.Errors[0].Code() != "UNAUTHENTICATED" {
			t.Errorf("%s: status %d %s", name, r.Status, r.Raw)
			continue
		}
		if strings.Contains(string(r.Raw), tok) || strings.Contains(string(r.Raw), string(apitest.Secret)) {
			t.Errorf("%s: the response leaks the token or the secret", name)
		}
		if r.Errors[0].Extensions["requestId"] == nil {
			t.Errorf("%s: no requestId", name)
		}
	}
	if after := env.Counts(t); !equalCounts(before, after) {
		t.Errorf("refused requests wrote: %v -> %v", before, after)
	}
	if strings.Contains(env.Log.String(), string(apitest.Secret)) {
		t.Error("the log contains the secret")
	}
}

// A viewer may read but not write; a request without a token may do neither
// (unless anonymous reads are configured), except introspection.
func TestPermissions(t *testing.T) {
	env := apitest.New(t)
	viewer := apitest.Token(t, "vera", auth.PermViewer)
	before := env.Counts(t)
	res := create(t, env, viewer, map[string]any{"type": "hypothesis", "title": "x", "content": map[string]any{}}).CreateArtifact
	if res.Typename != "PermissionDenied" || res.Code != "PERMISSION_DENIED" || !strings.Contains(res.Message, "contributor") {
		t.Errorf("viewer create: %+v", res)
	}
	if after := env.Counts(t); !equalCounts(before, after) {
		t.Errorf("denied write wrote: %v -> %v", before, after)
	}
	var me struct{ Me struct{ ID string } }
	env.OK(t, viewer, `{ me { id } }`, nil, &me)
	if me.Me.ID != "vera" {
		t.Errorf("me = %+v", me)
	}

	r := env.Post(t, "", `{ artifacts(type: "hypothesis") { totalCount } }`, nil)
	if len(r.Errors) != 1 || r.Errors[0].Code() != "UNAUTHENTICATED" {
		t.Errorf("anonymous read: %s", r.Raw)
	}
	r = env.Post(t, "", createMutation, map[string]any{"in": map[string]any{"type": "hypothesis", "title": "x", "content": map[string]any{}}})
	if len(r.Errors) != 1 || r.Errors[0].Code() != "UNAUTHENTICATED" {
		t.Errorf("anonymous write: %s", r.Raw)
	}
	var intro struct {
		Schema struct{ QueryType struct{ Name string } } `json:"__schema"`
	}
	env.OK(t, "", `{ __schema { queryType { name } } }`, nil, &intro)
	if intro.Schema.QueryType.Name != "Query" {
		t.Errorf("introspection without a token: %+v", intro)
	}

	open := apitest.New(t, apitest.Opts{Server: func(o *server.Opts) { o.AnonymousRead = true }})
	var list struct{ Artifacts struct{ TotalCount int } }
	open.OK(t, "", `{ artifacts(type: "hypothesis") { totalCount } }`, nil, &list)
	r = open.Post(t, "", createMutation, map[string]any{"in": map[string]any{"type": "hypothesis", "title": "x", "content": map[string]any{}}})
	if len(r.Errors) != 1 || r.Errors[0].Code() != "UNAUTHENTICATED" {
		t.Errorf("anonymous write with anonymous reads on: %s", r.Raw)
	}
}

// Changing a type's schema needs reviewer; a new type registered at run time is
// served at once as GenericArtifact.
func TestRegisterTypeAtRunTime(t *testing.T) {
	env := apitest.New(t)
	doc := map[string]any{
		"type": "protocol", "schema_version": 1, "title": "Protocol", "description": "A lab protocol.",
		"id_strategy": "uuid", "mutability": "mutable_with_history", "lock_mode": "optimistic",
		"content_schema": map[string]any{"type": "object", "required": []string{"steps"},
			"properties": map[string]any{"steps": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "The steps."}}},
		"links": map[string]any{}, "signals": map[string]any{}, "lifecycle": map[string]any{"initial": nil, "states": []any{}, "transitions": []any{}},
		"validators": []any{}, "merge": map[string]any{"text_fields": []any{}, "append_only_arrays": []any{}},
		"examples": []any{map[string]any{"title": "Staining", "content": map[string]any{"steps": []string{"fix", "stain"}}}},
	}
	in := map[string]any{"type": "schema", "id": "protocol", "title": "Protocol", "content": doc}
	if r := create(t, env, apitest.Contributor(t, "ada"), in).CreateArtifact; r.Typename != "PermissionDenied" {
		t.Fatalf("contributor registering a type: %+v", r)
	}
	reviewer := apitest.Token(t, "rosalind", auth.PermReviewer)
	if r := create(t, env, reviewer, in).CreateArtifact; r.Typename != "WriteSuccess" {
		t.Fatalf("reviewer registering a type: %+v", r)
	}
	tok := apitest.Contributor(t, "ada")
	if r := create(t, env, tok, map[string]any{"type": "protocol", "title": "x", "content": map[string]any{}}).CreateArtifact; r.Typename != "ValidationFailed" || r.Problems[0].Path != "content.steps" {
		t.Fatalf("new type validates: %+v", r)
	}
	r := create(t, env, tok, map[string]any{"type": "protocol", "title": "Staining", "content": map[string]any{"steps": []string{"fix", "stain"}}}).CreateArtifact
	if r.Typename != "WriteSuccess" {
		t.Fatalf("create of new type: %+v", r)
	}
	var got struct {
		Artifact struct {
			Typename string `json:"typename"`
			Type     string
		}
		Schema struct{ GraphqlType string }
	}
	env.OK(t, tok, `query($r: Ref!) { artifact(ref: $r) { typename: __typename type } schema(type: "protocol") { graphqlType } }`, map[string]any{"r": r.Ref}, &got)
	if got.Artifact.Typename != "GenericArtifact" || got.Artifact.Type != "protocol" || got.Schema.GraphqlType != "GenericArtifact" {
		t.Errorf("got %+v", got)
	}
	// A document that does not compile is refused, naming why.
	bad := map[string]any{"type": "schema", "id": "broken", "title": "Broken", "content": map[string]any{"type": "broken"}}
	if r := create(t, env, reviewer, bad).CreateArtifact; r.Typename != "ValidationFailed" {
		t.Errorf("broken schema: %+v", r)
	}
}
