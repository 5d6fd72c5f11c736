package units

// DoseForm is a dosage form, from a closed list; the name is the identifier
// a skill's input uses ("tablet").
type DoseForm struct {
	Name        string
	Description string
}

var doseForms = []DoseForm{
	{"tablet", "a solid unit dose, swallowed, chewed or dissolved"},
	{"capsule", "a solid unit dose in a hard or soft shell"},
	{"solution", "the substance dissolved in a liquid"},
	{"suspension", "solid particles dispersed in a liquid"},
	{"emulsion", "one liquid dispersed in another"},
	{"powder", "a dry powder, given as is or reconstituted"},
	{"granules", "dry granules, given as is or dispersed"},
	{"injection", "a sterile preparation for injection or infusion (solution, suspension or reconstituted powder)"},
	{"implant", "a solid depot placed in tissue"},
	{"cream", "a semi-solid emulsion for the skin"},
	{"ointment", "a greasy semi-solid for the skin"},
	{"gel", "a gelled semi-solid"},
	{"patch", "a transdermal delivery system"},
	{"aerosol", "a pressurised or nebulised preparation for inhalation"},
	{"inhalation_powder", "a dry powder for inhalation"},
	{"spray", "a liquid delivered as a spray (nasal, oral, topical)"},
	{"suppository", "a solid unit dose for rectal or vaginal use"},
	{"drops", "a liquid given by the drop (eye, ear, nose, oral)"},
}

var doseFormAliases = map[string]string{
	"tab": "tablet", "tabs": "tablet", "tablets": "tablet",
	"cap": "capsule", "caps": "capsule", "capsules": "capsule",
	"oral_solution": "solution", "liquid": "solution",
	"oral_suspension":        "suspension",
	"solution_for_injection": "injection", "injectable": "injection", "infusion": "injection",
	"lyophilisate": "powder", "lyophilizate": "powder",
	"transdermal_patch": "patch", "inhaler": "aerosol", "mdi": "aerosol", "dpi": "inhalation_powder",
	"nebuliser": "aerosol", "nebulizer": "aerosol", "eye_drops": "drops",
}

// DoseForms lists every dose form, in a stable order.
func DoseForms() []DoseForm { return append([]DoseForm(nil), doseForms...) }

// LookupDoseForm finds a dose form by its exact name.
func LookupDoseForm(name string) (DoseForm, bool) {
	for _, f := range doseForms {
		if f.Name == name {
			return f, true
		}
	}
	return DoseForm{}, false
}

// ParseDoseForm checks the dose form name at path, refusing a name outside
// the list with unknown_dose_form (Allowed lists the names).
func ParseDoseForm(path, name string) (DoseForm, *Problem) {
	if f, ok := LookupDoseForm(name); ok {
		return f, nil
	}
	names := make([]string, len(doseForms))
	for i, f := range doseForms {
		names[i] = f.Name
	}
	return DoseForm{}, refuseTerm(path, CodeUnknownDoseForm, "dose form", name, names, doseFormAliases)
}
