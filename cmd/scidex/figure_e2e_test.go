package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/e2e"
)

// The README's tour of the skills: pk.nca on one theophylline subject,
// through the real binary (the skills installed at start), and its figure
// opened in headless Chromium, which must render it: an SVG document with the
// profile's points and its axis labels, under the figure's drawing-only policy.
func TestNCAFigureInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary and a browser")
	}
	exe := e2e.FindChromium(t)
	srv, tok := startAsAda(t, "figure-secret-0123456789abcdef-0123456789ab")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	example := skillExample(ctx, t, srv.URL, tok, "pk.nca")
	var run struct {
		RunSkill struct {
			ToolCall struct {
				Status string
				Result struct {
					FigureURL string `json:"figure_url"`
				}
			}
			SkillResult struct{ Ref string }
		}
	}
	if err := gql(ctx, srv.URL, tok, `mutation($in: JSON!) { runSkill(input: {name: "pk.nca", inputs: $in}) { ... on SkillRun { toolCall { status result } skillResult { ref } } } }`,
		map[string]any{"in": example}, &run); err != nil {
		t.Fatal(err)
	}
	url := run.RunSkill.ToolCall.Result.FigureURL
	if run.RunSkill.ToolCall.Status != "SUCCEEDED" || url == "" || run.RunSkill.SkillResult.Ref == "" {
		t.Fatalf("runSkill pk.nca: %+v", run.RunSkill)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+url, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "Time (h)") || !strings.Contains(string(body), "Concentration (mg/L)") {
		t.Fatalf("GET %s: %d %.200s", url, resp.StatusCode, body)
	}

	bctx := e2e.NewBrowser(t, exe)
	if _, err := chromedp.Call(bctx, network.SetCookie, network.SetCookieParams{Name: "scidex_jwt", Value: tok, URL: srv.URL + "/"}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(bctx, chromedp.Navigate(srv.URL+url)); err != nil {
		t.Fatal(err)
	}
	const probe = `(function(){ var r = document.documentElement;
	  if (r.localName !== 'svg') return 'not an svg document: ' + r.localName;
	  var box = r.getBoundingClientRect(); var pts = document.querySelectorAll('circle').length;
	  var text = r.textContent;
	  return [box.width > 100 && box.height > 100, pts > 11, text.indexOf('Time (h)') >= 0, text.indexOf('Concentration (mg/L)') >= 0].join(',') + ' ' + pts; })()`
	rendered, err := chromedp.Run(bctx, chromedp.Evaluate[string](probe))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(rendered, "true,true,true,true ") {
		t.Fatalf("Chromium did not render the figure: %s", rendered)
	}
}

// startAsAda starts the binary on its own database with the JWT secret, and
// mints an hour's contributor token for ada.
func startAsAda(t *testing.T, secret string) (*e2e.Proc, string) {
	t.Helper()
	srv := e2e.Start(t, e2e.Opts{DataDir: e2e.DataDir(t), Env: []string{"DATABASE_URL=" + dbtest.URL(t), "SCIDEX_JWT_SECRET=" + secret}})
	tok, err := auth.Mint(auth.MintOpts{Secret: []byte(secret), Issuer: "scidex", Audience: "scidex", Subject: "ada",
		Kind: auth.KindHuman, Permissions: []auth.Permission{auth.PermContributor}, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return srv, tok
}

// skillExample is the example inputs the server serves for a skill.
func skillExample(ctx context.Context, t *testing.T, url, tok, name string) map[string]any {
	t.Helper()
	var sk struct {
		Skill struct {
			Example struct{ Inputs map[string]any }
		}
	}
	if err := gql(ctx, url, tok, `query($n: String!) { skill(name: $n) { example } }`, map[string]any{"n": name}, &sk); err != nil {
		t.Fatal(err)
	}
	if sk.Skill.Example.Inputs == nil {
		t.Fatalf("the server serves no example for %s", name)
	}
	return sk.Skill.Example.Inputs
}
