package tox

import (
	"fmt"
	"math"

	"github.com/scidex/substrate/skills/problem"
)

// The guidance's own exception to body-surface-area scaling that this
// package applies: a protein heavier than 100 kDa given intravascularly
// scales between species by mg/kg, one to one (FDA 2005, section V.B,
// "Basis for Using mg/kg Conversions", as quoted by secondary sources; the
// guidance itself is to_verify, and so is this rule with it: see
// skills/references.json, fda_2005_mrsd).
//
// The caller still names the route ([RouteMgPerKg]): the skill does not
// swap a route the caller chose for one that gives a dose six times higher
// (rat: 1 against 6/37). When the test article qualifies, every other route
// is refused with a pointer to mg_per_kg; when it does not, mg_per_kg is
// refused, because the guidance reserves it for the exception.

// RouteMgPerKg: HED = NOAEL, both in mg/kg (factor 1).
const RouteMgPerKg = "mg_per_kg"

// ProteinMgPerKgAboveDa is the molecular weight (Da, g/mol) above which a
// protein given intravascularly scales by mg/kg.
const ProteinMgPerKgAboveDa = 100000.0

// The modalities a test article may name.
const (
	ModalitySmallMolecule = "small_molecule"
	ModalityProtein       = "protein"
	ModalityOther         = "other"
)

// Modalities lists them.
func Modalities() []string { return []string{ModalitySmallMolecule, ModalityProtein, ModalityOther} }

// Article is the test article, as far as the guidance's exceptions need it.
type Article struct {
	// Modality is one of Modalities.
	Modality string `json:"modality"`
	// MolecularWeightGPerMol is its molecular weight in g/mol (numerically
	// Da); required for a protein.
	MolecularWeightGPerMol *float64 `json:"molecular_weight_g_per_mol,omitempty"`
	// Administration is how it is given (a route name of skills/units:
	// iv_bolus, iv_infusion, sc, …); required for a protein. Intravascular
	// says whether that route puts the dose straight into the blood (the
	// wrapper reads it from the units layer's route vocabulary).
	Administration string `json:"administration,omitempty"`
	Intravascular  bool   `json:"intravascular"`
}

// mgPerKgApplies reports whether the guidance's mg/kg exception applies to a,
// and says why in words a result can carry.
func mgPerKgApplies(a *Article) (bool, string) {
	if a == nil || a.Modality != ModalityProtein || a.MolecularWeightGPerMol == nil {
		return false, ""
	}
	mw := *a.MolecularWeightGPerMol
	if mw > ProteinMgPerKgAboveDa && a.Intravascular {
		return true, fmt.Sprintf("FDA 2005's exception to body-surface-area scaling: a protein over %g kDa (%g kDa) given intravascularly (%s) scales by mg/kg",
			ProteinMgPerKgAboveDa/1000, mw/1000, a.Administration)
	}
	why := fmt.Sprintf("a protein of %g kDa", mw/1000)
	if mw <= ProteinMgPerKgAboveDa {
		why += fmt.Sprintf(", not over %g kDa", ProteinMgPerKgAboveDa/1000)
	}
	if !a.Intravascular {
		why += fmt.Sprintf(", given %s, not intravascularly", a.Administration)
	}
	return false, why
}

// validateArticle checks the test article and the route against it.
func validateArticle(ps *problem.List, in Input, routeOK bool) {
	a := in.Article
	if a != nil {
		switch a.Modality {
		case ModalitySmallMolecule, ModalityProtein, ModalityOther:
		case "":
			ps.Add("inputs.test_article.modality", CodeRequired, nil, "a modality is required: one of %v", Modalities())
		default:
			ps.Add("inputs.test_article.modality", CodeUnknownModality, a.Modality, "modality %q is not known: use one of %v", a.Modality, Modalities())
		}
		if mw := a.MolecularWeightGPerMol; mw != nil && (math.IsNaN(*mw) || math.IsInf(*mw, 0) || *mw <= 0) {
			ps.Add("inputs.test_article.molecular_weight", CodeNotPositive, *mw, "molecular weight %v g/mol must be a positive number", *mw)
		}
		if a.Modality == ModalityProtein {
			if a.MolecularWeightGPerMol == nil {
				ps.Add("inputs.test_article.molecular_weight", CodeRequired, nil,
					"a protein's molecular weight is required: FDA 2005 scales a protein over %g kDa given intravascularly by mg/kg", ProteinMgPerKgAboveDa/1000)
			}
			if a.Administration == "" {
				ps.Add("inputs.test_article.administration", CodeRequired, nil,
					"a protein's administration route is required (iv_bolus, iv_infusion, sc, …): FDA 2005 scales a protein over %g kDa given intravascularly by mg/kg", ProteinMgPerKgAboveDa/1000)
			}
		}
	}
	if !routeOK {
		return
	}
	applies, why := mgPerKgApplies(a)
	switch {
	case applies && in.Route != RouteMgPerKg:
		(*ps).Add("inputs.route", CodeRouteNotForArticle, in.Route,
			"route %s scales by body surface area, but the test article is a protein over %g kDa (%g kDa) given intravascularly (%s), which FDA 2005 scales by mg/kg (HED = NOAEL): use route %s",
			in.Route, ProteinMgPerKgAboveDa/1000, *a.MolecularWeightGPerMol/1000, a.Administration, RouteMgPerKg)
		(*ps)[len(*ps)-1].Suggestion = RouteMgPerKg
	case !applies && in.Route == RouteMgPerKg:
		detail := "no test_article was given"
		if why != "" {
			detail = "the test article is " + why
		} else if a != nil {
			detail = fmt.Sprintf("the test article is a %s", a.Modality)
		}
		ps.Add("inputs.route", CodeRouteNotForArticle, in.Route,
			"route %s is FDA 2005's exception for a protein over %g kDa given intravascularly, and %s: use route %s, %s or %s",
			RouteMgPerKg, ProteinMgPerKgAboveDa/1000, detail, RouteDivideBy, RouteKmRatio, RouteBodyWeight)
	}
}
