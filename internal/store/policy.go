package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/canon"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/schema"
)

// A type's policy (schema.Policy, declared in its schema document) is applied
// here for every type alike: who may create, update and supersede its
// artifacts, through which operations, and which content fields only the
// server's operations write. docs/policy.md states the rules.

// opKind is how the policy sees an operation.
type opKind int

const (
	// opClient operations take the content from the client (createArtifact,
	// updateArtifact and the writes of a batch) or write around it (links,
	// signals, comments).
	opClient opKind = iota + 1
	// opDedicated operations are client mutations whose content the server
	// computes: sendMessage writes the recipient, ackMessage the acknowledgement.
	opDedicated
	// opServer operations are the server's own (the tool dispatcher's): the only
	// ones a server_only rule admits. They are reached through ServerCreate and
	// ServerUpdate, never with a client's content unchecked.
	opServer
)

// operations are the write operations of this server, by the name the journal
// records. A policy may name only these (schema.Known.Operation).
var operations = map[string]opKind{
	"createArtifact": opClient, "updateArtifact": opClient, "supersedeArtifact": opClient,
	"addComment": opClient, "addLink": opClient, "addSignal": opClient, "cite": opClient, "batch": opClient,
	"sendMessage": opDedicated, "ackMessage": opDedicated, "registerTool": opDedicated,
	"claimHandle": opDedicated, "renameHandle": opDedicated,
	// The tool dispatcher's operations (docs/policy.md): they write the ledgers.
	"invokeTool": opServer, "cancelToolCall": opServer, "runSkill": opServer,
	"claimWorkPacket": opServer, "completeWorkPacket": opServer,
	// The skills' installer: a skill's served status follows the references gate.
	"installSkills": opServer,
	// `scidex schema upgrade`: an artifact's content upgraded and stored at
	// its type's current schema version (upgrade.go).
	"upgradeSchema": opServer,
	// An admin's setBudget: the budget_set event, to the actor whose budget it is.
	"setBudget": opServer,
	// The debate verbs (tools/debate): the rounds they append, the session's
	// turn and synthesis, and their events.
	"debate": opServer,
}

// Known is what this build knows of the names a schema document may use.
func Known() schema.Known {
	return schema.Known{
		Validator:  func(name string) bool { _, ok := validators[name]; return ok },
		Validators: ValidatorNames(),
		Operation:  func(name string) bool { return operations[name] != 0 },
	}
}

// allowWrite applies one of a type's write rules (kind: create, update or
// supersede) to a write by rc through operation op; owner is the artifact's
// creator ("" on create). A refusal is PERMISSION_DENIED naming the rule.
func allowWrite(t *schema.Type, kind string, rule schema.WriteRule, op string, rc *request.Context, owner string) error {
	deny := func(format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		if rule.Hint != "" {
			msg += "; " + rule.Hint
		}
		return problem.New(problem.PermissionDenied, "%s", msg)
	}
	verb := map[string]string{"create": "created", "update": "updated", "supersede": "superseded"}[kind]
	if rule.ServerOnly {
		if operations[op] != opServer {
			return deny("%s artifacts are %s only by the server's own operations (policy.%s.server_only in the %s schema), not by %s",
				t.Name(), verb, kind, t.Name(), op)
		}
		return nil
	}
	if len(rule.Via) > 0 && !contains(rule.Via, op) {
		return deny("%s artifacts are %s only through %s (policy.%s.via in the %s schema), not through %s",
			t.Name(), verb, strings.Join(rule.Via, " or "), kind, t.Name(), op)
	}
	if operations[op] != opClient {
		// A dedicated or server operation computes the content itself and checks
		// its own rule (only a recipient acknowledges; the dispatcher authorized
		// the call it records); roles govern content a client supplies.
		return nil
	}
	for _, role := range rule.Roles {
		switch {
		case role == schema.RoleOwner && owner != "" && owner == rc.Actor.ID:
			return nil
		case role != schema.RoleOwner && rc.Actor.Has(auth.Permission(role)):
			return nil
		}
	}
	return deny("%s a %s artifact needs %s (policy.%s.roles in the %s schema)",
		map[string]string{"create": "creating", "update": "updating", "supersede": "superseding"}[kind], t.Name(), rolesText(rule.Roles), kind, t.Name())
}

// rolesText names roles for a refusal: "the owner or the admin permission".
func rolesText(roles []string) string {
	parts := make([]string, 0, len(roles))
	var perms []string
	for _, r := range roles {
		if r == schema.RoleOwner {
			parts = append(parts, "to be its creator")
		} else {
			perms = append(perms, r)
		}
	}
	if len(perms) > 0 {
		parts = append(parts, "the "+strings.Join(perms, " or ")+" permission")
	}
	return strings.Join(parts, " or ")
}

// serverFieldsOnCreate refuses server fields a create through op may not set:
// each must be absent, or hold its declared initial value.
func serverFieldsOnCreate(t *schema.Type, op string, content json.RawMessage) []problem.Detail {
	fields := t.Doc.Policy.ServerFields
	if len(fields) == 0 {
		return nil
	}
	doc := decodeObject(content)
	var out []problem.Detail
	for _, f := range fields {
		if contains(f.WrittenBy, op) {
			continue
		}
		v, ok := atPointer(doc, f.Pointer)
		if !ok || (f.Initial != nil && sameJSON(v, f.Initial)) {
			continue
		}
		msg := "written only by " + strings.Join(f.WrittenBy, " or ")
		if f.Initial != nil {
			msg += "; a new artifact starts with " + string(f.Initial)
		}
		out = append(out, serverFieldProblem(t, f, msg, v))
	}
	return out
}

// serverFieldsOnUpdate refuses changes to server fields by an update through op.
func serverFieldsOnUpdate(t *schema.Type, op string, cur, next json.RawMessage) []problem.Detail {
	fields := t.Doc.Policy.ServerFields
	if len(fields) == 0 {
		return nil
	}
	before, after := decodeObject(cur), decodeObject(next)
	var out []problem.Detail
	for _, f := range fields {
		if contains(f.WrittenBy, op) {
			continue
		}
		a, hadA := atPointer(before, f.Pointer)
		b, hasB := atPointer(after, f.Pointer)
		if hadA == hasB && (!hasB || sameJSON(a, b)) {
			continue
		}
		out = append(out, serverFieldProblem(t, f, "written only by "+strings.Join(f.WrittenBy, " or ")+"; the update may not change it", b))
	}
	return out
}

func serverFieldProblem(t *schema.Type, f schema.ServerField, msg string, v json.RawMessage) problem.Detail {
	if f.Reason != "" {
		msg = f.Reason
	}
	return problem.Detail{Path: pointerPath(f.Pointer), Constraint: "readOnly", Value: v,
		Message: fmt.Sprintf("%s (policy.server_fields of the %s schema)", msg, t.Name())}
}

// decodeObject decodes content for pointer lookups; content was validated as an
// object before this runs, so a failure leaves nothing to look up.
func decodeObject(raw json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	return m
}

// atPointer returns the value at a JSON pointer (RFC 6901) into an object.
func atPointer(doc map[string]json.RawMessage, pointer string) (json.RawMessage, bool) {
	toks := pointerTokens(pointer)
	cur := doc
	for i, tok := range toks {
		v, ok := cur[tok]
		if !ok {
			return nil, false
		}
		if i == len(toks)-1 {
			return v, true
		}
		if err := json.Unmarshal(v, &cur); err != nil || cur == nil {
			return nil, false
		}
	}
	return nil, false
}

func pointerTokens(pointer string) []string {
	toks := strings.Split(strings.TrimPrefix(pointer, "/"), "/")
	for i, t := range toks {
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks
}

// pointerPath is the problem path of a content pointer: "/a/b" -> "content.a.b".
func pointerPath(pointer string) string { return schema.JoinPath("content", pointerTokens(pointer)) }

// sameJSON compares two JSON values canonically (key order, number spelling).
func sameJSON(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	ca, err1 := canon.Canonical(a)
	cb, err2 := canon.Canonical(b)
	return err1 == nil && err2 == nil && bytes.Equal(ca, cb)
}
