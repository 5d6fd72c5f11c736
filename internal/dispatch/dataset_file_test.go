package dispatch_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/app"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/skills"
	"github.com/scidex/substrate/tools"
)

// data.check_conformance reads a dataset's file from the server's dataset
// directory, and reports on it only if its bytes are the ones the dataset
// declares: an altered file, a path outside the directory (by "..", or by a
// symlink) and an undeclared file each fail the call with a code saying
// which, and no report.
func TestConformanceOfADatasetFile(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "datasets")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	e := apitest.New(t, apitest.Opts{App: func(c *app.Config) {
		c.Runtimes = func(st *store.Store) (*runtimes.Registry, error) {
			return runtimes.NewRegistry(tools.Runtime(skills.Deps{Store: st, DatasetDir: dir}))
		}
	}})
	table := "subject,time_h,conc\n1,0,0.74\n1,0.25,2.84\n1,0.25,x\n"
	write := func(path, text string) string {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(text))
		return hex.EncodeToString(sum[:])
	}
	hash := write(filepath.Join(dir, "theoph.csv"), table)
	outside := write(filepath.Join(root, "outside.csv"), table)
	if err := os.Symlink(filepath.Join(root, "outside.csv"), filepath.Join(dir, "link.csv")); err != nil {
		t.Fatal(err)
	}
	var ds struct{ CreateArtifact struct{ Ref string } }
	e.OK(t, alice(t), `mutation($c: JSON!) { createArtifact(input: {type: "dataset", title: "theophylline, subject 1", content: $c}) { ... on WriteSuccess { ref } } }`,
		map[string]any{"c": map[string]any{"description": "three rows", "format": "csv", "files": []any{
			map[string]any{"path": "theoph.csv", "sha256": hash, "size": len(table), "media_type": "text/csv"},
			map[string]any{"path": "../outside.csv", "sha256": outside},
			map[string]any{"path": "link.csv", "sha256": outside},
		}}}, &ds)
	dataset := ds.CreateArtifact.Ref
	if dataset == "" {
		t.Fatal("no dataset created")
	}
	spec := map[string]any{"columns": []any{
		map[string]any{"name": "subject", "type": "integer", "required": true},
		map[string]any{"name": "time_h", "type": "number", "min": 0},
		map[string]any{"name": "conc", "type": "number", "min": 0}},
		"unique_keys": []any{[]any{"subject", "time_h"}}}

	run := func(file string) (status string, result map[string]any, errCode string) {
		t.Helper()
		r := runSkill(t, alice(t), "data.check_conformance", map[string]any{"dataset": dataset, "file": file, "spec": spec}, e)
		if r.RunSkill.Typename != "SkillRun" {
			t.Fatalf("file %q: %+v", file, r.RunSkill)
		}
		id := r.RunSkill.ToolCall.ArtifactID
		status = waitStatus(t, e, alice(t), id, "SUCCEEDED", "FAILED")
		var out struct {
			ToolCall struct {
				Result map[string]any
				Error  struct{ Code, Message string }
			}
		}
		e.OK(t, alice(t), `query($id: ID!) { toolCall(id: $id) { result error } }`, map[string]any{"id": id}, &out)
		return status, out.ToolCall.Result, out.ToolCall.Error.Code + ": " + out.ToolCall.Error.Message
	}

	status, result, _ := run("theoph.csv")
	report, _ := result["report"].(map[string]any)
	if status != "SUCCEEDED" || result["conforms"] != false || report["total_violations"] != float64(2) ||
		!strings.Contains(result["source"].(string), "file theoph.csv (sha256:"+hash+")") {
		t.Fatalf("the declared file: %s %v", status, result)
	}

	write(filepath.Join(dir, "theoph.csv"), strings.Replace(table, "2.84", "2.85", 1)) // same size, other bytes
	for file, want := range map[string]string{
		"theoph.csv":     "file_altered",
		"../outside.csv": "file_outside",
		"link.csv":       "file_outside",
		"missing.csv":    "file_not_declared",
	} {
		status, result, code := run(file)
		if status != "FAILED" || result != nil || !strings.HasPrefix(code, want+":") {
			t.Errorf("file %q: %s %v %q, want FAILED with %s and no result", file, status, result, code, want)
		}
		if strings.Contains(code, root) {
			t.Errorf("file %q: the error names a server path: %q", file, code)
		}
	}
}
