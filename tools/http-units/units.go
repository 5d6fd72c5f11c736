package main

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// unit is one unit: its dimension and how to take a value in it to the
// dimension's base unit and back. Most units are a factor; temperatures
// are affine (an offset too).
type unit struct {
	dimension string
	factor    float64 // base = value*factor + offset
	offset    float64
}

// units is the table, by symbol. Factors are exact by definition where the
// definition is exact (the international yard and pound, the US gallon,
// the electronvolt of SI 2019).
var units = map[string]unit{
	// length, base metre
	"m": {"length", 1, 0}, "km": {"length", 1e3, 0}, "cm": {"length", 1e-2, 0}, "mm": {"length", 1e-3, 0},
	"um": {"length", 1e-6, 0}, "nm": {"length", 1e-9, 0}, "angstrom": {"length", 1e-10, 0},
	"in": {"length", 0.0254, 0}, "ft": {"length", 0.3048, 0}, "yd": {"length", 0.9144, 0},
	"mi": {"length", 1609.344, 0}, "nmi": {"length", 1852, 0}, "au": {"length", 149597870700, 0},
	// mass, base kilogram
	"kg": {"mass", 1, 0}, "g": {"mass", 1e-3, 0}, "mg": {"mass", 1e-6, 0}, "ug": {"mass", 1e-9, 0},
	"t": {"mass", 1e3, 0}, "lb": {"mass", 0.45359237, 0}, "oz": {"mass", 0.45359237 / 16, 0},
	"Da": {"mass", 1.66053906660e-27, 0},
	// time, base second
	"s": {"time", 1, 0}, "ms": {"time", 1e-3, 0}, "us": {"time", 1e-6, 0}, "ns": {"time", 1e-9, 0},
	"min": {"time", 60, 0}, "h": {"time", 3600, 0}, "d": {"time", 86400, 0},
	// temperature, base kelvin
	"K": {"temperature", 1, 0}, "C": {"temperature", 1, 273.15}, "F": {"temperature", 5.0 / 9, 273.15 - 32*5.0/9},
	// volume, base cubic metre
	"m3": {"volume", 1, 0}, "L": {"volume", 1e-3, 0}, "mL": {"volume", 1e-6, 0}, "uL": {"volume", 1e-9, 0},
	"gal": {"volume", 3.785411784e-3, 0},
	// pressure, base pascal
	"Pa": {"pressure", 1, 0}, "kPa": {"pressure", 1e3, 0}, "MPa": {"pressure", 1e6, 0}, "bar": {"pressure", 1e5, 0},
	"atm": {"pressure", 101325, 0}, "psi": {"pressure", 6894.757293168, 0}, "mmHg": {"pressure", 133.322387415, 0},
	// energy, base joule
	"J": {"energy", 1, 0}, "kJ": {"energy", 1e3, 0}, "cal": {"energy", 4.184, 0}, "kcal": {"energy", 4184, 0},
	"eV": {"energy", 1.602176634e-19, 0}, "kWh": {"energy", 3.6e6, 0},
}

// conversion is a converted quantity.
type conversion struct {
	Value     float64 `json:"value"`
	Unit      string  `json:"unit"`
	Dimension string  `json:"dimension"`
}

// convert converts value from one unit to another of the same dimension.
// The result is rounded to 12 significant digits, so that 0.1 km is 100 m
// and not 100.00000000000001 m: the answer is the same on every machine.
func convert(value float64, from, to string) (conversion, error) {
	f, ok := units[from]
	if !ok {
		return conversion{}, fmt.Errorf("unknown unit %q; known: %s", from, known())
	}
	t, ok := units[to]
	if !ok {
		return conversion{}, fmt.Errorf("unknown unit %q; known: %s", to, known())
	}
	if f.dimension != t.dimension {
		return conversion{}, fmt.Errorf("cannot convert %s (%s) to %s (%s)", from, f.dimension, to, t.dimension)
	}
	base := value*f.factor + f.offset
	out := (base - t.offset) / t.factor
	if math.IsInf(out, 0) || math.IsNaN(out) {
		return conversion{}, fmt.Errorf("%g %s is out of range in %s", value, from, to)
	}
	rounded, _ := strconv.ParseFloat(strconv.FormatFloat(out, 'g', 12, 64), 64)
	return conversion{Value: rounded, Unit: to, Dimension: t.dimension}, nil
}

func known() string {
	names := make([]string, 0, len(units))
	for n := range units {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
