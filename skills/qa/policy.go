package qa

import "strings"

// LogicVersion is the version of the checks this package runs; the lead
// records it as the tool call's check_logic_version. Bump it whenever a check
// changes what it passes or fails.
const LogicVersion = "qa.check_readiness/1"

// RequiredSections are the section headings every SOP must declare, in the
// order reported. No regulation fixes an SOP's headings; this set is the
// content that EPA QA/G-6 "Guidance for Preparing Standard Operating
// Procedures" (EPA/600/B-07/001, April 2007, §2.4 and its example SOPs) and
// the usual GMP templates written to EU GMP Part I Chapter 4 expect every
// procedure to carry, one heading per question a reader or inspector asks:
//
//   - purpose: why the procedure exists;
//   - scope: what it applies to and what it does not;
//   - responsibilities: who does each step (the roles below are its content);
//   - definitions: the terms and abbreviations used;
//   - procedure: the steps themselves;
//   - records: what is recorded, where, and for how long;
//   - references: the documents it relies on;
//   - revision_history: what changed in each version, so training can be
//     matched to a version.
//
// Headings are compared after normalisation: lower case, surrounding spaces
// trimmed, runs of spaces, hyphens and underscores made one underscore, so
// "Revision History" and "revision-history" both declare revision_history.
var RequiredSections = []string{
	"purpose", "scope", "responsibilities", "definitions",
	"procedure", "records", "references", "revision_history",
}

// DefaultApprovalRoles are the roles whose signatures a version needs when
// the input names none: the author who wrote it, a technical reviewer, and
// quality assurance, the independent approval EU GMP Part I §4.3 asks of
// documents ("approved, signed and dated by appropriate and authorised
// persons") and a QA unit's responsibility under 21 CFR 211.22. Approval
// roles are normalised like section headings.
var DefaultApprovalRoles = []string{"author", "reviewer", "quality_assurance"}

// normalize is the comparison form of a section heading or role name.
func normalize(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	var b strings.Builder
	sep := false
	for _, r := range s {
		if r == ' ' || r == '-' || r == '_' || r == '\t' {
			sep = true
			continue
		}
		if sep && b.Len() > 0 {
			b.WriteByte('_')
		}
		sep = false
		b.WriteRune(r)
	}
	return b.String()
}
