package quietlog

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// Info is dropped, warnings pass, and a logger derived with With or
// WithGroup stays as quiet (the plain embedding this replaces did not).
func TestWarn(t *testing.T) {
	var buf bytes.Buffer
	log := Warn(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	log.Info("chatty")
	log.With("k", "v").Info("chatty with")
	log.WithGroup("g").Info("chatty group")
	log.With("k", "v").Warn("kept")
	out := buf.String()
	if strings.Contains(out, "chatty") {
		t.Fatalf("info got through:\n%s", out)
	}
	if !strings.Contains(out, "kept") || !strings.Contains(out, "k=v") {
		t.Fatalf("the warning (with its attribute) is missing:\n%s", out)
	}
}
