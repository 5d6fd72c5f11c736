// Package skills is the catalog of scientific skills: deterministic,
// versioned procedures a scientist recognises (a non-compartmental analysis,
// a first-in-human dose projection, an SOP readiness check, a dataset
// conformance check), each run on the server as an in_process tool so that
// every run is a tool_call with its inputs, logic version and result.
//
// The procedures themselves live in their own packages (skills/pk,
// skills/tox, skills/qa, skills/data), pure Go with their golden tests,
// each refusing bad input with the one *problem.Error of skills/problem; the
// vocabulary layer (units, species, routes) is skills/units. This package
// ties them to the substrate: the references file every number is traced
// to (references.json) and its gate (Check: a skill intended for preview or
// available must depend only on verified references, or it is served as
// designed), the catalog (one Skill per procedure: its tool manifest, its
// skill artifact, its function), and Install, which registers each skill's
// tool and skill artifact at start. Each tool's input and output schemas
// (schema.go and the *_schema.go files) are built from the Go tables they
// describe (units, routes, species, vocabularies), so they list what the
// skill's Check accepts; Check stays the authority on everything else.
package skills
