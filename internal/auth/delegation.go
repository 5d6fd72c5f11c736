package auth

import (
	"encoding/json"
	"errors"
	"fmt"
)

// DelegationStep is one step of a delegation chain as SPEC-001 §4.1 writes
// it: an actor on whose behalf the next one acts, the session it acted in and
// the task that session worked on. Only ActorID is required.
type DelegationStep struct {
	ActorID   string `json:"actor_id"`
	SessionID string `json:"session_id,omitempty"`
	TaskID    string `json:"task_id,omitempty"`
}

// DelegationChain is the lineage a token acts under (human → orchestrator →
// sub-agent), outermost first. The token's own subject is not in it: it is
// the actor the last step delegated to.
type DelegationChain []DelegationStep

// ActorIDs returns the actor of each step, outermost first; never nil.
func (c DelegationChain) ActorIDs() []string {
	ids := make([]string, len(c))
	for i, s := range c {
		ids[i] = s.ActorID
	}
	return ids
}

// check reports the first step without an actor.
func (c DelegationChain) check() error {
	for i, s := range c {
		if s.ActorID == "" {
			return fmt.Errorf("delegation_chain[%d]: actor_id is empty", i)
		}
	}
	return nil
}

// ParseDelegationChain reads a delegation_chain claim: a JSON list whose
// steps are objects {actor_id, session_id, task_id} (SPEC-001 §4.1) or, as in
// tokens minted before the substrate knew that shape, bare actor id strings;
// the two may be mixed. null or an empty list is no delegation. Anything else
// is an error naming the step and what is wrong with it, never quoting the
// token's text.
func ParseDelegationChain(raw []byte) (DelegationChain, error) {
	if len(raw) == 0 || jsonKind(raw) == "null" {
		return nil, nil
	}
	if jsonKind(raw) != "a list" {
		return nil, fmt.Errorf("delegation_chain is %s, want a list of {actor_id, session_id, task_id} objects", jsonKind(raw))
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, errors.New("delegation_chain is not valid JSON")
	}
	chain := make(DelegationChain, 0, len(items))
	for i, item := range items {
		s, err := parseStep(item)
		if err != nil {
			return nil, fmt.Errorf("delegation_chain[%d]: %w", i, err)
		}
		chain = append(chain, s)
	}
	return chain, nil
}

// parseStep reads one step: an object with a non-empty actor_id and optional
// string session_id and task_id (other members are ignored, for later
// additions to the spec), or an actor id string.
func parseStep(item json.RawMessage) (DelegationStep, error) {
	switch jsonKind(item) {
	case "a string":
		var id string
		_ = json.Unmarshal(item, &id)
		if id == "" {
			return DelegationStep{}, errors.New("actor id is empty")
		}
		return DelegationStep{ActorID: id}, nil
	case "an object":
	default:
		return DelegationStep{}, fmt.Errorf("is %s, want an object {actor_id, session_id, task_id} or an actor id string", jsonKind(item))
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(item, &members); err != nil {
		return DelegationStep{}, errors.New("is not valid JSON")
	}
	var s DelegationStep
	for _, m := range []struct {
		name     string
		into     *string
		required bool
	}{{"actor_id", &s.ActorID, true}, {"session_id", &s.SessionID, false}, {"task_id", &s.TaskID, false}} {
		v, ok := members[m.name]
		switch {
		case (!ok || jsonKind(v) == "null") && m.required:
			return DelegationStep{}, fmt.Errorf("%s is missing", m.name)
		case !ok || jsonKind(v) == "null":
		case jsonKind(v) != "a string":
			return DelegationStep{}, fmt.Errorf("%s is %s, want a string", m.name, jsonKind(v))
		default:
			_ = json.Unmarshal(v, m.into)
		}
	}
	if s.ActorID == "" {
		return DelegationStep{}, errors.New("actor_id is empty")
	}
	return s, nil
}

// jsonKind names the kind of a JSON value by its first byte, for messages.
func jsonKind(v []byte) string {
	for _, b := range v {
		switch b {
		case ' ', '\t', '\r', '\n':
			continue
		case '"':
			return "a string"
		case '{':
			return "an object"
		case '[':
			return "a list"
		case 't', 'f':
			return "a boolean"
		case 'n':
			return "null"
		}
		return "a number"
	}
	return "empty"
}
