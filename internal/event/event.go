package event

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/jsonlogic"
	"github.com/scidex/substrate/internal/problem"
)

// Event is one row of the event log.
type Event struct {
	Cursor        Cursor
	Type          string
	OccurredAt    time.Time
	Source        string
	ActorID       string
	ActorKind     string
	Ref           *string
	Payload       json.RawMessage
	SchemaVersion int
	// Audience lists the actors an actor-private event is for; empty is public.
	Audience []string

	envOnce sync.Once
	env     map[string]any
}

// Envelope is the event as a JSONLogic filter sees it, built once per event and
// shared by every subscriber's filter.
func (e *Event) Envelope() map[string]any {
	e.envOnce.Do(func() {
		var payload any
		_ = json.Unmarshal(e.Payload, &payload)
		var ref any
		if e.Ref != nil {
			ref = *e.Ref
		}
		e.env = map[string]any{
			"id": fmt.Sprint(e.Cursor.ID), "type": e.Type, "occurredAt": e.OccurredAt.Format(time.RFC3339Nano),
			"source": e.Source, "actor": map[string]any{"id": e.ActorID, "kind": e.ActorKind},
			"ref": ref, "payload": payload, "schemaVersion": float64(e.SchemaVersion),
		}
	})
	return e.env
}

func fromRow(r dbsqlc.EventListAfterRow) (*Event, uint64, error) {
	x, err := parseXID(r.Xid)
	if err != nil {
		return nil, 0, err
	}
	h, err := parseXID(r.Horizon)
	if err != nil {
		return nil, 0, err
	}
	return &Event{Cursor: Cursor{XID: x, ID: r.ID}, Type: r.EventType, OccurredAt: r.OccurredAt, Source: r.Source,
		ActorID: r.ActorID, ActorKind: r.ActorKind, Ref: r.Ref, Payload: json.RawMessage(r.Payload),
		SchemaVersion: int(r.SchemaVersion), Audience: r.Audience}, h, nil
}

// VisibleTo reports whether actor may see the event: public artifact events to
// any authenticated actor; actor-private events (an audience) to the actors named
// and admins; system.* to admins.
func (e *Event) VisibleTo(a auth.Actor) bool {
	if a.Has(auth.PermAdmin) {
		return true
	}
	if strings.HasPrefix(e.Type, "system.") {
		return false
	}
	if len(e.Audience) == 0 {
		return true
	}
	for _, id := range e.Audience {
		if id == a.ID {
			return true
		}
	}
	return false
}

// Selector is what a consumer asks for: event types (a last segment may be *),
// a JSONLogic filter over the envelope, and the artifact a ref-scoped
// subscription follows.
type Selector struct {
	Types  []string
	Filter *jsonlogic.Filter
	Ref    string // unpinned ref; "" for any
	types  []typePattern
}

type typePattern struct {
	prefix string // "hypothesis." for "hypothesis.*"; "" with exact set
	exact  string
	any    bool
}

var typeRE = regexp.MustCompile(`^([a-z][a-z0-9_]*)(\.[a-z][a-z0-9_]*)*(\.\*)?$`)

// NewSelector checks the types and compiles the filter; problems name the argument.
func NewSelector(types []string, filter json.RawMessage, ref string) (*Selector, error) {
	s := &Selector{Types: types, Ref: ref}
	var ds []problem.Detail
	for i, t := range types {
		switch {
		case t == "*":
			s.types = append(s.types, typePattern{any: true})
		case typeRE.MatchString(t) && strings.HasSuffix(t, ".*"):
			s.types = append(s.types, typePattern{prefix: strings.TrimSuffix(t, "*")})
		case typeRE.MatchString(t):
			s.types = append(s.types, typePattern{exact: t})
		default:
			ds = append(ds, problem.Field(fmt.Sprintf("types[%d]", i), "pattern",
				`an event type is "<type>.<verb>"; a last segment of * matches every verb ("hypothesis.*"), "*" matches everything`, t))
		}
	}
	if len(filter) > 0 && string(filter) != "null" {
		f, err := jsonlogic.Compile(filter)
		if err != nil {
			ds = append(ds, problem.Field("filter", "jsonlogic", err.Error(), nil))
		}
		s.Filter = f
	}
	if len(ds) > 0 {
		return nil, problem.Invalid(ds...)
	}
	return s, nil
}

// Match reports whether an event is one the selector asks for (visibility aside).
func (s *Selector) Match(e *Event) bool {
	if s == nil {
		return true
	}
	if s.Ref != "" && (e.Ref == nil || !refIs(*e.Ref, s.Ref)) {
		return false
	}
	if len(s.types) > 0 {
		ok := false
		for _, p := range s.types {
			if p.any || (p.exact != "" && p.exact == e.Type) || (p.prefix != "" && strings.HasPrefix(e.Type, p.prefix)) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return s.Filter == nil || s.Filter.Match(e.Envelope())
}

// refIs reports whether an event's ref (pinned or not) names the artifact ref.
func refIs(eventRef, unpinned string) bool {
	return eventRef == unpinned || strings.HasPrefix(eventRef, unpinned+"@")
}
