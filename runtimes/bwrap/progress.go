package bwrap

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"

	"github.com/scidex/substrate/runtimes"
)

// maxProgressLine caps one progress report; a longer line is skipped.
const maxProgressLine = 64 << 10

// readProgress delivers the tool's progress reports: JSON lines such as
// {"fraction": 0.5, "message": "aligned 10 of 20", "data": {...}} written to
// fd 3. A line that is not such an object is skipped, and so is one longer
// than maxProgressLine: progress is advisory and must never fail a call. It
// returns at EOF, when the last process holding fd 3 has exited.
func readProgress(r io.Reader, deliver func(runtimes.Progress)) {
	br := bufio.NewReaderSize(r, 4096)
	var line []byte
	skipping := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !skipping {
			line = append(line, chunk...)
			if len(line) > maxProgressLine {
				line, skipping = line[:0], true
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if !skipping && len(bytes.TrimSpace(line)) > 0 {
			if p, ok := parseProgress(line); ok {
				deliver(p)
			}
		}
		line, skipping = line[:0], false
		if err != nil {
			return
		}
	}
}

func parseProgress(line []byte) (runtimes.Progress, bool) {
	var p runtimes.Progress
	if err := json.Unmarshal(line, &p); err != nil {
		return p, false
	}
	if p.Fraction != nil {
		f := min(max(*p.Fraction, 0), 1)
		p.Fraction = &f
	}
	return p, true
}
