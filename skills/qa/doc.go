// Package qa implements the qa.check_readiness skill: an SOP readiness
// checklist a quality-assurance reviewer would run before an SOP is used.
//
// Given one SOP version's declared sections, roles and the people assigned to
// them, equipment with calibration dates, training records, approvals, and its
// effective and review dates, CheckReadiness reports every check as passed,
// failed or not_applicable with a sentence saying why, and an overall status
// that is "ready" only when no check failed.
//
// The contract, and why:
//
//   - Missing evidence fails; it is never assumed. Equipment with no
//     calibration date, a person with no training record on this exact
//     version, an approval without a signature or a date, an SOP without an
//     effective or review date: each is a failed check with the reason. A
//     readiness check that passes on silence would certify what nobody saw.
//   - Identifying fields are required, evidential fields are not. A field that
//     says what an item is (the SOP's id and version, an equipment id, a role
//     name, a training record's person and SOP, an approval's role and person)
//     is required: input without it is refused with a problem naming its JSON
//     path, because nothing can be checked against an item that has no name.
//     A field that is evidence (a date, a signature) may be absent: its absence
//     is what the check reports.
//   - Dates are ISO 8601 calendar dates (YYYY-MM-DD) and the check date as_of
//     is required: the wall clock is never read, so the same input gives the
//     same report on any day. A malformed date is refused, never read as absent.
//   - Nothing is computed on bad input: CheckReadiness validates everything
//     first and returns a *problem.Error listing every problem.
//
// The required sections are RequiredSections; the roles whose approval is
// required default to DefaultApprovalRoles. Both are documented where they are
// declared, with their sources.
package qa
