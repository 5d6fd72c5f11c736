package pk

// Convention is a point where Phoenix WinNonlin and PKNCA differ (or where a
// reader might expect them to), and the rule this package follows.
type Convention struct {
	Topic   string `json:"topic"`
	Phoenix string `json:"phoenix"`
	PKNCA   string `json:"pknca"`
	Follows string `json:"follows"`
}

// Conventions are stated in every pk.nca result. Sources: the Phoenix
// WinNonlin NCA user's guide (λz "best fit" and partial area rules) and the
// PKNCA documentation (half.life, pk.calc.aucint, pk.calc.tlag, mrt.iv).
var Conventions = []Convention{
	{Topic: "lambda_z_cmax",
		Phoenix: "the best-fit search excludes Cmax for extravascular and infusion doses but may include it for an IV bolus",
		PKNCA:   "Tmax (Cmax) is excluded from the half-life fit on every route unless allow.tmax.in.half.life = TRUE (default FALSE)",
		Follows: "PKNCA: Cmax is never among the best-fit or lambda_z_points points on any route; a manual lambda_z range includes it if it lies in the range"},
	{Topic: "lambda_z_infusion",
		Phoenix: "no point before the end of the infusion enters the best fit",
		PKNCA:   "points after Tmax, whatever the infusion's end",
		Follows: "both: points after Tmax and at or after the end of the infusion"},
	{Topic: "partial_auc_after_tlast",
		Phoenix: "a partial area ending after Tlast is extrapolated with lambda_z",
		PKNCA:   "aucint.inf.obs extrapolates with lambda_z from the observed Clast; aucint.last counts nothing after Tlast",
		Follows: "the caller's choice per interval: extrapolation lambda_z (default, Phoenix and aucint.inf.obs) or none (not computed)"},
	{Topic: "partial_auc_interpolation",
		Phoenix: "with linear-up/log-down a concentration inside a falling interval is interpolated log-linearly, otherwise linearly",
		PKNCA:   "interp.extrap.conc interpolates by the AUC method the same way",
		Follows: "both: the caller's interpolation per interval, default the AUC method"},
	{Topic: "mrt_infusion",
		Phoenix: "MRT = AUMC/AUC − Tinf/2",
		PKNCA:   "mrt.iv.obs = aumcinf.obs/aucinf.obs − duration/2",
		Follows: "both"},
	{Topic: "steady_state_volume",
		Phoenix: "Vss = MRTINF·CL for IV doses; Vz and CL from AUCtau at steady state (CLss = Dose/AUCtau)",
		PKNCA:   "vss = mrt·cl for IV doses; cl.obs from AUCinf",
		Follows: "Vss = MRTinf·CL from AUCinf (single-dose definitions); each dosing interval reports CLss = Dose/AUCtau separately"},
}
