package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/scidex/substrate/internal/problem"
)

var printer = message.NewPrinter(language.English)

// ValidateJSON checks a JSON value against a compiled schema and returns one
// Detail per problem, every path rooted at root (e.g. "content"). A nil result
// means the value is valid.
func ValidateJSON(s *jsonschema.Schema, root string, raw []byte) []problem.Detail {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return []problem.Detail{problem.Field(root, "json", "is not valid JSON: "+err.Error(), nil)}
	}
	err = s.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []problem.Detail{problem.Field(root, "schema", err.Error(), nil)}
	}
	var out []problem.Detail
	collect(ve, root, inst, &out)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return dedupe(out)
}

// collect turns the leaves of a validation error tree into Details. Inner nodes
// (allOf, $ref, the schema itself) only say "something below failed".
func collect(ve *jsonschema.ValidationError, root string, inst any, out *[]problem.Detail) {
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			collect(c, root, inst, out)
		}
		return
	}
	path := JoinPath(root, ve.InstanceLocation)
	value := valueAt(inst, ve.InstanceLocation)
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		for _, name := range k.Missing {
			*out = append(*out, problem.Field(JoinPath(path, []string{name}), "required", "is required", nil))
		}
	case *kind.AdditionalProperties:
		for _, name := range k.Properties {
			*out = append(*out, problem.Field(JoinPath(path, []string{name}), "additionalProperties",
				"is not a property of this type", valueAt(inst, append(append([]string{}, ve.InstanceLocation...), name))))
		}
	case *kind.Type:
		*out = append(*out, problem.Field(path, "type",
			fmt.Sprintf("must be %s, got %s", strings.Join(k.Want, " or "), k.Got), value))
	default:
		constraint := "schema"
		if kp := ve.ErrorKind.KeywordPath(); len(kp) > 0 {
			constraint = kp[len(kp)-1]
		}
		*out = append(*out, problem.Field(path, constraint, ve.ErrorKind.LocalizedString(printer), value))
	}
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// JoinPath extends a dotted path with JSON pointer tokens: object keys become
// ".key" (or `["odd key"]`), array indices "[n]".
func JoinPath(root string, tokens []string) string {
	var b strings.Builder
	b.WriteString(root)
	for _, t := range tokens {
		if _, err := strconv.Atoi(t); err == nil {
			b.WriteString("[" + t + "]")
		} else if identRE.MatchString(t) {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(t)
		} else {
			q, _ := json.Marshal(t)
			b.WriteString("[" + string(q) + "]")
		}
	}
	return b.String()
}

func valueAt(v any, tokens []string) any {
	for _, t := range tokens {
		switch x := v.(type) {
		case map[string]any:
			v = x[t]
		case []any:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func dedupe(ds []problem.Detail) []problem.Detail {
	seen := map[string]bool{}
	out := ds[:0]
	for _, d := range ds {
		k := d.Path + "\x00" + d.Constraint + "\x00" + d.Message
		if !seen[k] {
			seen[k] = true
			out = append(out, d)
		}
	}
	return out
}
