package data

// procedure prefixes the message of the *problem.Error CheckConformance
// returns for a spec or options it refuses.
const procedure = "data.check_conformance"

// Problem codes for a refused Input. Each [problem.Problem] names the JSON
// path of the field (for example "spec.columns[2].type"), one of these
// codes, and a message naming the value and what was expected.
const (
	CodeRequired           = "required"             // a column or key without a name, a spec without columns
	CodeUnknownType        = "unknown_type"         // a type not in Types
	CodeDuplicateColumn    = "duplicate_column"     // two spec columns with one name
	CodeInvalidBound       = "invalid_bound"        // a min or max that is not a value of the column's type
	CodeBoundNotApplicable = "bound_not_applicable" // a min or max on a string or boolean column
	CodeMinGreaterThanMax  = "min_greater_than_max" // min > max
	CodeInvalidAllowed     = "invalid_allowed"      // an allowed value that is not of the column's type, or listed twice
	CodeUnknownKeyColumn   = "unknown_key_column"   // a unique key naming a column the spec does not declare
	CodeDuplicateKeyColumn = "duplicate_key_column" // a column twice in one key
	CodeEmptyKey           = "empty_key"            // a unique key with no columns
	CodeOutOfRange         = "out_of_range"         // max_violations or progress_every outside its range
	CodeSourceConflict     = "source_conflict"      // both csv text and a Source reader given
)
