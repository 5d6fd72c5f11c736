package skills

import (
	"github.com/scidex/substrate/skills/pk"
	"github.com/scidex/substrate/skills/units"
)

// ncaRouteOf is the route class pk.nca analyses a route as: iv_bolus,
// iv_infusion, or extravascular for a route with an absorption phase; "" for
// another intravascular route, which it does not analyse.
func ncaRouteOf(r units.Route) string {
	switch {
	case r.Name == "iv_bolus":
		return pk.RouteIVBolus
	case r.Name == "iv_infusion":
		return pk.RouteIVInfusion
	case r.Intravascular:
		return ""
	}
	return pk.RouteExtravascular
}

// ncaRoutes are the route names pk.nca accepts.
func ncaRoutes() []string {
	var out []string
	for _, r := range units.Routes() {
		if ncaRouteOf(r) != "" {
			out = append(out, r.Name)
		}
	}
	return out
}

// ncaProfileFields are the fields of one profile, as its input schema
// describes them (at the top level for one profile, and in each of profiles).
var ncaProfileFields = []string{"subject", "times", "concentrations", "dose", "route", "lloq", "blq_rule", "duration", "tau", "dose_times", "lambda_z", "urine"}

// ncaProfileRequired are the fields every profile gives.
var ncaProfileRequired = []string{"times", "concentrations", "dose", "route"}

// ncaInputSchema is pk.nca's input schema: one profile's fields at the top
// level, or profiles, with the options.
func ncaInputSchema(example any) js {
	conc := def("concentration_unit")
	props := js{
		"subject":        str("A label for the profile, in the result and figure; distinct across profiles."),
		"times":          series("Sampling times after the single dose at t = 0: at least 3, ≥ 0, strictly increasing.", unitField(units.Time), 3, "minimum", 0),
		"concentrations": series("Measured concentrations, one per time, ≥ 0; molar units need molecular_weight.", conc, 3, "minimum", 0),
		"dose":           quantity("The single dose, > 0.", unitField(units.Mass), "exclusiveMinimum", 0),
		"route":          oneOfStrings("iv_bolus, iv_infusion (with duration), or a route with an absorption phase (analysed as extravascular).", ncaRoutes()),
		"duration":       quantity("Infusion duration; iv_infusion only.", unitField(units.Time), "exclusiveMinimum", 0),
		"tau":            quantity("Dosing interval: each dose's [d, d + tau] gets the steady-state parameters.", unitField(units.Time), "exclusiveMinimum", 0),
		"dose_times":     series("Dose times (each of dose), from 0, increasing; needs tau.", unitField(units.Time), 1, "minimum", 0),
		"lambda_z": closed("Your terminal fit (default: best fit, uniform).", js{
			"start": quantity("Manual range start; with end.", unitField(units.Time), "minimum", 0),
			"end":   quantity("Manual range end; with start.", unitField(units.Time), "minimum", 0),
			"exclude": array("Samples kept out of the fit, with reasons.", closed("An excluded sample.", js{
				"time":   quantity("The sample's time.", unitField(units.Time), "minimum", 0),
				"reason": with(str("Why it is excluded."), "minLength", 1),
			}, "time", "reason")),
			"weighting": oneOfStrings("Weights: uniform, 1/y, 1/y2.", pk.Weightings),
		}),
		"urine": closed("Urine collections (one per element): Ae, fe, CLr.", js{
			"starts":         series("Starts.", unitField(units.Time), 1, "minimum", 0),
			"ends":           series("Ends.", unitField(units.Time), 1, "minimum", 0),
			"volumes":        series("Volumes.", unitField(units.Volume), 1, "minimum", 0),
			"concentrations": series("Concentrations.", conc, 1, "minimum", 0),
		}, "starts", "ends", "volumes", "concentrations"),
		"lloq":     quantity("Lower limit of quantification, > 0; needs blq_rule.", conc, "exclusiveMinimum", 0),
		"blq_rule": oneOfStrings("What happens to values below lloq; only with lloq.", pk.BLQRules),
		"profiles": with(array("Several profiles with the same options, instead of one profile's fields; subjects distinct.",
			def("profile")), "minItems", 1),
		"auc_method":      oneOfStrings("AUC by linear trapezoids, or linear rising and log falling.", pk.AUCMethods),
		"lambda_z_points": with(integer("Fit lambda_z to the last n points (n ≥ 3) instead of the best adjusted R²."), "minimum", 3),
		"partial_aucs": array("Partial AUCs for every profile.", closed("AUC from start to end.", js{
			"start":         quantity("From.", unitField(units.Time), "minimum", 0),
			"end":           quantity("To, after start.", unitField(units.Time), "minimum", 0),
			"interpolation": oneOfStrings("Between samples; default auc_method.", pk.AUCMethods),
			"extrapolation": oneOfStrings("After Tlast: lambda_z (default) or none.", pk.Extrapolations),
		}, "start", "end")),
		"molecular_weight": quantity("Molecular weight: allows molar concentrations; adds molar exposure.", unitField(units.MolarMass), "exclusiveMinimum", 0),
		"figure":           boolean("Draw each profile's figure artifact (default true)."),
	}
	// The branches name their fields (true) and what they require; the
	// top-level properties validate them, so a refusal is reported once.
	one, several := js{}, js{"profiles": true}
	refs := js{}
	for _, f := range ncaProfileFields {
		one[f] = true
		refs[f] = js{"$ref": "#/properties/" + f}
	}
	// profiles excludes a profile's fields at the top level (false: absent).
	excluded := js{}
	for _, f := range ncaProfileRequired {
		excluded[f] = false
	}
	s := args("A non-compartmental analysis of one profile (its fields at the top level) or of profiles.", props, []string{"auc_method"}, example)
	s["anyOf"] = []any{
		js{"title": "one profile", "properties": one, "required": ncaProfileRequired},
		js{"title": "several profiles", "properties": several, "required": []string{"profiles"}},
	}
	s["dependentSchemas"] = js{"profiles": js{"properties": excluded}}
	// An infusion needs its duration, at the top level and in each profile.
	infusion := []any{js{"if": js{"properties": js{"route": js{"const": pk.RouteIVInfusion}}, "required": []string{"route"}},
		"then": js{"required": []string{"duration"}}}}
	s["allOf"] = infusion
	s["$defs"] = js{
		"profile":            with(closed("One concentration-time profile.", refs, ncaProfileRequired...), "allOf", infusion),
		"concentration_unit": unitField(units.AnyConcentration...),
	}
	return s
}

// ncaOutputSchema is pk.nca's result: the analysis of one profile (nca) or
// of each (profiles), the figures, and the fields every skill result has.
func ncaOutputSchema() js {
	u := func(desc, field string) string { return desc + " (" + pk.Units[field] + ")." }
	note := open("A coded note.", js{"code": plain("string"), "message": plain("string")}, "code", "message")
	terminal := open("The fit ln C = intercept − lambdaZ·t; null when lambda_z is not estimable.", js{
		"lambdaZ":    number(u("Terminal rate constant", "terminal.lambdaZ")),
		"intercept":  number("ln C at t = 0 (ln mg/L)."),
		"n":          integer("Points fitted."),
		"times":      array(u("Their times", "terminal.times"), js{"type": "number"}),
		"conc":       array(u("Their concentrations", "terminal.conc"), js{"type": "number"}),
		"r2":         number("R²."),
		"adjR2":      number("Adjusted R²."),
		"halfLife":   number(u("ln 2 / lambdaZ", "terminal.halfLife")),
		"span":       number("Half-lives the fit covers."),
		"selection":  oneOfStrings("Best adjusted R², lambda_z_points, or your manual range.", pk.Selections),
		"corrXY":     number("Correlation of t and ln C over the fit, negative when falling (Phoenix Corr_XY)."),
		"rangeStart": nullable("The manual range's start (h); null otherwise."),
		"rangeEnd":   nullable("The manual range's end (h); null otherwise."),
		"weighting":  oneOfStrings("The regression's weighting.", pk.Weightings),
		"excluded": array("Samples you kept out of the fit.", open("An excluded sample.", js{
			"time": number("Its time (h)."), "conc": number("Its concentration (mg/L)."), "reason": plain("string"),
		}, "time", "conc", "reason")),
	}, "lambdaZ", "intercept", "n", "times", "conc", "r2", "adjR2", "halfLife", "span", "selection", "corrXY", "rangeStart", "rangeEnd", "weighting", "excluded")
	terminal["type"] = []string{"object", "null"}
	const lz = "; null without lambda_z"
	props := js{
		"subject":           str("The profile's label."),
		"route":             oneOfStrings("The route class analysed.", pk.Routes),
		"duration":          nullable(u("The infusion's duration; null for other routes", "duration")),
		"cmaxD":             number(u("Cmax / dose", "cmaxD")),
		"tlag":              nullable(u("Time of the sample before the first positive one; extravascular only", "tlag")),
		"auclastD":          number(u("AUClast / dose", "auclastD")),
		"aucinfObsD":        nullable(u("aucinfObs / dose"+lz, "aucinfObsD")),
		"aucinfPredD":       nullable(u("aucinfPred / dose"+lz, "aucinfPredD")),
		"aumcPctExtrapObs":  nullable(u("Share of aumcinfObs extrapolated"+lz, "aumcPctExtrapObs")),
		"aumcPctExtrapPred": nullable(u("Share of aumcinfPred extrapolated"+lz, "aumcPctExtrapPred")),
		"vssObs":            nullable(u("MRTinf·CL, IV routes only"+lz, "vssObs")),
		"vssPred":           nullable(u("MRTinf·CL from predicted Clast, IV routes only"+lz, "vssPred")),
		"partialAUCs": array("The partial AUCs asked for, with their rules.", open("A partial AUC.", js{
			"start": number("From (h)."), "end": number("To (h)."), "auc": nullable(u("AUC over the interval; null when it cannot be computed (see note)", "partialAUCs.auc")),
			"interpolation": oneOfStrings("The rule between samples.", pk.AUCMethods), "extrapolation": oneOfStrings("The rule after Tlast.", pk.Extrapolations),
			"extrapolated": plain("boolean"), "note": plain("string"),
		}, "start", "end", "auc", "interpolation", "extrapolation", "extrapolated")),
		"intervals": array("Each dosing interval's parameters (with tau).", open("A dosing interval [start, end].", js{
			"start": number("Its dose time (h)."), "end": number("start + tau (h)."), "tau": number("The interval (h)."),
			"auctau": nullable(u("AUC over the interval", "intervals.auctau")), "cmax": nullable(u("Highest observed in the interval", "intervals.cmax")),
			"tmax": nullable("Its time (h)."), "cmin": nullable(u("Lowest observed in the interval", "intervals.cmin")),
			"ctau": nullable(u("Concentration at the interval's end", "intervals.ctau")), "cavg": nullable(u("AUCtau / tau", "intervals.cavg")),
			"fluctuationPct": nullable(u("100·(Cmax − Cmin)/Cavg", "intervals.fluctuationPct")), "swing": nullable("(Cmax − Cmin)/Cmin."),
			"clss": nullable(u("Dose / AUCtau", "intervals.clss")), "accumulationIndex": nullable("1/(1 − e^(−λz·tau))."),
			"extrapolated": plain("boolean"), "note": plain("string"),
		}, "start", "end", "tau", "auctau", "cmax", "tmax", "cmin", "ctau", "cavg", "fluctuationPct", "swing", "clss", "accumulationIndex", "extrapolated")),
		"urine": open("Urinary excretion (with urine).", js{
			"collections": array("Each collection.", open("A collection.", js{
				"start": number("h."), "end": number("h."), "midpoint": number("h."), "ae": number("Amount excreted (mg)."),
				"rate": number("Ae / duration (mg/h)."), "aeCumulative": number("Ae so far (mg)."),
			}, "start", "end", "midpoint", "ae", "rate", "aeCumulative")),
			"ae": number("Total amount excreted (mg)."), "fe": number("Ae / dose."), "start": number("First start (h)."), "end": number("Last end (h)."),
			"auc": nullable("Plasma AUC over the collections (mg.h/L)."), "clr": nullable("Renal clearance Ae/AUC (L/h)."), "note": plain("string"),
		}, "collections", "ae", "fe", "start", "end", "auc", "clr"),
		"method":           oneOfStrings("The AUC method.", pk.AUCMethods),
		"blqRule":          oneOfStrings("The BLQ rule, with lloq.", pk.BLQRules),
		"dose":             number(u("Dose", "dose")),
		"cmax":             number(u("Highest observed concentration", "cmax")),
		"tmax":             number(u("First time of Cmax", "tmax")),
		"tlast":            number(u("Last time with a positive concentration", "tlast")),
		"clast":            number(u("Concentration at tlast", "clast")),
		"c0":               number(u("Concentration at t = 0 (see imputations)", "c0")),
		"auclast":          number(u("AUC 0–tlast", "auclast")),
		"aucall":           number(u("AUC 0–last sample", "aucall")),
		"aumclast":         number(u("AUMC 0–tlast", "aumclast")),
		"mrtlast":          nullable(u("AUMClast / AUClast; null when AUClast is 0", "mrtlast")),
		"terminal":         terminal,
		"clastPred":        nullable(u("Fitted concentration at tlast"+lz, "clastPred")),
		"aucinfObs":        nullable(u("AUC 0–∞ from observed Clast"+lz, "aucinfObs")),
		"aucinfPred":       nullable(u("AUC 0–∞ from predicted Clast"+lz, "aucinfPred")),
		"aucPctExtrapObs":  nullable(u("Share of aucinfObs extrapolated"+lz, "aucPctExtrapObs")),
		"aucPctExtrapPred": nullable(u("Share of aucinfPred extrapolated"+lz, "aucPctExtrapPred")),
		"aumcinfObs":       nullable(u("AUMC 0–∞, observed"+lz, "aumcinfObs")),
		"aumcinfPred":      nullable(u("AUMC 0–∞, predicted"+lz, "aumcinfPred")),
		"mrtinfObs":        nullable(u("MRT 0–∞, observed"+lz, "mrtinfObs")),
		"mrtinfPred":       nullable(u("MRT 0–∞, predicted"+lz, "mrtinfPred")),
		"clObs":            nullable(u("Dose / aucinfObs, named by clName"+lz, "clObs")),
		"clPred":           nullable(u("Dose / aucinfPred"+lz, "clPred")),
		"vzObs":            nullable(u("Dose / (lambdaZ·aucinfObs), named by vzName"+lz, "vzObs")),
		"vzPred":           nullable(u("Dose / (lambdaZ·aucinfPred)"+lz, "vzPred")),
		"clName":           oneOfStrings("CL for an IV bolus, CL/F otherwise.", []string{"CL", "CL/F"}),
		"vzName":           oneOfStrings("Vz for an IV bolus, Vz/F otherwise.", []string{"Vz", "Vz/F"}),
		"imputations":      array("Rules applied to the data (C0, BLQ).", note),
		"warnings":         array("Results to read with care.", note),
	}
	required := make([]string, 0, len(props))
	for _, k := range sortedKeys(props) {
		if k != "blqRule" && k != "intervals" && k != "urine" {
			required = append(required, k)
		}
	}
	figure := str("The figure's ref; empty or absent without one.")
	figureURL := str("Its SVG's URL; empty or absent without one.")
	s := result("pk.nca's result, in the canonical units of units.", merge(common(NCALogicVersion), js{
		"nca":        js{"$ref": "#/$defs/nca", "description": "The analysis of the one profile."},
		"figure":     figure,
		"figure_url": figureURL,
		"profiles": array("Each profile's analysis, in order.", open("One profile's analysis.", js{
			"subject":    str("Its label."),
			"nca":        js{"$ref": "#/$defs/nca", "description": "Its analysis."},
			"molar":      js{"$ref": "#/$defs/molar", "description": "Its molar exposure, with molecular_weight."},
			"figure":     figure,
			"figure_url": figureURL,
		}, "nca")),
		"figures": texts("Every figure drawn."),
		"molar":   js{"$ref": "#/$defs/molar", "description": "The one profile's molar exposure, with molecular_weight."},
		"conventions": array("Where Phoenix WinNonlin and PKNCA differ, and which this follows.", open("A convention.", js{
			"topic": plain("string"), "phoenix": plain("string"), "pknca": plain("string"), "follows": plain("string"),
		}, "topic", "phoenix", "pknca", "follows")),
	}), resultRequired("figures", "conventions")...)
	s["oneOf"] = []any{js{"required": []string{"nca"}}, js{"required": []string{"profiles"}}}
	mq := quantityOut("A molar exposure.")
	s["$defs"] = js{"nca": open("The NCA of one profile; a null parameter could not be computed.", props, required...),
		"molar": open("Exposure in molar units: c(umol/L) = c(mg/L)·1000/MW.", js{
			"molecular_weight": mq, "cmax": mq, "clast": mq, "auclast": mq, "aumclast": mq, "aucinfObs": mq, "aumcinfObs": mq,
		}, "molecular_weight", "cmax", "clast", "auclast", "aumclast")}
	return s
}
