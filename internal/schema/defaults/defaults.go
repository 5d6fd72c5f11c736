// Package defaults holds the schema documents of the default artifact types
// (hypothesis, paper, wiki_page, tool, tool_call, …), one JSON file per type,
// embedded in the binary.
//
// The schema registry seeds these documents on migrate and the GraphQL
// generator reads them to produce the typed subtypes, so each file is the
// single source of truth for its type. README.md in this directory specifies
// the document format; the tests here check every document against it.
package defaults

import "embed"

// FS holds one schema document per default type, named "<type>.json" at its
// root. Nothing else is embedded, so fs.Glob(FS, "*.json") lists the types.
//
//go:embed *.json
var FS embed.FS
