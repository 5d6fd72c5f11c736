package skills

import (
	"fmt"

	"github.com/scidex/substrate/skills/tox"
	"github.com/scidex/substrate/skills/units"
)

// fihInputSchema is tox.fih_dose_projection's input schema.
func fihInputSchema(example any) js {
	species := tox.AllowedSpecies()
	mass := def("mass_unit")
	study := closed("One animal study.", js{
		"species":     oneOfStrings(fmt.Sprintf("An FDA 2005 Table 1 animal, or %q (outside the table: route body_weight only).", tox.SpeciesOther), species),
		"noael":       quantity("The NOAEL as a dose per body mass (mg/kg) or per body surface area (mg/m², = km × mg/kg; a Table 1 species), > 0.", unitField(units.DosePerBodyMass, units.DosePerArea), "exclusiveMinimum", 0),
		"body_weight": quantity("The animals' weight, > 0; needed by route body_weight, near Table 1's for the others.", mass, "exclusiveMinimum", 0),
	}, "species", "noael")
	s := args("A first-in-human starting dose from animal NOAELs (FDA 2005).", js{
		"studies":              with(array("The animal studies.", study), "minItems", 1, "maxItems", tox.MaxStudies),
		"route":                oneOfStrings("NOAEL to human equivalent dose by Table 1's divide-by factor, the km ratio, the body-weight exponent 0.33, or mg/kg one to one (mg_per_kg: only for a protein over 100 kDa given intravascularly, see test_article).", tox.Routes()),
		"safety_factor":        with(number(fmt.Sprintf("Divides the HED, ≥ 1 (default %g); below it needs safety_factor_reason.", tox.DefaultSafetyFactor)), "minimum", 1),
		"safety_factor_reason": str(fmt.Sprintf("Why the safety factor is below %g.", tox.DefaultSafetyFactor)),
		"human_weight":         quantity("The adult's weight for the dose in mg (0 or absent: 60 kg); near 60 kg unless route body_weight.", mass, "minimum", 0),
		"species":              oneOfStrings("Base the MRSD on this study species instead of the most sensitive; among the studies.", species),
		"test_article": closed("The test article, for the guidance's exception: a protein over 100 kDa given intravascularly scales by mg/kg (route mg_per_kg).", js{
			"modality":         oneOfStrings("What it is.", tox.Modalities()),
			"molecular_weight": quantity("Its molecular weight, > 0 (g/mol = Da, kg/mol = kDa); required for a protein.", unitField(units.MolarMass), "exclusiveMinimum", 0),
			"administration":   oneOfStrings("How it is given; required for a protein (iv_bolus and iv_infusion are intravascular).", routeNames()),
		}, "modality"),
	}, []string{"studies", "route"}, example)
	s["$defs"] = js{"mass_unit": unitField(units.Mass)}
	return s
}

// fihOutputSchema is tox.fih_dose_projection's result.
func fihOutputSchema() js {
	code := open("A coded warning.", js{"code": plain("string"), "message": plain("string")}, "code", "message")
	study := open("One study's HED.", js{
		"index":           plain("integer"),
		"species":         plain("string"),
		"noael_mg_per_kg": number("NOAEL (mg/kg)."),
		"body_weight_kg":  number("Body weight (kg), when given."),
		"noael_mg_per_m2": number("NOAEL as given per body surface area (mg/m²), when it was."),
		"factor":          number("HED / NOAEL by the route."),
		"hed_mg_per_kg":   number("Human equivalent dose (mg/kg)."),
		"calculation":     plain("string"),
	}, "index", "species", "noael_mg_per_kg", "factor", "hed_mg_per_kg", "calculation")
	row := open("A Table 1 row read.", js{
		"species": plain("string"),
		"columns": texts("The columns read."),
		"status":  oneOfStrings("Its status.", []string{string(units.Verified), string(units.ToVerify)}),
	}, "species", "columns", "status")
	ref := open("A document or file relied on.", js{
		"id":       plain("string"),
		"document": plain("string"),
		"version":  plain("string"),
		"url":      plain("string"),
		"sha256":   plain("string"),
		"status":   oneOfStrings("Whether it is verified.", []string{Verified, ToVerify}),
	}, "id", "document", "version", "status")
	projection := open("The projection in mg/kg, kg and mg, unrounded.", js{
		"skill":                   plain("string"),
		"logic_version":           with(str("Its logic version."), "const", tox.LogicVersion),
		"route":                   oneOfStrings("The route used.", tox.Routes()),
		"route_formula":           plain("string"),
		"route_reason":            str("Why the route applies: named by the caller, and for mg_per_kg the guidance's exception the test article meets."),
		"studies":                 array("Each study's HED, in order.", study),
		"chosen_study":            integer("Index of the study the MRSD is based on."),
		"chosen_species":          plain("string"),
		"choice_reason":           plain("string"),
		"hed_mg_per_kg":           number("Its HED (mg/kg)."),
		"safety_factor":           number("The safety factor applied."),
		"safety_factor_defaulted": boolean("True when none was given."),
		"safety_factor_reason":    str("The reason given for a low one."),
		"mrsd_mg_per_kg":          number("MRSD = HED / safety factor (mg/kg)."),
		"human_weight_kg":         number("The adult's weight (kg)."),
		"mrsd_mg":                 number("MRSD for that weight (mg)."),
		"table_rows":              with(array("Table 1 rows used; null when none.", row), "type", []string{"array", "null"}),
		"warnings":                array("What a reader must not miss.", code),
		"decision":                plain("string"),
		"not_computed":            plain("string"),
		"checked_against":         plain("string"),
		"references":              array("The guidance and the table.", ref),
	}, "skill", "logic_version", "route", "route_formula", "route_reason", "studies", "chosen_study", "chosen_species", "choice_reason", "hed_mg_per_kg",
		"safety_factor", "safety_factor_defaulted", "mrsd_mg_per_kg", "human_weight_kg", "mrsd_mg", "table_rows", "warnings",
		"decision", "not_computed", "checked_against", "references")
	return result("tox.fih_dose_projection's result.", merge(common(tox.LogicVersion), js{
		"projection": projection,
		"hed":        quantityOut("The chosen study's HED."),
		"mrsd":       quantityOut("The MRSD per body mass."),
		"mrsd_dose":  quantityOut("The MRSD for the human weight."),
	}), resultRequired("projection", "hed", "mrsd", "mrsd_dose")...)
}

// routeNames lists the units layer's routes of administration.
func routeNames() []string {
	var out []string
	for _, r := range units.Routes() {
		out = append(out, r.Name)
	}
	return out
}
