package bwrap_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/bwrap"
)

// dirBundle serves a bundle from a directory, as registration would read it.
type dirBundle string

func (d dirBundle) Open(_ context.Context, f runtimes.File) (io.ReadCloser, error) {
	return os.Open(filepath.Join(string(d), filepath.FromSlash(f.Path)))
}

// The shipped tools/text-stats bundle: its manifest's hashes are those of
// its files, Check accepts it, and every example (in tool.json and in
// examples/) gives its recorded result through the sandbox.
func TestTextStatsBundle(t *testing.T) {
	dir := filepath.Join("..", "..", "tools", "text-stats")
	raw, err := os.ReadFile(filepath.Join(dir, "tool.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Name, Version string
		Runtime       string          `json:"runtime"`
		Config        json.RawMessage `json:"runtime_config"`
		Caps          struct {
			WallTimeMin float64 `json:"wall_time_min"`
			MemoryGB    float64 `json:"memory_gb"`
			Network     string  `json:"network"`
			CPUCount    float64 `json:"cpu_count"`
		} `json:"resource_caps"`
		Files    []runtimes.File `json:"files"`
		Examples []struct {
			Description  string
			Args, Result json.RawMessage
		}
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, f := range m.Files {
		b, err := os.ReadFile(filepath.Join(dir, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != f.SHA256 {
			t.Fatalf("tool.json's sha256 of %s is stale: the file's is %x", f.Path, sum)
		}
	}
	tool := &runtimes.Tool{Ref: "tool:" + m.Name + "@" + m.Version, Name: m.Name, Version: m.Version, Runtime: m.Runtime,
		Config: m.Config, Files: m.Files, Bundle: dirBundle(dir), Caps: runtimes.Caps{
			WallTime: time.Duration(m.Caps.WallTimeMin * float64(time.Minute)), MemoryBytes: int64(m.Caps.MemoryGB * (1 << 30)),
			Network: m.Caps.Network, CPUCount: m.Caps.CPUCount}}
	if tool.Runtime != bwrap.Name {
		t.Fatalf("runtime %q", tool.Runtime)
	}
	rt := newRuntime(t)
	if ps := rt.Check(tool); len(ps) > 0 {
		t.Fatalf("Check: %+v", ps)
	}
	type example struct{ name, args, result string }
	var examples []example
	for _, e := range m.Examples {
		examples = append(examples, example{e.Description, string(e.Args), string(e.Result)})
	}
	files, _ := filepath.Glob(filepath.Join(dir, "examples", "*.args.json"))
	for _, f := range files {
		args, _ := os.ReadFile(f)
		result, err := os.ReadFile(strings.TrimSuffix(f, ".args.json") + ".result.json")
		if err != nil {
			t.Fatal(err)
		}
		examples = append(examples, example{filepath.Base(f), string(args), string(result)})
	}
	if len(examples) < 4 {
		t.Fatalf("%d examples, want those of tool.json and examples/", len(examples))
	}
	for _, e := range examples {
		progressed := false
		res, err := rt.Run(t.Context(), &runtimes.Call{Tool: tool, Args: json.RawMessage(e.args), ID: "text-stats",
			Progress: func(runtimes.Progress) { progressed = true }})
		if err != nil {
			t.Fatalf("%s: %v", e.name, err)
		}
		var got, want any
		_ = json.Unmarshal(res.Output, &got)
		_ = json.Unmarshal([]byte(e.result), &want)
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) {
			t.Errorf("%s: got %s, want %s", e.name, g, w)
		}
		if !progressed {
			t.Errorf("%s: no progress reported", e.name)
		}
	}
}
