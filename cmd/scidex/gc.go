package main

import (
	"os"
	"runtime/debug"
)

// defaultGCPercent is the collector's target when GOGC is not set. Serving
// GraphQL allocates much short-lived memory (a field context per field of the
// response), and the live heap of a serving process is small, tens of MB: at
// Go's default of 100 the collector took about a quarter of the server's CPU
// on the Prism page; at 400 the page costs ~25 % less CPU (bench/prism,
// bench/RESULTS.md P1) for a peak heap of five times the live one.
const defaultGCPercent = 400

// tuneGC applies defaultGCPercent unless GOGC says otherwise.
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(defaultGCPercent)
	}
}
