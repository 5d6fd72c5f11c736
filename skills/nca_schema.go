package skills

import (
	"github.com/scidex/substrate/skills/pk"
	"github.com/scidex/substrate/skills/units"
)

// ncaRouteOf is the route class pk.nca analyses a route as: iv_bolus, or
// extravascular for a route with an absorption phase; "" for the other
// intravascular routes (an infusion), which it does not analyse.
func ncaRouteOf(r units.Route) string {
	switch {
	case r.Name == "iv_bolus":
		return pk.RouteIVBolus
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
var ncaProfileFields = []string{"subject", "times", "concentrations", "dose", "route", "lloq", "blq_rule"}

// ncaProfileRequired are the fields every profile gives.
var ncaProfileRequired = []string{"times", "concentrations", "dose", "route"}

// ncaInputSchema is pk.nca's input schema: one profile's fields at the top
// level, or profiles, with the options.
func ncaInputSchema(example any) js {
	conc := def("concentration_unit")
	props := js{
		"subject":        str("A label for the profile, in the result and figure; distinct across profiles."),
		"times":          series("Sampling times after the single dose at t = 0: at least 3, ≥ 0, strictly increasing.", unitField(units.Time), 3, "minimum", 0),
		"concentrations": series("Measured concentrations, one per time, ≥ 0.", conc, 3, "minimum", 0),
		"dose":           quantity("The single dose, > 0.", unitField(units.Mass), "exclusiveMinimum", 0),
		"route":          oneOfStrings("iv_bolus, or a route with an absorption phase (analysed as extravascular); no infusion.", ncaRoutes()),
		"lloq":           quantity("Lower limit of quantification, > 0; needs blq_rule.", conc, "exclusiveMinimum", 0),
		"blq_rule":       oneOfStrings("What happens to values below lloq; only with lloq.", pk.BLQRules),
		"profiles": with(array("Several profiles with the same options, instead of one profile's fields; subjects distinct.",
			def("profile")), "minItems", 1),
		"auc_method":      oneOfStrings("AUC by linear trapezoids, or linear rising and log falling.", pk.AUCMethods),
		"lambda_z_points": with(integer("Fit lambda_z to the last n points (n ≥ 3) instead of the best adjusted R²."), "minimum", 3),
		"figure":          boolean("Draw each profile's figure artifact (default true)."),
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
	s["$defs"] = js{
		"profile":            closed("One concentration-time profile.", refs, ncaProfileRequired...),
		"concentration_unit": unitField(units.Concentration),
	}
	return s
}

// ncaOutputSchema is pk.nca's result: the analysis of one profile (nca) or
// of each (profiles), the figures, and the fields every skill result has.
func ncaOutputSchema() js {
	u := func(desc, field string) string { return desc + " (" + pk.Units[field] + ")." }
	note := open("A coded note.", js{"code": plain("string"), "message": plain("string")}, "code", "message")
	terminal := open("The fit ln C = intercept − lambdaZ·t; null when lambda_z is not estimable.", js{
		"lambdaZ":   number(u("Terminal rate constant", "terminal.lambdaZ")),
		"intercept": number("ln C at t = 0 (ln mg/L)."),
		"n":         integer("Points fitted."),
		"times":     array(u("Their times", "terminal.times"), js{"type": "number"}),
		"conc":      array(u("Their concentrations", "terminal.conc"), js{"type": "number"}),
		"r2":        number("R²."),
		"adjR2":     number("Adjusted R²."),
		"halfLife":  number(u("ln 2 / lambdaZ", "terminal.halfLife")),
		"span":      number("Half-lives the fit covers."),
		"selection": oneOfStrings("Best adjusted R², or lambda_z_points.", pk.Selections),
	}, "lambdaZ", "intercept", "n", "times", "conc", "r2", "adjR2", "halfLife", "span", "selection")
	terminal["type"] = []string{"object", "null"}
	const lz = "; null without lambda_z"
	props := js{
		"subject":          str("The profile's label."),
		"route":            oneOfStrings("The route class analysed.", []string{pk.RouteExtravascular, pk.RouteIVBolus}),
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
		if k != "blqRule" {
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
			"figure":     figure,
			"figure_url": figureURL,
		}, "nca")),
		"figures": texts("Every figure drawn."),
	}), resultRequired("figures")...)
	s["oneOf"] = []any{js{"required": []string{"nca"}}, js{"required": []string{"profiles"}}}
	s["$defs"] = js{"nca": open("The NCA of one profile; a null parameter could not be computed.", props, required...)}
	return s
}
