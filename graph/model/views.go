package model

import (
	"time"

	"github.com/scidex/substrate/internal/store"
)

// LeaderboardEntry is one place on a leaderboard; its artifact (ArtifactPK)
// or forecaster (ActorID) is loaded when asked for, batched per page.
type LeaderboardEntry struct {
	Rank       int
	Score      float64
	Count      int
	ArtifactPK int64
	ActorID    string
	Wins       *int
	Losses     *int
	Draws      *int
	// Art is the artifact, when the page loaded it ahead (the query asked).
	Art *store.Artifact
}

// BrierPoint is one forecast of a calibration trace; Forecaster resolves
// from ForecasterID.
type BrierPoint struct {
	ForecasterID      string
	Probability       float64
	At                time.Time
	BrierScore        *float64
	RunningBrierScore *float64
}
