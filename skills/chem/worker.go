package chem

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"time"

	"github.com/scidex/substrate/runtimes"
)

// workerScript is worker/sar_table.py, the RDKit program the sandbox runs.
//
//go:embed worker/sar_table.py
var workerScript []byte

// worker is the bundle: the script alone.
var worker = runtimes.OneFile{Path: workerFile, Content: workerScript}

// WorkerSHA256 is the script's hash: the bundle's one file, checked by the
// sandbox's cache before every run.
var WorkerSHA256 = worker.File().SHA256

// The worker's sandbox caps: RDKit's import alone takes some 150 MB; the
// maximum common substructure search stops itself at 20 s (MCS_TIMEOUT_S).
const (
	WorkerWallTime    = 90 * time.Second
	WorkerMemoryBytes = 1 << 30
)

// workerFile is the script's name in its bundle.
const workerFile = "sar_table.py"

// Sandbox runs a sandboxed program: the bwrap runtime (runtimes/bwrap)
// satisfies it.
type Sandbox interface {
	Run(ctx context.Context, c *runtimes.Call) (*runtimes.Result, error)
}

// WorkerTool is the sandboxed tool the worker runs as: its bundle is the
// embedded script alone, its command that script, no network, the caps
// above. Nothing of it comes from a caller.
func WorkerTool(version string) *runtimes.Tool {
	return &runtimes.Tool{
		Ref: "tool:chem.sar_table@" + version, Name: "chem.sar_table.worker", Version: version, Runtime: "bwrap",
		Config: json.RawMessage(`{"command": ["` + workerFile + `"]}`),
		Caps:   runtimes.Caps{WallTime: WorkerWallTime, MemoryBytes: WorkerMemoryBytes, CPUCount: 1, Network: "deny"},
		Files:  []runtimes.File{worker.File()},
		Bundle: worker,
	}
}

// WorkerInput is what the worker reads on stdin, built by Request from a
// validated series.
type WorkerInput struct {
	Compounds    []WorkerCompound `json:"compounds"`
	Core         string           `json:"core,omitempty"`
	CoreIsSMARTS bool             `json:"core_is_smarts,omitempty"`
	// Draw are the indices of the compounds to draw.
	Draw []int `json:"draw"`
}

// WorkerCompound is one structure for the worker.
type WorkerCompound struct {
	SMILES string `json:"smiles"`
}

// WorkerOutput is the worker's answer.
type WorkerOutput struct {
	RDKitVersion string            `json:"rdkit_version"`
	InChISource  *string           `json:"inchi_source"`
	Compounds    []WorkerResult    `json:"compounds"`
	Core         WorkerCore        `json:"core"`
	RGroups      WorkerRGroups     `json:"rgroups"`
	SVG          map[string]string `json:"svg"`
}

// WorkerResult is one structure's descriptors, as RDKit computed them.
type WorkerResult struct {
	Index           int     `json:"index"`
	OK              bool    `json:"ok"`
	Error           string  `json:"error,omitempty"`
	CanonicalSMILES string  `json:"canonical_smiles"`
	InChI           *string `json:"inchi"`
	InChIKey        *string `json:"inchikey"`
	Formula         string  `json:"formula"`
	HeavyAtoms      int     `json:"heavy_atoms"`
	MW              float64 `json:"mw"`
	ExactMW         float64 `json:"exact_mw"`
	CLogP           float64 `json:"clogp"`
	TPSA            float64 `json:"tpsa"`
	HBD             int     `json:"hbd"`
	HBA             int     `json:"hba"`
	NHOHCount       int     `json:"nhoh_count"`
	NOCount         int     `json:"no_count"`
	RotatableBonds  int     `json:"rotatable_bonds"`
	Rings           int     `json:"rings"`
	AromaticRings   int     `json:"aromatic_rings"`
	FractionCSP3    float64 `json:"fraction_csp3"`
}

// WorkerCore is the core the decomposition used.
type WorkerCore struct {
	Source    *string `json:"source"`
	SMARTS    *string `json:"smarts"`
	CoreAtoms int     `json:"core_atoms"`
	TimedOut  bool    `json:"timed_out"`
	Error     string  `json:"error,omitempty"`
}

// WorkerRGroups is the R-group decomposition: Core and R1..Rn as SMILES per
// matched compound.
type WorkerRGroups struct {
	Labels []string `json:"labels"`
	Rows   []struct {
		Index  int               `json:"index"`
		Groups map[string]string `json:"groups"`
	} `json:"rows"`
	Unmatched []int `json:"unmatched"`
}

// Request is the worker's input for a validated series: its structures,
// its core, and which to draw (figure: the first MaxFigure of order).
func Request(in *Input, order []int) WorkerInput {
	w := WorkerInput{Core: in.Core, CoreIsSMARTS: in.CoreIsSMARTS, Draw: []int{}}
	for _, c := range in.Compounds {
		w.Compounds = append(w.Compounds, WorkerCompound{SMILES: c.SMILES})
	}
	if in.Figure {
		for _, i := range order {
			if len(w.Draw) == MaxFigure {
				break
			}
			w.Draw = append(w.Draw, i)
		}
	}
	return w
}

// RunWorker runs the worker on req in box, passing its progress on, and
// reads its answer, checking it describes the structures it was given.
func RunWorker(ctx context.Context, box Sandbox, version, callID string, req WorkerInput, progress func(runtimes.Progress)) (*WorkerOutput, error) {
	args, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	res, err := box.Run(ctx, &runtimes.Call{Tool: WorkerTool(version), Args: args, ID: callID, Progress: progress})
	if err != nil {
		return nil, err
	}
	var out WorkerOutput
	dec := json.NewDecoder(bytes.NewReader(res.Output))
	if err := dec.Decode(&out); err != nil {
		return nil, runtimes.Errorf("worker_output", false, "the RDKit worker's answer is not what it should be: %v", err)
	}
	if len(out.Compounds) != len(req.Compounds) {
		return nil, runtimes.Errorf("worker_output", false, "the RDKit worker described %d structures of %d", len(out.Compounds), len(req.Compounds))
	}
	for i, c := range out.Compounds {
		if c.Index != i {
			return nil, runtimes.Errorf("worker_output", false, "the RDKit worker's structure %d is numbered %d", i, c.Index)
		}
	}
	return &out, nil
}
