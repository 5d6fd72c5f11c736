package bwrap_test

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/runtimetest"
)

func TestConformance(t *testing.T) {
	rt := newRuntime(t)
	runtimetest.Run(t, runtimetest.Fixture{
		Runtime:   rt,
		Echo:      shTool("echo", "exec cat"),
		BadOutput: shTool("bad", `printf '{"value": "not a number"}'`),
		Sleep:     shTool("sleep", `echo '{"message": "sleeping"}' >&3; exec sleep 1000`),
		Huge:      shTool("huge", `printf '"'; head -c 5000000 /dev/zero | tr '\0' x; printf '"'`),
	})
}

// The tool runs as the unprivileged sandbox uid with no capability, in a
// clean environment, its cwd the writable run dir and the bundle read-only.
func TestSandboxView(t *testing.T) {
	rt := newRuntime(t)
	tool := shTool("view", `
cd /work && echo x > f && w=ok || w=fail
touch /bundle/x 2>/dev/null && b=writable || b=readonly
printf '{"uid": %s, "gid": %s, "capeff": "%s", "env": "%s", "cwd": "%s", "work": "%s", "bundle": "%s", "etc": "%s"}' \
  "$(id -u)" "$(id -g)" "$(grep CapEff /proc/self/status | cut -f2)" "$(env | sort | tr '\n' ' ')" "$(pwd)" "$w" "$b" "$(ls /etc | tr '\n' ' ')"`)
	res, err := call(t, rt, tool, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		UID, GID                            int
		CapEff, Env, Cwd, Work, Bundle, Etc string
	}
	if err := json.Unmarshal(res.Output, &v); err != nil {
		t.Fatalf("%s: %v", res.Output, err)
	}
	wantUID := os.Geteuid()
	if wantUID == 0 {
		wantUID = 65534
	}
	if v.UID != wantUID || v.GID == 0 {
		t.Errorf("the tool ran as uid %d gid %d, want uid %d and not gid 0", v.UID, v.GID, wantUID)
	}
	if v.CapEff != "0000000000000000" {
		t.Errorf("effective capabilities %s, want none", v.CapEff)
	}
	for _, e := range strings.Fields(v.Env) {
		name, _, _ := strings.Cut(e, "=")
		switch name {
		case "PATH", "HOME", "TMPDIR", "LANG", "SCIDEX_PROGRESS_FD", "PWD", "OLDPWD", "SHLVL", "_":
		default:
			t.Errorf("the sandbox's environment has %s, which the server did not put there", e)
		}
	}
	if v.Cwd != "/work" || v.Work != "ok" || v.Bundle != "readonly" {
		t.Errorf("cwd %q, /work %s, /bundle %s; want /work writable and the bundle read-only", v.Cwd, v.Work, v.Bundle)
	}
	if strings.Contains(v.Etc, "shadow") || strings.Contains(v.Etc, "ssh") {
		t.Errorf("the sandbox's /etc lists %s", v.Etc)
	}
	if res.PeakMemoryBytes == 0 || res.CPUTime == 0 {
		t.Errorf("peak memory %d and CPU time %s not recorded", res.PeakMemoryBytes, res.CPUTime)
	}
}

// Progress lines on fd 3 reach the caller in order; a malformed line is
// skipped and does not fail the call.
func TestProgress(t *testing.T) {
	rt := newRuntime(t)
	tool := shTool("progress", `
echo '{"fraction": 0.25, "message": "a quarter"}' >&3
echo 'not json' >&3
echo '{"fraction": 7, "message": "done", "data": {"n": 3}}' >&3
echo '{"ok": true}'`)
	var mu sync.Mutex
	var got []runtimes.Progress
	ctxRun := func() error {
		_, err := rt.Run(t.Context(), &runtimes.Call{Tool: tool, Args: json.RawMessage(`{}`), ID: "p",
			Progress: func(p runtimes.Progress) { mu.Lock(); got = append(got, p); mu.Unlock() }})
		return err
	}
	if err := ctxRun(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Message != "a quarter" || *got[0].Fraction != 0.25 || *got[1].Fraction != 1 || got[1].Data["n"] != float64(3) {
		b, _ := json.Marshal(got)
		t.Fatalf("progress %s, want the two valid reports, the second's fraction clamped to 1", b)
	}
}

// A non-zero exit is a tool error with the exit code and the end of stderr;
// output that is not JSON is bad_output.
func TestToolFailure(t *testing.T) {
	rt := newRuntime(t)
	_, err := call(t, rt, shTool("fails", `echo "no such gene: BRCA3" >&2; exit 3`), `{}`)
	e := wantError(t, err, runtimes.CodeToolError)
	if e.Setup || e.Details["exit_code"] != 3 || !strings.Contains(e.Details["stderr"].(string), "no such gene") {
		t.Fatalf("got %+v, want a tool error with exit code 3 and the stderr", e)
	}
	_, err = call(t, rt, shTool("notjson", `echo hello`), `{}`)
	wantError(t, err, runtimes.CodeBadOutput)
}

// A program bwrap cannot execute is a setup failure, told apart from the
// tool's own failure, and its message names no host path.
func TestSetupFailure(t *testing.T) {
	rt := newRuntime(t)
	// An interpreter that is not there: execvp fails inside the sandbox.
	tool, _ := bundleTool("noexec", map[string]string{"run.sh": "#!/opt/missing/interpreter\necho '{}'\n"}, `{"command":["run.sh"]}`)
	_, err := call(t, rt, tool, `{}`)
	e := wantError(t, err, runtimes.CodeSetupFailed)
	if !e.Setup || strings.Contains(e.Message, "/") {
		t.Fatalf("got %+v, want Setup and no path in the message", e)
	}
}

// Arguments far larger than a pipe's buffer reach the tool whole.
func TestLargeArgs(t *testing.T) {
	rt := newRuntime(t)
	big := `{"value": "` + strings.Repeat("y", 1<<20) + `"}`
	res, err := call(t, rt, shTool("wc", `printf '{"bytes": %s}' "$(wc -c | tr -d ' ')"`), big)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"bytes": ` + strconv.Itoa(len(big)) + `}`; string(res.Output) != want {
		t.Fatalf("output %s, want %s", res.Output, want)
	}
}
