package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/scidex/substrate/internal/secrets"
	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/httppost"
)

type manifest struct {
	Name          string          `json:"name"`
	Version       string          `json:"version"`
	Runtime       string          `json:"runtime"`
	RuntimeConfig json.RawMessage `json:"runtime_config"`
	InputSchema   json.RawMessage `json:"input_schema"`
	OutputSchema  json.RawMessage `json:"output_schema"`
	Examples      []example       `json:"examples"`
}

type example struct {
	Description string          `json:"description"`
	Args        json.RawMessage `json:"args"`
	Result      json.RawMessage `json:"result,omitempty"`
	Error       *struct {
		Code   string `json:"code"`
		Status int    `json:"status"`
	} `json:"error,omitempty"`
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func readManifest(t *testing.T) manifest {
	t.Helper()
	var m manifest
	b, err := os.ReadFile("tool.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("tool.json: %v", err)
	}
	return m
}

func compile(t *testing.T, name string, doc json.RawMessage) *jsonschema.Schema {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(name, v); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(name)
	if err != nil {
		t.Fatalf("%s does not compile: %v", name, err)
	}
	return s
}

func validate(t *testing.T, s *jsonschema.Schema, what string, doc json.RawMessage) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("%s is not valid: %v", what, err)
	}
}

// The manifest is what registration will read: its schemas compile, its
// unit enum is the server's table, and every example fits the schemas.
func TestManifest(t *testing.T) {
	m := readManifest(t)
	if !regexp.MustCompile(`^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)*$`).MatchString(m.Name) || m.Runtime != httppost.Name {
		t.Fatalf("name %q runtime %q", m.Name, m.Runtime)
	}
	in := compile(t, "input.json", m.InputSchema)
	out := compile(t, "output.json", m.OutputSchema)
	var schema struct {
		Properties struct {
			From struct{ Enum []string } `json:"from"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(m.InputSchema, &schema)
	enum := schema.Properties.From.Enum
	sort.Strings(enum)
	if table := strings.Split(known(), ", "); !reflect.DeepEqual(enum, table) {
		t.Errorf("input_schema's units %v are not the server's %v", enum, table)
	}
	for _, ex := range allExamples(t, m) {
		validate(t, in, ex.Description+" (args)", ex.Args)
		if ex.Result != nil {
			validate(t, out, ex.Description+" (result)", ex.Result)
		}
	}
}

// allExamples is the manifest's examples and the examples/ files, which
// must agree where they overlap.
func allExamples(t *testing.T, m manifest) []example {
	t.Helper()
	files, _ := filepath.Glob("examples/*.json")
	if len(files) == 0 {
		t.Fatal("no examples/")
	}
	inManifest := map[string]example{}
	for _, ex := range m.Examples {
		inManifest[ex.Description] = ex
	}
	var out []example
	for _, f := range files {
		var ex example
		readJSON(t, f, &ex)
		if mex, ok := inManifest[ex.Description]; ok && (!sameJSON(mex.Args, ex.Args) || !sameJSON(mex.Result, ex.Result)) {
			t.Errorf("%s differs from tool.json's example of the same description", f)
		}
		delete(inManifest, ex.Description)
		out = append(out, ex)
	}
	for d := range inManifest {
		t.Errorf("tool.json's example %q has no file in examples/", d)
	}
	return out
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	_ = json.Unmarshal(a, &x)
	_ = json.Unmarshal(b, &y)
	return reflect.DeepEqual(x, y)
}

// The program itself, started as main starts it (on port 0, with a token),
// answers every example through the http_post runtime, with the token as
// the tool's secret_ref; without the secret it refuses the call.
func TestThroughTheRuntime(t *testing.T) {
	const token = "units-test-token-7d1e"
	t.Setenv("HTTP_UNITS_TEST_TOKEN", token)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--addr", "127.0.0.1:0", "--token-env", "HTTP_UNITS_TEST_TOKEN"}, pw)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the server did not stop cleanly: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("the server did not stop")
		}
	})
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	url := strings.TrimSpace(strings.TrimPrefix(line, "http-units listening on "))
	hostPort := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/convert")

	m := readManifest(t)
	// The operator grants the token to this tool, for this server.
	store, err := secrets.New(map[string]string{"UNITS_TOKEN": token},
		map[string]secrets.Grant{"UNITS_TOKEN": {Tools: []string{m.Name}, Hosts: []string{hostPort}}})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := httppost.New(httppost.Options{Secrets: store, Allow: []string{hostPort}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	withSecret := &runtimes.Tool{Name: m.Name, Version: m.Version, Runtime: m.Runtime,
		Config: json.RawMessage(`{"url": "` + url + `", "secret_ref": "UNITS_TOKEN", "timeout_ms": 5000}`)}
	if ps := rt.Check(withSecret); len(ps) > 0 {
		t.Fatalf("Check: %+v", ps)
	}
	for _, ex := range allExamples(t, m) {
		res, err := rt.Run(ctx, &runtimes.Call{Tool: withSecret, Args: ex.Args, ID: "example"})
		if ex.Error != nil {
			var e *runtimes.Error
			if !errors.As(err, &e) || e.Code != ex.Error.Code || e.Details["status"] != ex.Error.Status {
				t.Errorf("%s: got %v, want %s with status %d", ex.Description, err, ex.Error.Code, ex.Error.Status)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", ex.Description, err)
			continue
		}
		if !sameJSON(res.Output, ex.Result) {
			t.Errorf("%s: got %s, want %s", ex.Description, res.Output, ex.Result)
		}
	}
	without := *withSecret
	without.Config = json.RawMessage(`{"url": "` + url + `"}`)
	_, err = rt.Run(ctx, &runtimes.Call{Tool: &without, Args: json.RawMessage(`{"value": 1, "from": "m", "to": "ft"}`)})
	var e *runtimes.Error
	if !errors.As(err, &e) || e.Code != runtimes.CodeToolError || e.Details["status"] != 401 {
		t.Errorf("without the token: %v, want tool_error 401", err)
	}
}

func TestConvert(t *testing.T) {
	for _, c := range []struct {
		v        float64
		from, to string
		want     float64
	}{
		{0.1, "km", "m", 100}, {1, "mi", "ft", 5280}, {-40, "C", "F", -40}, {0, "K", "C", -273.15},
		{212, "F", "K", 373.15}, {1, "atm", "kPa", 101.325}, {1, "h", "s", 3600}, {1, "gal", "L", 3.785411784},
	} {
		got, err := convert(c.v, c.from, c.to)
		if err != nil || got.Value != c.want {
			t.Errorf("%g %s in %s = %v, %v; want %g", c.v, c.from, c.to, got.Value, err, c.want)
		}
	}
	for _, bad := range [][2]string{{"kg", "m"}, {"furlong", "m"}, {"m", "parsec"}} {
		if _, err := convert(1, bad[0], bad[1]); err == nil {
			t.Errorf("%s to %s converted", bad[0], bad[1])
		}
	}
}
