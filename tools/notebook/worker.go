package notebook

import (
	"context"
	_ "embed"
	"encoding/json"
	"time"

	"github.com/scidex/substrate/runtimes"
)

// workerScript is worker/execute.py, the nbclient program the sandbox runs.
//
//go:embed worker/execute.py
var workerScript []byte

const workerFile = "execute.py"

// worker is the bundle: the script alone, its hash checked by the sandbox's
// cache before every run.
var worker = runtimes.OneFile{Path: workerFile, Content: workerScript}

// Sandbox runs a sandboxed program: the bwrap runtime (runtimes/bwrap)
// satisfies it (skills.Deps.Sandbox is one).
type Sandbox interface {
	Run(ctx context.Context, c *runtimes.Call) (*runtimes.Result, error)
}

// workerTool is the sandboxed tool the worker runs as: its bundle is the
// embedded script alone, no network (a network namespace of its own, with
// only its loopback, where the kernel's ZMQ sockets are), the caps below.
// Nothing of it comes from a caller.
func workerTool(wall time.Duration) *runtimes.Tool {
	return &runtimes.Tool{
		Ref: "tool:notebook.execute@" + Version, Name: "notebook.execute.worker", Version: Version, Runtime: "bwrap",
		Config: json.RawMessage(`{"command": ["` + workerFile + `"]}`),
		Caps:   runtimes.Caps{WallTime: wall, MemoryBytes: WorkerMemoryBytes, CPUCount: 1, Network: "deny"},
		Files:  []runtimes.File{worker.File()},
		Bundle: worker,
	}
}

// workerCell is a cell as the worker gets it: its type and source, nothing
// else of the artifact.
type workerCell struct {
	CellType string `json:"cell_type"`
	Source   string `json:"source"`
}

type workerInput struct {
	Cells            []workerCell `json:"cells"`
	CellTimeoutS     int          `json:"cell_timeout_s"`
	NotebookTimeoutS int          `json:"notebook_timeout_s"`
	CellOutputBytes  int          `json:"cell_output_bytes"`
	TotalOutputBytes int          `json:"total_output_bytes"`
	TracebackBytes   int          `json:"traceback_bytes"`
	AnswerBytes      int          `json:"answer_bytes"`
	KernelMemory     int          `json:"kernel_memory_bytes"`
}

// workerResult is one cell as the worker ran it.
type workerResult struct {
	Index          int               `json:"index"`
	CellType       string            `json:"cell_type"`
	Status         string            `json:"status"`
	ExecutionCount *int              `json:"execution_count"`
	Outputs        []json.RawMessage `json:"outputs"`
	Truncated      bool              `json:"truncated"`
	Ename          string            `json:"ename,omitempty"`
	Evalue         string            `json:"evalue,omitempty"`
	Traceback      string            `json:"traceback,omitempty"`
	Seconds        float64           `json:"seconds,omitempty"`
}

type workerOutput struct {
	Status           string         `json:"status"`
	Error            string         `json:"error"`
	Cells            []workerResult `json:"cells"`
	PythonVersion    string         `json:"python_version"`
	NbclientVersion  string         `json:"nbclient_version"`
	IpykernelVersion string         `json:"ipykernel_version"`
}

// runWorker runs the worker on req in box and reads its answer, checking it
// describes the cells it was given.
func runWorker(ctx context.Context, box Sandbox, callID string, req workerInput, progress func(runtimes.Progress)) (*workerOutput, error) {
	args, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	wall := time.Duration(req.NotebookTimeoutS)*time.Second + workerOverhead
	res, err := box.Run(ctx, &runtimes.Call{Tool: workerTool(wall), Args: args, ID: callID, Progress: progress})
	if err != nil {
		return nil, err
	}
	var out workerOutput
	if err := json.Unmarshal(res.Output, &out); err != nil {
		return nil, runtimes.Errorf("worker_output", false, "the notebook worker's answer is not what it should be: %v", err)
	}
	if len(out.Cells) != len(req.Cells) {
		return nil, runtimes.Errorf("worker_output", false, "the notebook worker described %d cells of %d", len(out.Cells), len(req.Cells))
	}
	for i, c := range out.Cells {
		if c.Index != i || c.CellType != req.Cells[i].CellType {
			return nil, runtimes.Errorf("worker_output", false, "the notebook worker's cell %d is numbered %d (%s)", i, c.Index, c.CellType)
		}
	}
	return &out, nil
}
