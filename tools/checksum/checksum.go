// Package checksum is the checksum.sha256 tool: the sha256 digest of a text.
// It is the smallest real in_process tool, deterministic and cheap, used as
// the reference of the invokeTool benchmark (bench/tools, P5).
package checksum

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/scidex/substrate/runtimes"
)

// Function is the name runtime_config.function gives it.
const Function = "checksum.sha256"

// Run hashes args.text.
func Run(_ context.Context, args json.RawMessage, _ func(runtimes.Progress)) (json.RawMessage, error) {
	var in struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, fmt.Errorf("args: %w", err)
	}
	sum := sha256.Sum256([]byte(in.Text))
	return json.Marshal(map[string]any{"sha256": hex.EncodeToString(sum[:]), "bytes": len(in.Text)})
}
