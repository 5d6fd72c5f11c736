package defaults_test

// Schema documents as the tests read them, and the JSON Schema compiler set up
// the way the registry must set it up.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/scidex/substrate/internal/schema/defaults"
)

// document is a schema document as README.md describes it.
type document struct {
	Type          string            `json:"type"`
	SchemaVersion int               `json:"schema_version"`
	Title         string            `json:"title"`
	Description   string            `json:"description"`
	IDStrategy    string            `json:"id_strategy"`
	IDPattern     string            `json:"id_pattern,omitempty"`
	Mutability    string            `json:"mutability"`
	LockMode      string            `json:"lock_mode"`
	ContentSchema map[string]any    `json:"content_schema"`
	GraphQL       *graphqlHints     `json:"graphql,omitempty"`
	Links         map[string]link   `json:"links"`
	Signals       map[string]signal `json:"signals"`
	Views         map[string]view   `json:"views,omitempty"`
	Lifecycle     lifecycle         `json:"lifecycle"`
	Validators    []string          `json:"validators"`
	Policy        *policy           `json:"policy"`
	Merge         merge             `json:"merge"`
	Examples      []example         `json:"examples"`
}

// graphqlHints is the optional "graphql" key.
type graphqlHints struct {
	Fields map[string]struct {
		Enum string `json:"enum"`
	} `json:"fields"`
}

// link declares one predicate.
type link struct {
	Targets          []string `json:"targets"`
	EvidenceRequired bool     `json:"evidence_required"`
	Description      string   `json:"description"`
	ServerOnly       bool     `json:"server_only,omitempty"`
}

// signal declares one signal kind.
type signal struct {
	Dimensions  []string           `json:"dimensions"`
	ValueRange  []*float64         `json:"value_range"`
	Values      []float64          `json:"values,omitempty"`
	Aggregation string             `json:"aggregation"`
	Unit        string             `json:"unit,omitempty"`
	Outcomes    map[string]float64 `json:"outcomes,omitempty"`
	Opponent    bool               `json:"opponent,omitempty"`
	Roles       []string           `json:"roles,omitempty"`
	ServerOnly  bool               `json:"server_only,omitempty"`
	Liquidity   float64            `json:"liquidity,omitempty"`
	Description string             `json:"description"`
}

// view declares one aggregation view (docs/leaderboards.md).
type view struct {
	Kind          string  `json:"kind"`
	Signal        string  `json:"signal"`
	Dimension     string  `json:"dimension,omitempty"`
	KFactor       float64 `json:"k_factor,omitempty"`
	InitialRating float64 `json:"initial_rating,omitempty"`
	HalfLifeHours float64 `json:"half_life_hours,omitempty"`
	Description   string  `json:"description"`
}

// lifecycle declares states and who may move between them.
type lifecycle struct {
	Initial     *string      `json:"initial"`
	States      []string     `json:"states"`
	Transitions []transition `json:"transitions"`
}

// transition is one allowed move; From may be "*".
type transition struct {
	From  string   `json:"from"`
	To    string   `json:"to"`
	Roles []string `json:"roles"`
}

// policy is who may read and write the type (docs/policy.md).
type policy struct {
	Read         string        `json:"read"`
	Create       *writeRule    `json:"create"`
	Update       *writeRule    `json:"update"`
	Supersede    *writeRule    `json:"supersede"`
	ServerFields []serverField `json:"server_fields,omitempty"`
	Review       *review       `json:"review,omitempty"`
}

// review is who writes versions that keep their state, and the state of the
// others.
type review struct {
	Roles []string `json:"roles"`
	State string   `json:"state"`
}

// writeRule is who may make one kind of write.
type writeRule struct {
	Roles      []string `json:"roles,omitempty"`
	ServerOnly bool     `json:"server_only,omitempty"`
	Via        []string `json:"via,omitempty"`
	Hint       string   `json:"hint,omitempty"`
}

// serverField is a content field only the named operations write.
type serverField struct {
	Pointer   string          `json:"pointer"`
	WrittenBy []string        `json:"written_by"`
	Initial   json.RawMessage `json:"initial,omitempty"`
	Reason    string          `json:"reason,omitempty"`
}

// merge lists the JSON pointers the three-way merge treats specially.
type merge struct {
	TextFields       []string `json:"text_fields"`
	AppendOnlyArrays []string `json:"append_only_arrays"`
}

// example is an artifact the test suite creates.
type example struct {
	ID      string         `json:"id,omitempty"`
	Title   string         `json:"title"`
	Content map[string]any `json:"content"`
}

// parseDocument decodes a document strictly: an unknown key is an error.
func parseDocument(data []byte) (document, error) {
	var d document
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return document{}, err
	}
	return d, nil
}

// loadDocuments reads every embedded document, keyed by file name.
func loadDocuments() (map[string]document, error) {
	names, err := fs.Glob(defaults.FS, "*.json")
	if err != nil {
		return nil, err
	}
	docs := make(map[string]document, len(names))
	for _, name := range names {
		data, err := fs.ReadFile(defaults.FS, name)
		if err != nil {
			return nil, err
		}
		d, err := parseDocument(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		docs[name] = d
	}
	return docs, nil
}

// jsonValue converts v to the representation the jsonschema package validates
// (numbers as json.Number), by way of its JSON encoding.
func jsonValue(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(data))
}

// compileSchema compiles a JSON Schema the way the registry must: draft
// 2020-12 by default, format assertions on, and the "ref" format known.
func compileSchema(name string, schema any) (*jsonschema.Schema, error) {
	v, err := jsonValue(schema)
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.RegisterFormat(&jsonschema.Format{Name: "ref", Validate: validateRef})
	url := "mem://defaults/" + name + ".json"
	if err := c.AddResource(url, v); err != nil {
		return nil, err
	}
	sch, err := c.Compile(url)
	return sch, explain(err)
}

// explain spells out a jsonschema error in full, every failing keyword with
// its location, where the error's own message names only the schema.
func explain(err error) error {
	prefix := ""
	var sve *jsonschema.SchemaValidationError
	if errors.As(err, &sve) {
		prefix, err = sve.URL+" is not a valid JSON Schema: ", sve.Err
	}
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return fmt.Errorf("%s%#v", prefix, ve)
	}
	if err != nil && prefix != "" {
		return fmt.Errorf("%s%w", prefix, err)
	}
	return err
}

// validateRef implements the "ref" format; non-strings are another keyword's business.
func validateRef(v any) error {
	s, ok := v.(string)
	if !ok || refRE.MatchString(s) {
		return nil
	}
	return fmt.Errorf("%q is not a ref (<type>:<id> or <type>:<id>@sha256:<hex>)", s)
}
