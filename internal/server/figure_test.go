package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
)

// A figure's SVG is served at /artifacts/<ref>/figure.svg with a policy that
// lets it draw and nothing else; reading it needs what reading the artifact
// needs.
func TestFigureSVG(t *testing.T) {
	env := apitest.New(t)
	tok := apitest.Contributor(t, "fig")
	svg := `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><script>alert(1)</script><circle cx="5" cy="5" r="4"/></svg>`
	var out struct{ CreateArtifact struct{ Ref string } }
	env.OK(t, tok, `mutation($s: String!) { createArtifact(input: {type: "figure", title: "A circle", content: {caption: "A circle", media_type: "image/svg+xml", svg: $s}}) {
	  ... on WriteSuccess { ref } } }`, map[string]any{"s": svg}, &out)
	if out.CreateArtifact.Ref == "" {
		t.Fatalf("create the figure: %s", env.Post(t, tok, `mutation($s: String!) { createArtifact(input: {type: "figure", title: "A circle", content: {caption: "A circle", media_type: "image/svg+xml", svg: $s}}) { __typename ... on ValidationFailed { problems { path message } } } }`, map[string]any{"s": svg}).Raw)
	}
	var hyp struct{ CreateArtifact struct{ Ref string } }
	env.OK(t, tok, `mutation { createArtifact(input: {type: "hypothesis", title: "Not a figure", content: {}}) { ... on WriteSuccess { ref } } }`, nil, &hyp)
	get := func(ref, token string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodGet, env.Server.URL+"/artifacts/"+ref+"/figure.svg", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	for _, r := range []string{out.CreateArtifact.Ref, strings.SplitN(out.CreateArtifact.Ref, "@", 2)[0]} {
		resp, body := get(r, tok)
		if resp.StatusCode != 200 || body != svg || resp.Header.Get("Content-Type") != "image/svg+xml; charset=utf-8" ||
			!strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("GET %s: %d %q %v", r, resp.StatusCode, body, resp.Header)
		}
	}
	if resp, _ := get(out.CreateArtifact.Ref, ""); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("anonymous: %d", resp.StatusCode)
	}
	if resp, _ := get(hyp.CreateArtifact.Ref, tok); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a hypothesis: %d", resp.StatusCode)
	}
	if resp, _ := get("figure:nope", tok); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a missing figure: %d", resp.StatusCode)
	}
}
