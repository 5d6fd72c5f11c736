// Package refdata is the build's one copy of the reference data files the
// skills read and the references file names (copies of ../shared/data,
// unchanged): FDA 2005 Table 1, which skills/units parses for every skill,
// and the theophylline data set. skills.CheckFiles hashes each against its
// references entry, so the bytes checked are the bytes used.
package refdata

import "embed"

// FS holds the files, at its root by name (fda2005_table1.csv).
//
//go:embed *.csv
var FS embed.FS
