package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/e2e"
)

// The README's tour, step 9: chem.sar_table on its example series through
// the real binary. The call is a queued job, worked by the server's own
// workers, which run RDKit in the bwrap sandbox; it records its logic
// version, inputs hash and progress; and its figure, opened in headless
// Chromium, renders one structure per compound with its legend.
func TestSARFigureInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary, RDKit in the sandbox and a browser")
	}
	exe := e2e.FindChromium(t)
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("no bubblewrap (scripts/deps run)")
	}
	if exec.Command("/usr/bin/python3", "-IS", "-c", "import sys; sys.path.append('/usr/lib/python3/dist-packages'); import rdkit").Run() != nil {
		if os.Getenv("SCIDEX_REQUIRE_BROWSER") == "1" {
			t.Fatal("no Debian RDKit (scripts/deps run installs python3-rdkit)")
		}
		t.Skip("no Debian RDKit (scripts/deps run)")
	}
	srv, tok := startAsAda(t, "sar-figure-secret-0123456789abcdef-012345")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	example := skillExample(ctx, t, srv.URL, tok, "chem.sar_table")
	compounds, _ := example["compounds"].([]any)
	if len(compounds) < 5 {
		t.Fatalf("the example has %d compounds", len(compounds))
	}
	var run struct {
		RunSkill struct {
			ToolCall struct{ ArtifactID, Status string }
		}
	}
	if err := gql(ctx, srv.URL, tok, `mutation($in: JSON!) { runSkill(input: {name: "chem.sar_table", inputs: $in, storeResult: true}) { ... on SkillRun { toolCall { artifactId status } } } }`,
		map[string]any{"in": example}, &run); err != nil {
		t.Fatal(err)
	}
	if s := run.RunSkill.ToolCall.Status; s != "QUEUED" && s != "RUNNING" && s != "SUCCEEDED" {
		t.Fatalf("runSkill chem.sar_table: %+v", run.RunSkill)
	}
	var call struct {
		ToolCall struct {
			Status, CheckLogicVersion, InputsHash string
			Async                                 bool
			Error                                 map[string]any
			ResultArtifactID                      string
			Result                                struct {
				FigureURL string `json:"figure_url"`
				Table     struct {
					Rows []struct {
						ID               string
						InChIKey         *string  `json:"inchikey"`
						PActivity        *float64 `json:"pactivity"`
						LigandEfficiency *float64 `json:"ligand_efficiency"`
					}
				}
			}
		}
	}
	// Wait on the call's events, as untilCall does, keeping its progress.
	ws := apitest.DialURL(t, srv.URL, nil)
	defer ws.Close()
	if err := ws.Init(map[string]any{"Authorization": "Bearer " + tok}); err != nil {
		t.Fatal(err)
	}
	ws.Subscribe("calls", `subscription { events(types: ["tool_call.*"], from: START) { type payload } }`, nil)
	var progress []string
	done := func() bool {
		if err := gql(ctx, srv.URL, tok, `query($id: ID!) { toolCall(id: $id) { status async checkLogicVersion inputsHash error result resultArtifactId } }`,
			map[string]any{"id": run.RunSkill.ToolCall.ArtifactID}, &call); err != nil {
			t.Fatal(err)
		}
		s := call.ToolCall.Status
		return s == "SUCCEEDED" && call.ToolCall.ResultArtifactID != "" || s == "FAILED"
	}
	for !done() {
		m := ws.Next("calls")
		if m.Type != "next" {
			t.Fatalf("the event subscription answered %+v", m)
		}
		var ev struct {
			Events struct {
				Type    string
				Payload struct{ Message string }
			}
		}
		m.Data(t, &ev)
		if ev.Events.Type == "tool_call.progress" {
			progress = append(progress, ev.Events.Payload.Message)
		}
	}
	c := call.ToolCall
	if c.Status != "SUCCEEDED" {
		t.Fatalf("the call ended %s: %v", c.Status, c.Error)
	}
	if !c.Async || c.CheckLogicVersion != "chem.sar_table/1" || !strings.HasPrefix(c.InputsHash, "sha256:") || len(c.InputsHash) != 71 {
		t.Fatalf("the call's record: async %v, check_logic_version %q, inputs_hash %q", c.Async, c.CheckLogicVersion, c.InputsHash)
	}
	// The worker's progress reached the caller as events (the reporter
	// coalesces them: at least the first and the last).
	if len(progress) == 0 || !strings.Contains(strings.Join(progress, "|"), "RDKit") {
		t.Fatalf("progress events: %q", progress)
	}
	t.Logf("progress events: %q", progress)
	rows := c.Result.Table.Rows
	if len(rows) != len(compounds) || rows[0].ID != "PD 153035" || rows[0].InChIKey == nil || rows[0].PActivity == nil || *rows[0].PActivity != 10.602 {
		t.Fatalf("the table: %+v", rows)
	}

	url := c.Result.FigureURL
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+url, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.Count(string(body), `class="structure"`) != len(compounds) || strings.Contains(strings.ToLower(string(body)), "<script") {
		t.Fatalf("GET %s: %d %.300s", url, resp.StatusCode, body)
	}

	bctx := e2e.NewBrowser(t, exe)
	if _, err := chromedp.Call(bctx, network.SetCookie, network.SetCookieParams{Name: "scidex_jwt", Value: tok, URL: srv.URL + "/"}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(bctx, chromedp.Navigate(srv.URL+url)); err != nil {
		t.Fatal(err)
	}
	// Each structure is drawn (its bonds have a size on the page) and
	// labelled with its id and its IC50.
	const probe = `(function(){ var r = document.documentElement;
	  if (r.localName !== 'svg') return 'not an svg document: ' + r.localName;
	  var cells = document.querySelectorAll('g.structure'); var drawn = 0, labelled = 0;
	  cells.forEach(function(g){ var d = g.querySelector('g.drawing'); if (!d) return;
	    var b = d.getBBox(); if (b.width > 40 && b.height > 20 && d.querySelectorAll('path').length > 5) drawn++;
	    var t = g.querySelectorAll('text.legend'); if (t.length === 2 && t[1].textContent.indexOf('IC50') === 0) labelled++; });
	  return cells.length + ' ' + drawn + ' ' + labelled + ' ' + (r.textContent.indexOf('PD 153035') >= 0); })()`
	rendered, err := chromedp.Run(bctx, chromedp.Evaluate[string](probe))
	if err != nil {
		t.Fatal(err)
	}
	n := len(compounds)
	if want := strings.Join([]string{strconv.Itoa(n), strconv.Itoa(n), strconv.Itoa(n), "true"}, " "); rendered != want {
		t.Fatalf("Chromium rendered %q, want %q (structures, drawn, labelled, PD 153035 named)", rendered, want)
	}
}
