package units

// Dimension is what a unit measures. Two units convert into each other only
// when they have the same Dimension. The set is closed: it is what the skills
// take as inputs and print as outputs, not the whole of UCUM.
//
// Dimensions are finer than physics where a skill needs the distinction: a
// dose per body mass (mg/kg) is not a dimensionless ratio, and a mass
// concentration (mg/L) does not convert to an amount concentration (umol/L)
// without a molar mass, which this package never assumes.
type Dimension string

// The dimensions, each with its canonical unit: the unit a skill computes
// in, and the unit [Quantity.Canonical] returns.
const (
	Mass                          Dimension = "mass"                             // mg
	Amount                        Dimension = "amount"                           // umol
	Volume                        Dimension = "volume"                           // L
	Time                          Dimension = "time"                             // h
	Area                          Dimension = "area"                             // m2 (body surface area)
	Fraction                      Dimension = "fraction"                         // 1 (and %)
	InverseTime                   Dimension = "inverse_time"                     // 1/h (rate constants)
	Concentration                 Dimension = "concentration"                    // mg/L (mass per volume)
	MolarConcentration            Dimension = "molar_concentration"              // umol/L (amount per volume)
	DosePerBodyMass               Dimension = "dose_per_body_mass"               // mg/kg
	DosePerArea                   Dimension = "dose_per_area"                    // mg/m2 (dose per body surface area)
	MassRate                      Dimension = "mass_rate"                        // mg/h (infusion rate)
	VolumeRate                    Dimension = "volume_rate"                      // L/h (clearance, flow)
	VolumePerBodyMass             Dimension = "volume_per_body_mass"             // L/kg (volume of distribution per kg)
	VolumeRatePerBodyMass         Dimension = "volume_rate_per_body_mass"        // L/h/kg (clearance per kg)
	ConcentrationTime             Dimension = "concentration_time"               // h.mg/L (AUC)
	MolarConcentrationTime        Dimension = "molar_concentration_time"         // h.umol/L (AUC)
	ConcentrationTimeSquared      Dimension = "concentration_time_squared"       // h2.mg/L (AUMC)
	MolarConcentrationTimeSquared Dimension = "molar_concentration_time_squared" // h2.umol/L (AUMC)
	MolarMass                     Dimension = "molar_mass"                       // g/mol (a molecular weight; 1 g/mol is 1 Da)
)

// canonical is each dimension's canonical unit symbol.
var canonical = map[Dimension]string{
	Mass:                          "mg",
	Amount:                        "umol",
	Volume:                        "L",
	Time:                          "h",
	Area:                          "m2",
	Fraction:                      "1",
	InverseTime:                   "1/h",
	Concentration:                 "mg/L",
	MolarConcentration:            "umol/L",
	DosePerBodyMass:               "mg/kg",
	DosePerArea:                   "mg/m2",
	MassRate:                      "mg/h",
	VolumeRate:                    "L/h",
	VolumePerBodyMass:             "L/kg",
	VolumeRatePerBodyMass:         "L/h/kg",
	ConcentrationTime:             "h.mg/L",
	MolarConcentrationTime:        "h.umol/L",
	ConcentrationTimeSquared:      "h2.mg/L",
	MolarConcentrationTimeSquared: "h2.umol/L",
	MolarMass:                     "g/mol",
}

// dimensions is the closed list in a stable order (the order above).
var dimensions = []Dimension{
	Mass, Amount, Volume, Time, Area, Fraction, InverseTime,
	Concentration, MolarConcentration, DosePerBodyMass, DosePerArea,
	MassRate, VolumeRate, VolumePerBodyMass, VolumeRatePerBodyMass, ConcentrationTime, MolarConcentrationTime,
	ConcentrationTimeSquared, MolarConcentrationTimeSquared, MolarMass,
}

// Dimensions lists every dimension, in a stable order.
func Dimensions() []Dimension { return append([]Dimension(nil), dimensions...) }

// AnyConcentration is the set a concentration input usually accepts: mass or
// molar, whichever the study measured. Pass it as ParseQuantity(path, raw,
// AnyConcentration...).
var AnyConcentration = []Dimension{Concentration, MolarConcentration}

// Canonical returns the dimension's canonical unit; ok is false for a
// Dimension outside the closed list.
func (d Dimension) Canonical() (Unit, bool) {
	s, ok := canonical[d]
	if !ok {
		return Unit{}, false
	}
	return Lookup(s)
}

// describe is the dimension as a reader says it ("dose per body mass").
func (d Dimension) describe() string {
	b := []byte(d)
	for i, c := range b {
		if c == '_' {
			b[i] = ' '
		}
	}
	return string(b)
}
