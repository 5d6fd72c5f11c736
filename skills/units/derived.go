package units

// The units of what an analysis prints, derived from the units its inputs
// came in, so a profile given in ng/mL and h reports AUC in h.ng/mL rather
// than in the canonical h.mg/L. Each returns ok false when the inputs are
// not of the dimensions named.

// AUCUnit returns the unit of an area under a concentration-time curve: the
// time unit times the concentration unit (h and ng/mL give h.ng/mL; h and
// nmol/L give h.nmol/L).
func AUCUnit(conc, time Unit) (Unit, bool) {
	if time.Dimension != Time || (conc.Dimension != Concentration && conc.Dimension != MolarConcentration) {
		return Unit{}, false
	}
	return Lookup(time.preferred + "." + conc.preferred)
}

// AUMCUnit returns the unit of an area under the first moment curve: the
// time unit squared times the concentration unit (h2.ng/mL).
func AUMCUnit(conc, time Unit) (Unit, bool) {
	if time.Dimension != Time || (conc.Dimension != Concentration && conc.Dimension != MolarConcentration) {
		return Unit{}, false
	}
	return Lookup(time.preferred + "2." + conc.preferred)
}

// RateConstantUnit returns the unit of a first-order rate constant such as
// λz: one over the time unit (1/h).
func RateConstantUnit(time Unit) (Unit, bool) {
	if time.Dimension != Time {
		return Unit{}, false
	}
	return Lookup("1/" + time.preferred)
}
