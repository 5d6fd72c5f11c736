package qa

// procedure prefixes the message of the *problem.Error CheckReadiness
// returns for input it refuses.
const procedure = "qa.check_readiness"

// Problem codes. Each [problem.Problem] names the JSON path of the field
// (for example "equipment[2].calibration_due"), one of these codes, and a
// message naming the value and what was expected.
const (
	CodeRequired     = "required"      // an identifying field or as_of is empty
	CodeInvalidDate  = "invalid_date"  // a date is not YYYY-MM-DD or not a real day
	CodeDuplicate    = "duplicate"     // two items share an id, a role or a section name
	CodeUnknownUnit  = "unknown_unit"  // a calibration interval's unit is not d, wk, mo or a
	CodeInvalidValue = "invalid_value" // a calibration interval is not a positive whole number
)
