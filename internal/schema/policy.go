package schema

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Policy is a type's write and read rules, declared in its schema document and
// applied by the generic write path and the read filters for every type, so no
// Go code branches on a type name to decide who may do what
// (docs/policy.md has the rules and the refusals they produce).
//
// A document without a policy gets DefaultPolicy: readable by everyone, written
// by contributors, superseded by its creator or a reviewer.
type Policy struct {
	// Read is who may read the type's artifacts: ReadPublic, or ReadParticipants
	// (the creator, the recipients it was delivered to, and admins).
	Read string `json:"read"`
	// Create, Update and Supersede say who may make each kind of write.
	Create    WriteRule `json:"create"`
	Update    WriteRule `json:"update"`
	Supersede WriteRule `json:"supersede"`
	// ServerFields are content fields that generic writes (createArtifact,
	// updateArtifact, batch) may not set or change: only the operations named
	// write them.
	ServerFields []ServerField `json:"server_fields,omitempty"`
	// Review, when set, makes every new version reviewed: see Review.
	Review *Review `json:"review,omitempty"`
}

// Review is the rule that nothing written by an unreviewed hand serves: a
// create or a new version (any change but a lifecycle move alone) by an actor
// holding none of Roles is written in lifecycle state State, whatever state
// the write asked for, through whichever operation wrote it (registerTool,
// createArtifact, updateArtifact, a batch). Tools are code: a new version is a
// draft until a reviewer makes it active, and the reviewed version keeps
// serving meanwhile.
type Review struct {
	// Roles are the permissions whose holders' versions keep the state they ask
	// for (reviewer, admin).
	Roles []string `json:"roles"`
	// State is the lifecycle state every other new version is written in.
	State string `json:"state"`
}

// Read visibilities.
const (
	ReadPublic       = "public"
	ReadParticipants = "participants"
)

// Roles a write rule may name. The permissions are hierarchical (admin includes
// reviewer includes contributor); owner is the artifact's creator.
const (
	RoleContributor = "contributor"
	RoleReviewer    = "reviewer"
	RoleAdmin       = "admin"
	RoleOwner       = "owner"
)

// WriteRule says who may make one kind of write to a type. Every write also
// needs the contributor permission; a rule only narrows that.
type WriteRule struct {
	// Roles are the roles any one of which allows the write. Empty means
	// contributor.
	Roles []string `json:"roles,omitempty"`
	// ServerOnly: no client operation makes this write; only the server's own
	// operations (the tool dispatcher) do. Ledgers such as tool_call.
	ServerOnly bool `json:"server_only,omitempty"`
	// Via names the only operations that may make this write (messages are
	// created only by sendMessage); empty means any.
	Via []string `json:"via,omitempty"`
	// Hint is told to a client the rule refuses: what to do instead.
	Hint string `json:"hint,omitempty"`
}

// ServerField is a content field written only by the operations it names.
type ServerField struct {
	// Pointer is the field as a JSON pointer into content, e.g. "/status".
	Pointer string `json:"pointer"`
	// WrittenBy names the operations that set it (sendMessage, ackMessage…).
	WrittenBy []string `json:"written_by"`
	// Initial, when set, is the only value a generic create may give the field;
	// without it a generic create may not give the field at all.
	Initial json.RawMessage `json:"initial,omitempty"`
	// Reason is told to a client whose write touched the field.
	Reason string `json:"reason,omitempty"`
}

// DefaultPolicy is the policy of a document that declares none.
func DefaultPolicy() Policy {
	return Policy{
		Read:      ReadPublic,
		Create:    WriteRule{Roles: []string{RoleContributor}},
		Update:    WriteRule{Roles: []string{RoleContributor}},
		Supersede: WriteRule{Roles: []string{RoleOwner, RoleReviewer}},
	}
}

// Participants reports whether only the type's participants may read it.
func (p *Policy) Participants() bool { return p.Read == ReadParticipants }

// Name is the rule's place in the document, for refusals ("policy.create").
func ruleName(kind string) string { return "policy." + kind }

// check validates a policy against what the meta-schema cannot say: that its
// rules make sense together and its pointers are JSON pointers. Whether the
// operations it names exist is for the build to say (Document.CheckKnown).
func (p *Policy) check() []string {
	var out []string
	switch p.Read {
	case ReadPublic, ReadParticipants:
	default:
		out = append(out, fmt.Sprintf("policy.read: %q is not public or participants", p.Read))
	}
	for _, r := range []struct {
		kind string
		rule WriteRule
	}{{"create", p.Create}, {"update", p.Update}, {"supersede", p.Supersede}} {
		for _, role := range r.rule.Roles {
			switch role {
			case RoleContributor, RoleReviewer, RoleAdmin, RoleOwner:
			default:
				out = append(out, fmt.Sprintf("%s.roles: unknown role %q (contributor, reviewer, admin or owner)", ruleName(r.kind), role))
			}
		}
		if r.kind == "create" && contains(r.rule.Roles, RoleOwner) {
			out = append(out, "policy.create.roles: owner means the artifact's creator, which a create has not got yet")
		}
		if r.rule.ServerOnly && (len(r.rule.Roles) > 0 || len(r.rule.Via) > 0) {
			out = append(out, ruleName(r.kind)+": server_only excludes roles and via")
		}
	}
	if r := p.Review; r != nil {
		if len(r.Roles) == 0 {
			out = append(out, "policy.review.roles: name the permissions whose versions need no review")
		}
		for _, role := range r.Roles {
			if role != RoleContributor && role != RoleReviewer && role != RoleAdmin {
				out = append(out, fmt.Sprintf("policy.review.roles: %q is not a permission (contributor, reviewer or admin)", role))
			}
		}
	}
	seen := map[string]bool{}
	for i, f := range p.ServerFields {
		at := fmt.Sprintf("policy.server_fields[%d]", i)
		if !strings.HasPrefix(f.Pointer, "/") || len(f.Pointer) < 2 {
			out = append(out, fmt.Sprintf("%s.pointer: %q is not a JSON pointer into content", at, f.Pointer))
		}
		if seen[f.Pointer] {
			out = append(out, fmt.Sprintf("%s.pointer: %q is listed twice", at, f.Pointer))
		}
		seen[f.Pointer] = true
		if len(f.WrittenBy) == 0 {
			out = append(out, at+".written_by: name the operations that write the field")
		}
	}
	return out
}

// withDefaults fills what a document left out from DefaultPolicy.
func (p *Policy) withDefaults() {
	def := DefaultPolicy()
	if p.Read == "" {
		p.Read = def.Read
	}
	for _, r := range []struct{ got, def *WriteRule }{{&p.Create, &def.Create}, {&p.Update, &def.Update}, {&p.Supersede, &def.Supersede}} {
		if len(r.got.Roles) == 0 && !r.got.ServerOnly {
			r.got.Roles = r.def.Roles
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
