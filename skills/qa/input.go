package qa

// Input is one SOP version and the evidence that it can be used. Dates are
// "YYYY-MM-DD" strings; an empty date means the evidence is missing (and the
// check that needs it fails), a malformed one is refused.
type Input struct {
	// SOPID and Version identify the document (for example "SOP-12" and "3");
	// training records must name both to count. Required.
	SOPID   string `json:"sop_id"`
	Version string `json:"version"`
	// Sections are the document's declared section headings. Headings are
	// compared after normalisation (see RequiredSections); extra sections are
	// allowed, a heading declared twice is refused.
	Sections []string `json:"sections"`
	// Roles are the responsibilities the SOP names, each with the people
	// assigned to it. Every assigned person must be trained on this version.
	Roles []Role `json:"roles"`
	// Equipment is every instrument the procedure uses.
	Equipment []Equipment `json:"equipment"`
	// TrainingRecords are the training records of the people involved, on
	// any SOP and version; only records on this SOP id and version count.
	TrainingRecords []TrainingRecord `json:"training_records"`
	// Approvals are the signatures on this version of the document.
	Approvals []Approval `json:"approvals"`
	// RequiredApprovalRoles are the roles that must approve this version;
	// empty means DefaultApprovalRoles. Compared after normalisation.
	RequiredApprovalRoles []string `json:"required_approval_roles,omitempty"`
	// EffectiveDate is the date the SOP takes effect.
	EffectiveDate string `json:"effective_date"`
	// ReviewDate is the date by which the SOP is due for periodic review.
	ReviewDate string `json:"review_date"`
	// AsOf is the date the readiness is judged on. Required: the wall clock
	// is never read, so a report can be reproduced.
	AsOf string `json:"as_of"`
}

// Role is a responsibility named by the SOP and the people assigned to it.
type Role struct {
	// Name of the role (for example "operator"). Required, unique.
	Name string `json:"name"`
	// People assigned to the role, by name as their training records spell it
	// (compared exactly after trimming surrounding spaces).
	People []string `json:"people"`
}

// Equipment is one instrument and its calibration status.
type Equipment struct {
	// ID of the instrument (for example "EQ-7"). Required, unique.
	ID string `json:"id"`
	// Name is a human label, shown in reasons when given.
	Name string `json:"name,omitempty"`
	// CalibrationRequired is nil or true for instruments that must be
	// calibrated (the default: evidence is never assumed away); false records
	// that this instrument needs none, and its check is not_applicable.
	CalibrationRequired *bool `json:"calibration_required,omitempty"`
	// LastCalibrated is the date of the last calibration.
	LastCalibrated string `json:"last_calibrated,omitempty"`
	// CalibrationDue is the date the next calibration is due (the calibration
	// is valid through this day).
	CalibrationDue string `json:"calibration_due,omitempty"`
	// CalibrationInterval is the calibration schedule; with LastCalibrated it
	// gives the due date when CalibrationDue is absent, and bounds it when
	// present.
	CalibrationInterval *Interval `json:"calibration_interval,omitempty"`
}

// Interval is a calibration schedule: a positive whole number of days ("d"),
// weeks ("wk"), months ("mo") or years ("a"), the UCUM codes. Months and years
// are calendar months and years as a schedule means them (2026-01-31 + 1 mo =
// 2026-02-28, clamped to the month's last day), not UCUM's mean month of
// 30.4375 days.
type Interval struct {
	Value int    `json:"value"`
	Unit  string `json:"unit"`
}

// TrainingRecord records that a person was trained on one version of an SOP.
type TrainingRecord struct {
	// Person, SOPID and Version are required.
	Person  string `json:"person"`
	SOPID   string `json:"sop_id"`
	Version string `json:"version"`
	// Date of the training; a record without one is not evidence.
	Date string `json:"date,omitempty"`
}

// Approval is one signature on the document.
type Approval struct {
	// Role in which the person signs (for example "quality_assurance") and
	// Person, both required.
	Role   string `json:"role"`
	Person string `json:"person"`
	// Date of the signature; an approval without one is not evidence.
	Date string `json:"date,omitempty"`
	// SignaturePresent records that the signature itself is on file; false
	// (or absent) means the approval is not evidence.
	SignaturePresent bool `json:"signature_present"`
}
