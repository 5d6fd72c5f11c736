package mcpserver_test

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/mcpserver"
)

// A runtime_config that does not name a configured server and a tool is
// refused by Check, with the path and a message saying what is expected,
// and again by Run, before anything is started.
func TestCheckRefuses(t *testing.T) {
	rt := newRuntime(t, map[string]mcpserver.Server{"beta": {URL: "http://127.0.0.1:1/mcp"}, "alpha": {Command: []string{"true"}}})
	cases := []struct {
		config, path, says string
	}{
		{`{"server":"gamma","tool_name":"x"}`, "runtime_config.server", `"gamma" is not an MCP server this substrate is configured with; configured: alpha, beta`},
		{`{"tool_name":"x"}`, "runtime_config.server", "configured: alpha, beta"},
		{`{"server":"alpha"}`, "runtime_config.tool_name", "runtime_config.tool_name"},
		{`{"server":"alpha","tool_name":"  "}`, "runtime_config.tool_name", "runtime_config.tool_name"},
		{`{"server":"alpha","tool_name":"x","command":["sh"]}`, "runtime_config", `unknown field "command"`},
		{`{"server":"alpha","tool_name":"x","timeout_ms":0}`, "runtime_config.timeout_ms", "want 1 to 86400000 milliseconds"},
		{`{"server":"alpha","tool_name":"x","timeout_ms":-5}`, "runtime_config.timeout_ms", "timeout_ms is -5"},
		{`{"server":"alpha","tool_name":"x","timeout_ms":86400001}`, "runtime_config.timeout_ms", "timeout_ms is 86400001"},
		// Multiplied into a Duration these overflow: to 448 µs, and to a
		// negative duration (no deadline at all).
		{`{"server":"alpha","tool_name":"x","timeout_ms":18446744073710}`, "runtime_config.timeout_ms", "timeout_ms is 18446744073710"},
		{`{"server":"alpha","tool_name":"x","timeout_ms":9223372036855}`, "runtime_config.timeout_ms", "timeout_ms is 9223372036855"},
		{`["alpha"]`, "runtime_config", `{"server": "<configured server>"`},
		{``, "runtime_config.server", "configured: alpha, beta"},
	}
	for _, c := range cases {
		tl := &runtimes.Tool{Name: "t", Runtime: mcpserver.Name, Config: json.RawMessage(c.config)}
		ps := rt.Check(tl)
		found := false
		for _, p := range ps {
			if p.Path == c.path && strings.Contains(p.Message, c.says) {
				found = true
			}
		}
		if !found {
			t.Errorf("Check(%s) = %+v, want a problem at %s saying %q", c.config, ps, c.path, c.says)
		}
		_, err := rt.Run(context.Background(), &runtimes.Call{Tool: tl, Args: json.RawMessage(`{}`)})
		if e := runtimes.AsError(err); err == nil || e.Code != runtimes.CodeRefused || !e.Setup {
			t.Errorf("Run with runtime_config %s: %v, want a refused setup failure", c.config, err)
		}
	}
	if ps := rt.Check(&runtimes.Tool{Config: json.RawMessage(`{"server":"beta","tool_name":"x","timeout_ms":5000}`)}); len(ps) != 0 {
		t.Errorf("a good runtime_config was refused: %+v", ps)
	}
}

// A server that cannot be started or reached is a setup failure saying
// which; the message carries no host path or address.
func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	dir := t.TempDir()
	gone := filepath.Join(dir, "gone")
	if err := os.WriteFile(gone, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	rt := newRuntime(t, map[string]mcpserver.Server{
		"closed":  {URL: "http://" + addr + "/mcp"},
		"exits":   {Command: []string{"true"}},
		"removed": {Command: []string{gone}},
	})
	if err := os.Remove(gone); err != nil { // after New checked it
		t.Fatal(err)
	}
	for server, want := range map[string]string{
		"closed":  runtimes.CodeUnreachable,
		"exits":   runtimes.CodeSetupFailed,
		"removed": runtimes.CodeSetupFailed,
	} {
		_, e := call(t, rt, server, "echo", `{}`)
		if e == nil || e.Code != want || !e.Setup || !strings.Contains(e.Message, `"`+server+`"`) {
			t.Errorf("%s: %+v, want %s, setup, naming the server", server, e, want)
			continue
		}
		if strings.Contains(e.Message, addr) || strings.Contains(e.Message, dir) {
			t.Errorf("%s: the message %q shows a host address or path", server, e.Message)
		}
	}
}

// Bad options are errors naming the option or the server entry.
func TestNewRefusesBadOptions(t *testing.T) {
	cases := []struct {
		name string
		opts mcpserver.Options
		says string
	}{
		{"both", mcpserver.Options{Servers: map[string]mcpserver.Server{"s": {Command: []string{"true"}, URL: "http://x"}}}, `server "s": has both command and url`},
		{"neither", mcpserver.Options{Servers: map[string]mcpserver.Server{"s": {}}}, `server "s": has neither command nor url`},
		{"missing program", mcpserver.Options{Servers: map[string]mcpserver.Server{"s": {Command: []string{"no-such-program-here"}}}}, `server "s": command "no-such-program-here" cannot be run`},
		{"scheme", mcpserver.Options{Servers: map[string]mcpserver.Server{"s": {URL: "ftp://x/mcp"}}}, `server "s": url "ftp://x/mcp": want an absolute http:// or https:// URL`},
		{"url credentials hidden", mcpserver.Options{Servers: map[string]mcpserver.Server{"s": {URL: "file://user:pw@x/mcp?key=sekrit"}}}, `url "file://x/mcp"`},
		{"env on http", mcpserver.Options{Servers: map[string]mcpserver.Server{"s": {URL: "http://x", Env: map[string]string{"A": "b"}}}}, "env is for a stdio server"},
		{"headers on stdio", mcpserver.Options{Servers: map[string]mcpserver.Server{"s": {Command: []string{"true"}, Headers: map[string]string{"A": "b"}}}}, "headers are for an http server"},
		{"env name", mcpserver.Options{Servers: map[string]mcpserver.Server{"s": {Command: []string{"true"}, Env: map[string]string{"A=B": "c"}}}}, `env name "A=B"`},
		{"header value", mcpserver.Options{Servers: map[string]mcpserver.Server{"s": {URL: "http://x", Headers: map[string]string{"X-A": "b\nc"}}}}, `header "X-A" has a value`},
		{"server name", mcpserver.Options{Servers: map[string]mcpserver.Server{"a b": {Command: []string{"true"}}}}, `server name "a b"`},
		{"timeout", mcpserver.Options{ConnectTimeout: -1}, "Options.ConnectTimeout"},
		{"grace", mcpserver.Options{TerminateGrace: -1}, "Options.TerminateGrace"},
		{"max output", mcpserver.Options{MaxOutputBytes: -1}, "Options.MaxOutputBytes"},
	}
	for _, c := range cases {
		_, err := mcpserver.New(c.opts)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: New = %v, want an error saying %q", c.name, err, c.says)
		}
		if err != nil && strings.Contains(err.Error(), "sekrit") {
			t.Errorf("%s: the error shows a secret: %v", c.name, err)
		}
	}
}

// The servers file: a good one loads, a bad one is an error naming the
// file and the entry, never an env value.
func TestLoadServers(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", `{"servers": {
		"textkit": {"command": ["true", "--stdio"], "env": {"API_KEY": "sekrit"}},
		"remote": {"url": "https://mcp.example.org/mcp", "headers": {"X-Team": "chem"}}}}`)
	servers, err := mcpserver.LoadServers(good)
	if err != nil {
		t.Fatal(err)
	}
	if got := servers["textkit"]; len(got.Command) != 2 || got.Env["API_KEY"] != "sekrit" || servers["remote"].Headers["X-Team"] != "chem" {
		t.Errorf("loaded %+v", servers)
	}
	for _, c := range []struct{ body, says string }{
		{`{"servers": {"a": {"comand": ["true"]}}}`, `unknown field "comand"`},
		{`{"servers": {"a": {"command": ["true"]}, "b": {"url": "mailto:x", "env": {"K": "sekrit"}}}}`, `server "b"`},
		{`{"mcpServers": {}}`, `unknown field "mcpServers"`},
		{`{}`, `no "servers" object`},
		{`{"servers": {}} {"servers": {}}`, "more than one JSON value"},
		{`{"servers": {"a": {"command": "true"}}}`, "cannot unmarshal"},
	} {
		p := write("bad.json", c.body)
		_, err := mcpserver.LoadServers(p)
		if err == nil || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v, want an error naming %s and saying %q", c.body, err, p, c.says)
		}
		if err != nil && strings.Contains(err.Error(), "sekrit") {
			t.Errorf("%s: the error shows an env value: %v", c.body, err)
		}
	}
	if _, err := mcpserver.LoadServers(filepath.Join(dir, "none.json")); err == nil {
		t.Error("a missing file loaded")
	}
}
