package pk

// Result is the NCA of one profile, in canonical units: h, mg/L, mg,
// mg·h/L (AUC), mg·h²/L (AUMC), 1/h (λz), L/h (CL), L (Vz). Pointer fields are
// nil when they cannot be computed (those needing λz when it is not estimable;
// MRTlast when AUClast is 0); Warnings says why.
type Result struct {
	Subject string `json:"subject"`
	// Route and Method echo the calculation route: the route of
	// administration and the AUC method used.
	Route   string  `json:"route"`
	Method  string  `json:"method"`
	BLQRule string  `json:"blqRule,omitempty"`
	Dose    float64 `json:"dose"`

	// Duration echoes an infusion's duration (h); nil for the other routes.
	Duration *float64 `json:"duration"`

	// Cmax is the highest observed concentration and Tmax its first time;
	// CmaxD = Cmax/Dose.
	Cmax  float64 `json:"cmax"`
	CmaxD float64 `json:"cmaxD"`
	Tmax  float64 `json:"tmax"`
	// Tlag (extravascular only; nil otherwise) is the time of the sample
	// before the first positive concentration, 0 when that is the first.
	Tlag *float64 `json:"tlag"`
	// Tlast and Clast are the last time with a positive concentration and that concentration.
	Tlast float64 `json:"tlast"`
	Clast float64 `json:"clast"`
	// C0 is the concentration at t = 0 the integration starts from: observed,
	// assumed 0 (extravascular), or back-extrapolated (IV bolus); Imputations says which.
	C0 float64 `json:"c0"`

	// AUClast is ∫ C dt from 0 to Tlast; AUCall from 0 to the last sample
	// kept (a trailing zero adds the linear triangle after Tlast).
	AUClast float64 `json:"auclast"`
	AUCall  float64 `json:"aucall"`
	// AUClastD = AUClast/Dose.
	AUClastD float64 `json:"auclastD"`
	// AUMClast is ∫ t·C dt from 0 to Tlast.
	AUMClast float64 `json:"aumclast"`
	// MRTlast = AUMClast / AUClast (− duration/2 for an infusion).
	MRTlast *float64 `json:"mrtlast"`

	// Terminal is the λz fit; nil when λz is not estimable.
	Terminal *Terminal `json:"terminal"`

	// ClastPred = exp(Intercept − λz·Tlast), the fitted concentration at Tlast.
	ClastPred *float64 `json:"clastPred"`
	// AUCinfObs = AUClast + Clast/λz; AUCinfPred = AUClast + ClastPred/λz.
	AUCinfObs  *float64 `json:"aucinfObs"`
	AUCinfPred *float64 `json:"aucinfPred"`
	// AUCinfObsD = AUCinfObs/Dose; Pred likewise.
	AUCinfObsD  *float64 `json:"aucinfObsD"`
	AUCinfPredD *float64 `json:"aucinfPredD"`
	// AUCPctExtrapObs = 100·(AUCinfObs − AUClast)/AUCinfObs; Pred likewise.
	AUCPctExtrapObs  *float64 `json:"aucPctExtrapObs"`
	AUCPctExtrapPred *float64 `json:"aucPctExtrapPred"`
	// AUMCinfObs = AUMClast + Clast·Tlast/λz + Clast/λz²; Pred uses ClastPred.
	AUMCinfObs  *float64 `json:"aumcinfObs"`
	AUMCinfPred *float64 `json:"aumcinfPred"`
	// AUMCPctExtrapObs = 100·(AUMCinfObs − AUMClast)/AUMCinfObs; Pred likewise.
	AUMCPctExtrapObs  *float64 `json:"aumcPctExtrapObs"`
	AUMCPctExtrapPred *float64 `json:"aumcPctExtrapPred"`
	// MRTinfObs = AUMCinfObs/AUCinfObs, minus duration/2 for an infusion
	// (PKNCA mrt.iv.obs, Phoenix MRTINF_obs); Pred likewise.
	MRTinfObs  *float64 `json:"mrtinfObs"`
	MRTinfPred *float64 `json:"mrtinfPred"`
	// CLObs = Dose/AUCinfObs: CL for an IV bolus, CL/F for extravascular
	// (CLName says which); Pred likewise.
	CLObs  *float64 `json:"clObs"`
	CLPred *float64 `json:"clPred"`
	// VzObs = Dose/(λz·AUCinfObs): Vz for an IV bolus, Vz/F for extravascular
	// (VzName says which); Pred likewise.
	VzObs  *float64 `json:"vzObs"`
	VzPred *float64 `json:"vzPred"`
	// VssObs = MRTinfObs·CLObs, for IV routes only (nil extravascular); Pred likewise.
	VssObs  *float64 `json:"vssObs"`
	VssPred *float64 `json:"vssPred"`
	// CLName is "CL" or "CL/F"; VzName is "Vz" or "Vz/F".
	CLName string `json:"clName"`
	VzName string `json:"vzName"`

	// PartialAUCs are the requested partial AUCs (empty when none).
	PartialAUCs []PartialAUC `json:"partialAUCs"`
	// Intervals are the dosing intervals' parameters (with tau; else absent).
	Intervals []Interval `json:"intervals,omitempty"`
	// Urine is the urinary excretion (with urine collections; else absent).
	Urine *UrineResult `json:"urine,omitempty"`

	// Imputations states each rule applied to the data (C0 assumed or
	// back-extrapolated, BLQ values set to zero or excluded).
	Imputations []Note `json:"imputations"`
	// Warnings flags results to read with care (λz not estimable, more than
	// 20% of AUCinf extrapolated).
	Warnings []Note `json:"warnings"`
}

// Note is a coded remark on a result.
type Note struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Note and warning codes.
const (
	NoteC0Observed         = "c0_observed"
	NoteC0AssumedZero      = "c0_assumed_zero"
	NoteC0BackExtrapolated = "c0_back_extrapolated"
	NoteC0FirstObserved    = "c0_first_observed"
	NoteBLQZeroed          = "blq_set_to_zero"
	NoteBLQExcluded        = "blq_excluded"

	WarnLambdaZNotEstimable = "lambda_z_not_estimable"
	WarnExtrapolatedOver20  = "auc_extrapolated_over_20_percent"
)

// ExtrapolationLimitPct is the share of AUCinf above which an extrapolation is
// flagged: the EMA bioequivalence guideline (CPMP/EWP/QWP/1401/98 Rev. 1, 2010,
// §4.1.8) asks that AUC(0-t) cover at least 80% of AUC(0-∞).
const ExtrapolationLimitPct = 20.0

// Units gives the canonical unit (UCUM) of each numeric Result field, keyed by
// its JSON name, and of the Terminal fields under "terminal.".
var Units = map[string]string{
	"dose": "mg", "duration": "h", "cmaxD": "1/L", "tlag": "h", "auclastD": "h/L", "aucinfObsD": "h/L", "aucinfPredD": "h/L",
	"aumcPctExtrapObs": "%", "aumcPctExtrapPred": "%", "vssObs": "L", "vssPred": "L",
	"partialAUCs.auc": "mg.h/L", "intervals.auctau": "mg.h/L", "intervals.cmax": "mg/L", "intervals.cmin": "mg/L",
	"intervals.ctau": "mg/L", "intervals.cavg": "mg/L", "intervals.fluctuationPct": "%", "intervals.swing": "1",
	"intervals.clss": "L/h", "intervals.accumulationIndex": "1", "urine.ae": "mg", "urine.fe": "1", "urine.clr": "L/h",
	"urine.collections.rate": "mg/h", "terminal.corrXY": "1",
	"cmax": "mg/L", "tmax": "h", "tlast": "h", "clast": "mg/L", "c0": "mg/L",
	"auclast": "mg.h/L", "aucall": "mg.h/L", "aumclast": "mg.h2/L", "mrtlast": "h",
	"clastPred": "mg/L", "aucinfObs": "mg.h/L", "aucinfPred": "mg.h/L",
	"aucPctExtrapObs": "%", "aucPctExtrapPred": "%",
	"aumcinfObs": "mg.h2/L", "aumcinfPred": "mg.h2/L", "mrtinfObs": "h", "mrtinfPred": "h",
	"clObs": "L/h", "clPred": "L/h", "vzObs": "L", "vzPred": "L",
	"terminal.lambdaZ": "/h", "terminal.intercept": "1", "terminal.times": "h", "terminal.conc": "mg/L",
	"terminal.r2": "1", "terminal.adjR2": "1", "terminal.halfLife": "h", "terminal.span": "1",
}
