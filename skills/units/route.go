package units

// Route is a route of administration, from a closed list. The name is the
// identifier a skill's input uses ("iv_bolus"); names are lower-case and
// exact.
type Route struct {
	Name        string
	Description string
	// Intravascular is true when the dose enters the blood directly (iv_bolus,
	// iv_infusion): no absorption phase, bioavailability 1 by definition. NCA
	// fits λz after Cmax only for the extravascular routes.
	Intravascular bool
}

var routes = []Route{
	{"oral", "swallowed by mouth (per os)", false},
	{"iv_bolus", "intravenous injection given at once", true},
	{"iv_infusion", "intravenous infusion over a stated duration", true},
	{"sc", "subcutaneous injection", false},
	{"im", "intramuscular injection", false},
	{"ip", "intraperitoneal injection", false},
	{"id", "intradermal injection", false},
	{"intrathecal", "injection into the cerebrospinal fluid", false},
	{"intravitreal", "injection into the vitreous of the eye", false},
	{"inhalation", "inhaled into the lungs", false},
	{"intranasal", "given into the nose", false},
	{"sublingual", "held under the tongue", false},
	{"buccal", "held against the cheek", false},
	{"rectal", "given into the rectum", false},
	{"vaginal", "given into the vagina", false},
	{"topical", "applied to skin or mucosa for a local effect", false},
	{"transdermal", "applied to the skin for a systemic effect (a patch)", false},
}

var routeAliases = map[string]string{
	"po": "oral", "per_os": "oral", "by_mouth": "oral", "oral_gavage": "oral", "gavage": "oral",
	"subcutaneous": "sc", "sq": "sc", "subcut": "sc",
	"intramuscular": "im", "intraperitoneal": "ip", "intradermal": "id",
	"inhaled": "inhalation", "nasal": "intranasal", "in": "intranasal",
	"iv_push": "iv_bolus", "bolus": "iv_bolus", "infusion": "iv_infusion", "iv_drip": "iv_infusion",
	"it": "intrathecal", "ivt": "intravitreal", "sl": "sublingual", "pr": "rectal",
	"dermal": "topical", "cutaneous": "topical", "patch": "transdermal",
}

// Routes lists every route, in a stable order.
func Routes() []Route { return append([]Route(nil), routes...) }

// LookupRoute finds a route by its exact name.
func LookupRoute(name string) (Route, bool) {
	for _, r := range routes {
		if r.Name == name {
			return r, true
		}
	}
	return Route{}, false
}

// ParseRoute checks the route name at path, refusing a name outside the list
// with unknown_route (Allowed lists the names; "po" suggests "oral"). An "iv"
// is refused without a guess: bolus and infusion differ for the analysis.
func ParseRoute(path, name string) (Route, *Problem) {
	if r, ok := LookupRoute(name); ok {
		return r, nil
	}
	names := make([]string, len(routes))
	for i, r := range routes {
		names[i] = r.Name
	}
	p := refuseTerm(path, CodeUnknownRoute, "route", name, names, routeAliases)
	if p.Suggestion == "" && (name == "iv" || name == "IV" || name == "intravenous") {
		p.Message += "; say iv_bolus or iv_infusion"
	}
	return Route{}, p
}
