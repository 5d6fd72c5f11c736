package model

import (
	"context"
	"time"
)

// SignalSummary is an artifact's signals, aggregated. Its calibration history is
// read only when a client asks for it (CalibrationFunc).
type SignalSummary struct {
	Kinds           []*SignalAggregate
	Vote            *VoteSummary
	CalibrationFunc func(ctx context.Context) ([]*CalibrationPoint, *float64, error)
}

// CalibrationPoint is one forecast; Forecaster resolves from ForecasterID.
type CalibrationPoint struct {
	ForecasterID string
	Probability  float64
	At           time.Time
	BrierScore   *float64
}
