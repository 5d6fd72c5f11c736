package pk

// procedure prefixes the message of the *problem.Error this package
// returns for input it refuses.
const procedure = "pk"

// The problem codes this package reports. Each [problem.Problem] says where
// (a JSON path relative to the profile, such as `times[3]`, or
// `profiles[2].conc[0]` from [NCAMany]), which rule (one of these codes, such
// as `unsorted_times`), the value received when there is one, and what was
// expected. The caller prefixes the path with where the profile sits in its
// own request (for example `inputs.`).
const (
	CodeLengthMismatch        = "length_mismatch"
	CodeTooFewPoints          = "too_few_points"
	CodeNotFinite             = "not_finite"
	CodeNegativeTime          = "negative_time"
	CodeUnsortedTimes         = "unsorted_times"
	CodeDuplicateTime         = "duplicate_time"
	CodeNegativeConcentration = "negative_concentration"
	CodeNonPositiveDose       = "non_positive_dose"
	CodeRouteRequired         = "route_required"
	CodeUnknownRoute          = "unknown_route"
	CodeNonPositiveLLOQ       = "non_positive_lloq"
	CodeBLQRuleRequired       = "blq_rule_required"
	CodeUnknownBLQRule        = "unknown_blq_rule"
	CodeLLOQRequired          = "lloq_required"
	CodeAUCMethodRequired     = "auc_method_required"
	CodeUnknownAUCMethod      = "unknown_auc_method"
	CodeLambdaZPointsRange    = "lambda_z_points_out_of_range"
	CodeNoQuantifiable        = "no_quantifiable_concentration"
	CodeNoProfiles            = "no_profiles"
	CodeDuplicateSubject      = "duplicate_subject"
	CodeUnitRequired          = "unit_required"
	CodeUnitNotPrintable      = "unit_not_printable"
	CodeResultMissing         = "result_missing"
	CodeResultProfileMismatch = "result_profile_mismatch"
	CodeDurationRequired      = "duration_required"
	CodeDurationNotInfusion   = "duration_not_infusion"
	CodeNonPositive           = "not_positive"
	CodeTauRequired           = "tau_required"
	CodeBadDoseTimes          = "bad_dose_times"
	CodeLambdaZRange          = "bad_lambda_z_range"
	CodeUnknownWeighting      = "unknown_weighting"
	CodeExcludedNotSample     = "excluded_time_not_sampled"
	CodeExclusionReason       = "exclusion_reason_required"
	CodeBadInterval           = "bad_interval"
	CodeUnknownInterpolation  = "unknown_interpolation"
	CodeUnknownExtrapolation  = "unknown_extrapolation"
	CodeTooFewInRange         = "too_few_points_in_range"
	CodeTooMany               = "too_many"
)
