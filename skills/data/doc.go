// Package data implements the data.check_conformance skill: it checks a
// dataset's table, CSV text with a header row, against a declared column
// specification and reports every violation with its data row, CSV line and
// column.
//
// The specification (Spec) declares each column's name, type (string,
// integer, number, boolean, date), unit, range, whether it is required, its
// allowed values, and the table's unique keys (one column or several). The
// units a dataset declares for its columns (Input.DeclaredUnits, from the
// dataset artifact's metadata) must equal the spec's exactly, as UCUM symbols
// are case-sensitive.
//
// The contract, and why:
//
//   - The table is streamed with encoding/csv, row by row, so a large dataset
//     is checked in constant memory apart from the unique-key index. Quoted
//     fields (with commas, quotes and newlines inside), CRLF line endings and a
//     leading UTF-8 byte order mark are read as the CSV format (RFC 4180)
//     means them.
//   - Bad data is a violation, never a crash and never an error: a ragged row,
//     a stray quote, a missing column, a value of the wrong type are each
//     reported and the check goes on. Only a malformed spec or options is
//     refused (a *problem.Error with a JSON path and code per problem), and then
//     nothing is read.
//   - Every violation is counted; the first MaxViolations are listed, so the
//     report stays a size a person and a tool-call record can hold, and says
//     whether it was truncated.
//   - It is long-running work for the job queue: it reports progress every
//     ProgressEvery rows and stops promptly, returning ctx.Err(), when its
//     context ends.
//
// Cell rules are strict because a conformance check exists to catch what a
// lenient reader would let through: cells are not trimmed, an empty cell is a
// missing value (a violation only in a required column, and otherwise exempt
// from the other checks), and allowed values compare the raw text.
package data
