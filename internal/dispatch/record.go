package dispatch

import (
	"encoding/json"
	"time"

	"github.com/scidex/substrate/runtimes"
)

// CallType is the artifact type of tool calls: the ledger.
const CallType = "tool_call"

// Statuses of a tool call (tool_call.content.status).
const (
	StatusQueued    = "queued"
	StatusRunning   = "running"
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
)

// Events a call emits, besides the budget debit.
const (
	EventQueued    = "tool_call.queued"
	EventStarted   = "tool_call.started"
	EventProgress  = "tool_call.progress"
	EventCompleted = "tool_call.completed"
	EventFailed    = "tool_call.failed"
	EventCancelled = "tool_call.cancelled"
	EventDebited   = "agent.budget_debited"
)

// record is a tool_call's content: the ledger entry of one call.
type record struct {
	Tool              string          `json:"tool"`
	ToolName          string          `json:"tool_name"`
	ToolVersion       string          `json:"tool_version"`
	Args              json.RawMessage `json:"args"`
	Status            string          `json:"status"`
	Result            json.RawMessage `json:"result,omitempty"`
	ResultRef         string          `json:"result_ref,omitempty"`
	Error             *callError      `json:"error,omitempty"`
	DurationMS        *int64          `json:"duration_ms,omitempty"`
	PeakMemoryBytes   *int64          `json:"peak_memory_bytes,omitempty"`
	CPUMS             *int64          `json:"cpu_ms,omitempty"`
	CostUSD           *float64        `json:"cost_usd,omitempty"`
	CostEstimateUSD   *float64        `json:"cost_estimate_usd,omitempty"`
	InputsHash        string          `json:"inputs_hash"`
	CheckLogicVersion string          `json:"check_logic_version,omitempty"`
	ResultArtifactID  string          `json:"result_artifact_id,omitempty"`
	OutputViolations  []violation     `json:"output_violations"`
	JobID             string          `json:"job_id,omitempty"`
	Runtime           string          `json:"runtime"`
	Async             bool            `json:"async,omitempty"`
	Attempt           int             `json:"attempt,omitempty"`
	Worker            string          `json:"worker,omitempty"`
	SkillRun          *SkillRun       `json:"skill_run,omitempty"`
	Cached            bool            `json:"cached,omitempty"`
	Progress          *progress       `json:"progress,omitempty"`
	QueuedAt          string          `json:"queued_at,omitempty"`
	StartedAt         string          `json:"started_at,omitempty"`
	FinishedAt        string          `json:"finished_at,omitempty"`
	// ExpiresAt is when a call waiting on outside work (a work packet) fails
	// if nobody has done the work (SortableStamp, so it sorts as text).
	ExpiresAt string `json:"expires_at,omitempty"`
}

type callError struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Setup   bool           `json:"setup,omitempty"`
	Details map[string]any `json:"details,omitempty"`
}

type violation struct {
	Path       string `json:"path"`
	Constraint string `json:"constraint"`
	Message    string `json:"message"`
}

type progress struct {
	Fraction *float64 `json:"fraction,omitempty"`
	Message  string   `json:"message,omitempty"`
}

// Stamp writes t as the ledger's records do (RFC 3339, UTC).
func Stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// finished fills in a record's outcome.
func (r *record) finished(start, end time.Time, res *runtimes.Result, cost float64) {
	d := end.Sub(start).Milliseconds()
	r.DurationMS = &d
	r.FinishedAt = Stamp(end)
	r.CostUSD = &cost
	if res != nil {
		if res.PeakMemoryBytes > 0 {
			r.PeakMemoryBytes = &res.PeakMemoryBytes
		}
		if res.CPUTime > 0 {
			ms := res.CPUTime.Milliseconds()
			r.CPUMS = &ms
		}
	}
}

func failure(e *runtimes.Error) *callError {
	return &callError{Code: e.Code, Message: e.Message, Setup: e.Setup, Details: e.Details}
}
