// Package schema is the type system of the substrate: schema documents, the
// registry that holds their versions, and validation of content against them.
//
// A type is a JSON schema document (see defaults/README.md for the format). Adding
// a type needs no Go code: register its document and every polymorphic operation
// serves it at once.
package schema

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/scidex/substrate/internal/schema/evolve"
)

// Mutability says how an artifact of a type may change after it is created.
type Mutability string

// The mutability modes (docs/data-model.md).
const (
	Immutable          Mutability = "immutable"
	AppendOnly         Mutability = "append_only"
	MutableWithHistory Mutability = "mutable_with_history"
	SupersededOnly     Mutability = "superseded_only"
)

// ID strategies: who picks the <id> of a new artifact.
const (
	IDStrategyUUID   = "uuid"
	IDStrategyClient = "client"
	IDStrategySlug   = "slug"
)

// MetaType is the type of schema documents: writing a `schema` artifact
// registers a new version of the type it describes (the one type whose writes
// have an effect beyond the artifact, since it is the registry itself).
const MetaType = "schema"

// DefaultIDPattern is the id grammar of types that do not declare their own. It
// excludes ':' and '@' so that every ref splits one way only.
const DefaultIDPattern = `^[A-Za-z0-9][A-Za-z0-9._~-]{0,199}$`

// Document is a schema document as stored in the registry.
type Document struct {
	Type          string                `json:"type"`
	SchemaVersion int                   `json:"schema_version"`
	Title         string                `json:"title"`
	Description   string                `json:"description"`
	IDStrategy    string                `json:"id_strategy"`
	IDPattern     string                `json:"id_pattern,omitempty"`
	Mutability    Mutability            `json:"mutability"`
	LockMode      string                `json:"lock_mode"`
	ContentSchema json.RawMessage       `json:"content_schema"`
	GraphQL       *GraphQLHints         `json:"graphql,omitempty"`
	Links         map[string]LinkRule   `json:"links"`
	Signals       map[string]SignalRule `json:"signals"`
	Views         map[string]View       `json:"views,omitempty"`
	// Migrations turn content of the previously registered version into
	// content of this one (package evolve).
	Migrations []evolve.Op `json:"migrations,omitempty"`
	Lifecycle  Lifecycle   `json:"lifecycle"`
	Validators []string    `json:"validators"`
	Policy     Policy      `json:"policy"`
	Merge      MergeRules  `json:"merge"`
	Examples   []Example   `json:"examples"`
}

// GraphQLHints adjust how the typed GraphQL subtype exposes content.
type GraphQLHints struct {
	Fields map[string]GraphQLField `json:"fields,omitempty"`
}

// GraphQLField names the GraphQL enum a string-enum property is exposed as.
type GraphQLField struct {
	Enum string `json:"enum,omitempty"`
}

// LinkRule says which target types a predicate may point at.
type LinkRule struct {
	Targets          []string `json:"targets"`
	EvidenceRequired bool     `json:"evidence_required"`
	Description      string   `json:"description,omitempty"`
	// ServerOnly links are written only by the server's own operations (the
	// produced_by_tool link of a result to the call that computed it): a
	// client's addLink or batch of one is refused, so a result cannot claim a
	// call it did not come from.
	ServerOnly bool `json:"server_only,omitempty"`
}

// SignalRule declares a signal kind: its dimensions, allowed values and aggregation.
type SignalRule struct {
	Dimensions  []string   `json:"dimensions"`
	ValueRange  []*float64 `json:"value_range,omitempty"`
	Values      []float64  `json:"values,omitempty"`
	Aggregation string     `json:"aggregation"`
	Unit        string     `json:"unit,omitempty"`
	// Outcomes maps lifecycle states to the outcome (0..1) a forecast resolves to
	// when the artifact reaches that state (Brier scores).
	Outcomes map[string]float64 `json:"outcomes,omitempty"`
	// Opponent makes the kind a duel: each signal names an opponent artifact
	// of the same type, and its value is the signalled artifact's score (1
	// win, 0.5 draw, 0 loss). Elo views are computed from such kinds.
	Opponent bool `json:"opponent,omitempty"`
	// Roles are the permissions any one of which may give a signal of this
	// kind (judges of duels); empty means contributor.
	Roles []string `json:"roles,omitempty"`
	// ServerOnly kinds are written only by the server's own operations
	// (store.ServerSignal): a client's addSignal is refused, so a market's
	// trades are priced by its verb and never forged.
	ServerOnly bool `json:"server_only,omitempty"`
	// Liquidity makes the kind an LMSR prediction market's trades (Hanson's
	// b, in shares): dimensions yes and no, each signal's value the shares
	// bought (negative: sold), written by the market verbs (tools/market).
	Liquidity   float64 `json:"liquidity,omitempty"`
	Description string  `json:"description,omitempty"`
}

// Lifecycle lists the states of a type and the transitions between them.
type Lifecycle struct {
	Initial     *string      `json:"initial"`
	States      []string     `json:"states"`
	Transitions []Transition `json:"transitions"`
}

// Transition is one allowed state change and the roles that may make it.
// From may be "*" for any state.
type Transition struct {
	From  string   `json:"from"`
	To    string   `json:"to"`
	Roles []string `json:"roles"`
}

// MergeRules name, as JSON pointers into content, the fields the three-way merge
// treats specially.
type MergeRules struct {
	TextFields       []string `json:"text_fields"`
	AppendOnlyArrays []string `json:"append_only_arrays"`
}

// Example is a valid artifact of the type, used by docs and tests.
type Example struct {
	ID      string          `json:"id,omitempty"`
	Title   string          `json:"title"`
	Content json.RawMessage `json:"content"`
}

// HasState reports whether s is a declared lifecycle state.
func (l Lifecycle) HasState(s string) bool {
	for _, st := range l.States {
		if st == s {
			return true
		}
	}
	return false
}

// ParseDocument decodes a schema document and checks what the meta-schema cannot:
// that the id pattern compiles and the lifecycle names its own states.
func ParseDocument(raw []byte) (*Document, error) {
	var d Document
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("schema document: %w", err)
	}
	if d.Type == "" {
		return nil, fmt.Errorf("schema document: type is empty")
	}
	if d.IDPattern != "" {
		if _, err := regexp.Compile(d.IDPattern); err != nil {
			return nil, fmt.Errorf("schema document %s: id_pattern: %w", d.Type, err)
		}
	}
	if d.Lifecycle.Initial != nil && !d.Lifecycle.HasState(*d.Lifecycle.Initial) {
		return nil, fmt.Errorf("schema document %s: initial state %q is not among the states", d.Type, *d.Lifecycle.Initial)
	}
	if r := d.Policy.Review; r != nil && !d.Lifecycle.HasState(r.State) {
		return nil, fmt.Errorf("schema document %s: policy.review.state %q is not among the lifecycle states", d.Type, r.State)
	}
	d.Policy.withDefaults()
	if problems := d.Policy.check(); len(problems) > 0 {
		return nil, fmt.Errorf("schema document %s: %s", d.Type, strings.Join(problems, "; "))
	}
	for kind, rule := range d.Signals {
		for state := range rule.Outcomes {
			if !d.Lifecycle.HasState(state) {
				return nil, fmt.Errorf("schema document %s: signals.%s.outcomes names %q, which is not a lifecycle state", d.Type, kind, state)
			}
		}
	}
	if ps := evolve.Check(d.Migrations); len(ps) > 0 {
		return nil, fmt.Errorf("schema document %s: %s (received %v)", d.Type, ps[0].Error(), ps[0].Value)
	}
	if problems := d.checkViews(); len(problems) > 0 {
		return nil, fmt.Errorf("schema document %s: %s", d.Type, strings.Join(problems, "; "))
	}
	return &d, nil
}

// SignalKinds returns the declared signal kinds in a stable order.
func (d *Document) SignalKinds() []string {
	kinds := make([]string, 0, len(d.Signals))
	for k := range d.Signals {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	return kinds
}
