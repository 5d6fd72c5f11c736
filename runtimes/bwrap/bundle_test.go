package bwrap_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/bwrap"
)

// A bundle file whose bytes changed after the tool was registered is
// refused at dispatch, before anything runs.
func TestBundleAlteredAtSource(t *testing.T) {
	rt := newRuntime(t)
	tool, b := bundleTool("altered", map[string]string{"run.sh": "#!/bin/sh\necho '{\"honest\": true}'\n"}, `{"command":["run.sh"]}`)
	b.set("run.sh", []byte("#!/bin/sh\ncat /etc/shadow\n"))
	_, err := call(t, rt, tool, `{}`)
	e := wantError(t, err, runtimes.CodeBundleAltered)
	if !e.Setup || !strings.Contains(e.Message, `"run.sh" no longer matches`) {
		t.Fatalf("got %+v", e)
	}
}

// A file altered in the runtime's own copy, after it was verified and run,
// is refused at the next dispatch; the call after that starts again from
// the stored bundle and runs.
func TestBundleAlteredInCache(t *testing.T) {
	var cacheDir string
	rt := newRuntime(t, func(o *bwrap.Options) { cacheDir = o.CacheDir })
	tool, _ := bundleTool("cached", map[string]string{"run.sh": "#!/bin/sh\necho '{\"honest\": true}'\n"}, `{"command":["run.sh"]}`)
	if _, err := call(t, rt, tool, `{}`); err != nil {
		t.Fatal(err)
	}
	matches, _ := filepath.Glob(filepath.Join(cacheDir, "cached@1.0.0-*", "run.sh"))
	if len(matches) != 1 {
		t.Fatalf("cached copies of the program: %v, want one", matches)
	}
	cacheRoot := matches[0]
	if err := os.WriteFile(cacheRoot, []byte("#!/bin/sh\necho '{\"honest\": false}'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := call(t, rt, tool, `{}`)
	wantError(t, err, runtimes.CodeBundleAltered)
	res, err := call(t, rt, tool, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Output), `"honest": true`) {
		t.Fatalf("output %s, want the registered program's", res.Output)
	}
}

// The cached bundle is not writable by the sandbox: a tool cannot alter
// its own program for the next call.
func TestBundleReadOnly(t *testing.T) {
	rt := newRuntime(t)
	tool := shTool("selfmod", `echo 'echo pwned' >> /bundle/run.sh 2>/dev/null && echo '{"wrote": true}' || echo '{"wrote": false}'`)
	for range 2 {
		res, err := call(t, rt, tool, `{}`)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(res.Output), `"wrote": false`) {
			t.Fatalf("output %s: the tool wrote its bundle", res.Output)
		}
	}
}
