package mcp_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/mcp"
)

// tool.gpu.submit is listed, and on a server without GPUs (this one) a job
// is refused naming --gpus and the VRAM asked for, with nothing written.
func TestGPUSubmitTool(t *testing.T) {
	e := env(t, mcp.Options{})
	cs := mustConnect(t, e, apitest.Contributor(t, "ada"))
	before := e.Counts(t)
	res := call(t, cs, "tool.gpu.submit", map[string]any{"script": "#!/bin/sh\necho '{}'\n", "vram_gb": 12, "wall_time_min": 5})
	if !res.IsError || !strings.Contains(text(res), "--gpus 0") || !strings.Contains(text(res), "12 GB of VRAM") {
		t.Fatalf("tool.gpu.submit without GPUs: %s", text(res))
	}
	if after := e.Counts(t); !maps.Equal(before, after) {
		t.Errorf("the refusal wrote: %v -> %v", before, after)
	}
}
