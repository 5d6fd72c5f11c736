// Package chem is chem.sar_table's procedure: a medicinal chemist's first
// look at a series of compounds, each a SMILES with an activity (an IC50, a
// Ki...) in a molar unit.
//
// It is the first library skill (class B of ADR 0030): the chemistry is
// RDKit's, run by the worker script worker/sar_table.py, embedded in the
// binary, in the bwrap sandbox (RunWorker); everything a caller gives is
// checked here in Go before anything runs, and everything the worker answers
// is checked here after:
//
//   - Validate reads the input, refusing each unparsable SMILES with its
//     row index (CheckSMILES, an OpenSMILES syntax checker: balanced
//     branches and brackets, paired ring closures, known element symbols),
//     each activity in a unit that is not a molar concentration (with a
//     suggestion: "nm" is nanometres, "nM" is meant), and a series over the
//     caps (MaxCompounds, MaxSMILESBytes, MaxHeavyAtoms) naming the limit;
//   - the worker gets only what Validate built (WorkerInput), never the
//     caller's JSON, and no sandbox flag comes from input;
//   - Build turns the worker's descriptors into the table: pActivity
//     (−log10 of the molar activity), ligand efficiency (1.4·pActivity /
//     heavy atoms), Lipinski's and Veber's flags, and the sorted SAR table;
//   - SanitizeSVG rebuilds each structure drawing from an element and
//     attribute allow-list (no script, no foreignObject, no href, no on*
//     handler, no url() in a style) before Grid lays them out in the figure.
//
// Refusals are the one *problem.Error of skills/problem, with codes
// documented beside the rules that raise them.
package chem
