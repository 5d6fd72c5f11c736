package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/mcpserver"
)

// serveEnv makes the test binary the mcp-textkit server on stdio, so the
// runtime starts the real program the way an operator's servers file would.
const serveEnv = "MCP_TEXTKIT_TEST_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) == "1" {
		if err := run(context.Background(), ""); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// manifest is the part of a tool.json this test reads.
type manifest struct {
	Name          string          `json:"name"`
	Runtime       string          `json:"runtime"`
	RuntimeConfig json.RawMessage `json:"runtime_config"`
	InputSchema   json.RawMessage `json:"input_schema"`
	OutputSchema  json.RawMessage `json:"output_schema"`
	Examples      []struct {
		Description string          `json:"description"`
		Args        json.RawMessage `json:"args"`
		Result      json.RawMessage `json:"result"`
	} `json:"examples"`
}

func readManifest(t *testing.T, path string) manifest {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

func compile(t *testing.T, name string, schema json.RawMessage) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "mem://textkit/" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s does not compile: %v", name, err)
	}
	return s
}

func validate(t *testing.T, s *jsonschema.Schema, what string, v json.RawMessage) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(v))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(inst); err != nil {
		t.Errorf("%s %s breaks its schema: %v", what, v, err)
	}
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

// Every manifest's examples are what the real server answers, through the
// mcp_server runtime over stdio and over streamable HTTP, and fit the
// manifest's schemas.
func TestManifestExamples(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(handler())
	defer hs.Close()
	servers := map[string]mcpserver.Server{
		"textkit":      {Command: []string{exe}, Env: map[string]string{serveEnv: "1", "GORACE": "atexit_sleep_ms=0"}},
		"textkit-http": {URL: hs.URL},
	}
	rt, err := mcpserver.New(mcpserver.Options{Servers: servers})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()

	for _, path := range []string{"tool.json", filepath.Join("examples", "top_words.tool.json")} {
		m := readManifest(t, path)
		if m.Runtime != mcpserver.Name || len(m.Examples) == 0 {
			t.Errorf("%s: runtime %q with %d examples, want mcp_server with some", path, m.Runtime, len(m.Examples))
		}
		in, out := compile(t, m.Name+".input", m.InputSchema), compile(t, m.Name+".output", m.OutputSchema)
		for _, server := range []string{"textkit", "textkit-http"} {
			var cfg map[string]any
			if err := json.Unmarshal(m.RuntimeConfig, &cfg); err != nil {
				t.Fatal(err)
			}
			cfg["server"] = server
			raw, _ := json.Marshal(cfg)
			tool := &runtimes.Tool{Name: m.Name, Runtime: m.Runtime, Config: raw}
			if ps := rt.Check(tool); len(ps) > 0 {
				t.Fatalf("%s on %s: Check = %+v", path, server, ps)
			}
			for _, ex := range m.Examples {
				validate(t, in, m.Name+" example args", ex.Args)
				validate(t, out, m.Name+" example result", ex.Result)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				res, err := rt.Run(ctx, &runtimes.Call{Tool: tool, Args: ex.Args})
				cancel()
				if err != nil {
					t.Errorf("%s (%s) on %s: %v", m.Name, ex.Description, server, err)
					continue
				}
				if !sameJSON(res.Output, ex.Result) {
					t.Errorf("%s (%s) on %s answered\n %s\nwant\n %s", m.Name, ex.Description, server, res.Output, ex.Result)
				}
				validate(t, out, m.Name+" output", res.Output)
			}
		}
	}
}

// A text over the limit is the tool's failure, with its reason.
func TestTooLongTextIsAToolError(t *testing.T) {
	hs := httptest.NewServer(handler())
	defer hs.Close()
	rt, err := mcpserver.New(mcpserver.Options{Servers: map[string]mcpserver.Server{"textkit": {URL: hs.URL}}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	args, _ := json.Marshal(map[string]string{"text": string(bytes.Repeat([]byte("a"), maxText+1))})
	_, err = rt.Run(context.Background(), &runtimes.Call{
		Tool: &runtimes.Tool{Runtime: mcpserver.Name, Config: json.RawMessage(`{"server":"textkit","tool_name":"text_stats"}`)},
		Args: args})
	if e := runtimes.AsError(err); err == nil || e.Code != runtimes.CodeToolError || e.Setup {
		t.Fatalf("got %v, want a tool_error", err)
	}
}

// The example servers file is in the shape mcpserver reads.
func TestExampleServersFile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("examples", "mcp-servers.json"))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f mcpserver.ServersFile
	if err := dec.Decode(&f); err != nil || len(f.Servers) != 2 {
		t.Fatalf("examples/mcp-servers.json: %v (%d servers)", err, len(f.Servers))
	}
}
