package dispatch_test

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/app"
	"github.com/scidex/substrate/internal/secrets"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/httppost"
	"github.com/scidex/substrate/skills"
	"github.com/scidex/substrate/tools"
)

// An http_post tool runs through invokeTool end to end: the server posts the
// args with the bearer secret its secret_ref names, the result is recorded;
// a tool pointing at an address the outbound guard refuses is a FAILED call
// that says so, and the secret is in no tool_call, event or log line.
func TestHTTPPostTool(t *testing.T) {
	const secret = "s3cr3t-bearer-0123456789"
	var sawAuth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawAuth = r.Header.Get("Authorization")
		var in map[string]any
		_ = json.NewDecoder(r.Body).Decode(&in)
		_ = json.NewEncoder(w).Encode(map[string]any{"value": in["value"]})
	}))
	defer srv.Close()
	allowed := strings.TrimPrefix(srv.URL, "http://")
	// A listener nothing may reach: the guard must refuse it before connecting.
	trip, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer trip.Close()
	connected := make(chan struct{}, 1)
	go func() {
		if c, err := trip.Accept(); err == nil {
			connected <- struct{}{}
			_ = c.Close()
		}
	}()
	_, tripPort, _ := net.SplitHostPort(trip.Addr().String())
	sec, err := secrets.New(map[string]string{"UNITS_TOKEN": secret}, map[string]secrets.Grant{"UNITS_TOKEN": {
		Tools: []string{"test.remote", "test.localhost", "test.squat"}, Hosts: []string{allowed, "localhost:" + tripPort}}})
	if err != nil {
		t.Fatal(err)
	}
	e := env(t, nil, func(c *app.Config) {
		c.Runtimes = func(st *store.Store) (*runtimes.Registry, error) {
			post, err := httppost.New(httppost.Options{Secrets: sec, Allow: []string{allowed}})
			if err != nil {
				return nil, err
			}
			return runtimes.NewRegistry(tools.Runtime(skills.Deps{Store: st}), post)
		}
	})
	httpTool := func(name, url string) map[string]any {
		return testTool(name, "", func(m map[string]any) {
			m["runtime"] = "http_post"
			m["runtime_config"] = map[string]any{"url": url, "secret_ref": "UNITS_TOKEN"}
		})
	}
	activate(t, e, httpTool("test.remote", srv.URL+"/echo"))
	c := invoke(t, e, alice(t), "test.remote", map[string]any{"value": 4})
	if c.Status != "SUCCEEDED" || string(c.Result) != `{"value":4}` || sawAuth != "Bearer "+secret {
		t.Fatalf("http_post call: %+v (auth %q)", c, sawAuth)
	}
	// A draft never carries the secret, even for its author: alice, first to
	// register a name the operator granted, runs it without a request sent.
	sawAuth = ""
	if r := register(t, e, alice(t), httpTool("test.squat", srv.URL+"/echo")); r.RegisterTool.Typename != "WriteSuccess" {
		t.Fatalf("registering a granted name: %+v", r.RegisterTool)
	}
	d := invoke(t, e, alice(t), "test.squat", map[string]any{"value": 5})
	if d.Status != "FAILED" || d.Error == nil || d.Error.Code != runtimes.CodeRefused || !strings.Contains(d.Error.Message, "made active") || sawAuth != "" {
		t.Fatalf("a draft naming a granted secret: %+v (auth %q)", d, sawAuth)
	}
	// Registering a tool at a loopback address not allow-listed is refused
	// at registration; one whose host resolves there fails at the dial.
	r := register(t, e, alice(t), httpTool("test.inside", "http://"+trip.Addr().String()+"/x"))
	if r.RegisterTool.Typename != "ValidationFailed" {
		t.Fatalf("a loopback URL was registered: %+v", r.RegisterTool)
	}
	activate(t, e, httpTool("test.localhost", "http://localhost:"+tripPort+"/x"))
	f := invoke(t, e, alice(t), "test.localhost", map[string]any{"value": 1})
	if f.Status != "FAILED" || f.Error == nil || f.Error.Code != runtimes.CodeRefused {
		t.Fatalf("a call to localhost: %+v", f)
	}
	select {
	case <-connected:
		t.Fatal("the guard let a connection reach a refused address")
	default:
	}
	var dump, evs string
	if err := e.Pool.QueryRow(t.Context(), `SELECT string_agg(content::text, ' ') FROM artifact_versions`).Scan(&dump); err != nil {
		t.Fatal(err)
	}
	if err := e.Pool.QueryRow(t.Context(), `SELECT string_agg(payload::text, ' ') FROM events`).Scan(&evs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dump, "UNITS_TOKEN") || !strings.Contains(evs, "tool_call") {
		t.Fatal("the dumps do not hold what they should: the check below would prove nothing")
	}
	if strings.Contains(dump, secret) || strings.Contains(evs, secret) || e.Log.Contains(secret) {
		t.Fatal("the secret leaked into an artifact, an event or the log")
	}
}
