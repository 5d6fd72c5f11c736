package skills

import (
	"sort"
	"strings"

	"github.com/scidex/substrate/skills/units"
)

// The skills' tool schemas (JSON Schema 2020-12) are built here from the Go
// tables they describe, so the units, routes and vocabularies a schema lists
// are the ones the argument check accepts. A schema describes; the skill's
// Check stays the authority on refusals (ranges, cross-field rules, the
// procedure's own validation). A schema never refuses what Check accepts,
// and refuses the shapes Check refuses outright: a unit outside the
// dimension, a missing argument, an unknown field (the wrappers decode
// strictly, so every input object is closed).

// js is one JSON Schema node.
type js = map[string]any

// draft2020 is the dialect every skill schema declares.
const draft2020 = "https://json-schema.org/draft/2020-12/schema"

// args is a skill's input schema: a closed object of every argument, its
// required ones, and the skill's example.
func args(desc string, props js, required []string, example any) js {
	s := closed(desc, props, required...)
	s["$schema"] = draft2020
	s["examples"] = []any{example}
	return s
}

// result is a skill's output schema: an open object (a new field is not a
// violation) whose required fields are the ones every result carries.
func result(desc string, props js, required ...string) js {
	s := open(desc, props, required...)
	s["$schema"] = draft2020
	return s
}

// closed is an input object: unknown fields are refused, as the wrappers'
// strict decoding refuses them.
func closed(desc string, props js, required ...string) js {
	s := open(desc, props, required...)
	s["additionalProperties"] = false
	return s
}

// open is an output object.
func open(desc string, props js, required ...string) js {
	s := js{"type": "object", "description": desc, "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// plain is a nested output field its name says enough about.
func plain(typ string) js { return js{"type": typ} }

func str(desc string) js     { return js{"type": "string", "description": desc} }
func number(desc string) js  { return js{"type": "number", "description": desc} }
func integer(desc string) js { return js{"type": "integer", "description": desc} }
func boolean(desc string) js { return js{"type": "boolean", "description": desc} }
func texts(desc string) js   { return array(desc, js{"type": "string"}) }

// nullable is a number that is null when it cannot be computed.
func nullable(desc string) js { return js{"type": []string{"number", "null"}, "description": desc} }

// oneOfStrings is a string from a closed set.
func oneOfStrings(desc string, values []string) js {
	return js{"type": "string", "enum": values, "description": desc}
}

func array(desc string, items js) js {
	return js{"type": "array", "description": desc, "items": items}
}

// with adds keywords (bounds, patterns) to a node: with(s, "minimum", 3).
func with(s js, kv ...any) js {
	for i := 0; i+1 < len(kv); i += 2 {
		s[kv[i].(string)] = kv[i+1]
	}
	return s
}

// unitSymbols lists every spelling units accepts for the dimensions, from
// the smallest unit to the largest (ml as well as mL).
func unitSymbols(dims ...units.Dimension) []string {
	var out []string
	for _, d := range dims {
		out = append(out, units.Symbols(d)...)
	}
	return out
}

// unitField is a quantity's unit: one of the dimensions' symbols.
func unitField(dims ...units.Dimension) js {
	names := make([]string, len(dims))
	for i, d := range dims {
		names[i] = strings.ReplaceAll(string(d), "_", " ")
	}
	return oneOfStrings("A case-sensitive UCUM unit of "+strings.Join(names, " or ")+".", unitSymbols(dims...))
}

// def refers to a node of the schema's $defs.
func def(name string) js { return js{"$ref": "#/$defs/" + name} }

// quantity is {value, unit}, as units.ParseQuantity reads it (nothing else
// in the object; value a JSON number); unit is a unitField or a def of one,
// bounds constrain the value.
func quantity(desc string, unit js, bounds ...any) js {
	return closed(desc, js{"value": with(number("The number, in unit."), bounds...), "unit": unit}, "value", "unit")
}

// series is {values, unit}, as units.ParseSeries reads it: at least
// minItems values, each within bounds.
func series(desc string, unit js, minItems int, bounds ...any) js {
	return closed(desc, js{
		"values": with(array("The numbers, in unit.", with(js{"type": "number"}, bounds...)), "minItems", minItems),
		"unit":   unit,
	}, "values", "unit")
}

// quantityOut is a computed quantity in a result: {value, unit}.
func quantityOut(desc string) js {
	return open(desc, js{"value": number("The number."), "unit": str("Its UCUM unit.")}, "value", "unit")
}

// common are the fields every skill's result carries (Output): the skill
// result is made from them.
func common(logicVersion string) js {
	return js{
		"units":               js{"type": "object", "description": "The UCUM unit of each numeric field, by name.", "additionalProperties": js{"type": "string"}},
		"calculation_route":   str("How the result was computed."),
		"check_logic_version": with(str("The version of the logic that produced it."), "const", logicVersion),
		"warnings":            texts("What to read with care."),
		"disclaimers":         texts("What the result is not."),
		"references_used": array("The references relied on, by id in skills/references.json.", open("A reference.", js{
			"id": plain("string"), "status": js{"enum": []string{Verified, ToVerify}},
			"note": plain("string"), "document": plain("string"), "version": plain("string"),
		}, "id", "status")),
	}
}

// resultRequired are the fields of common every result carries, then the
// skill's own.
func resultRequired(own ...string) []string {
	return append([]string{"units", "calculation_route", "check_logic_version", "warnings", "disclaimers", "references_used"}, own...)
}

// merge returns the union of property sets (later ones win).
func merge(sets ...js) js {
	out := js{}
	for _, s := range sets {
		for k, v := range s {
			out[k] = v
		}
	}
	return out
}

func sortedKeys(m js) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
