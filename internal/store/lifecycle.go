package store

import (
	"fmt"
	"strings"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/schema"
)

// RoleOwner is the lifecycle role of an artifact's creator.
const RoleOwner = "owner"

// rolesOf lists the lifecycle roles the actor holds: its permissions with the
// hierarchy expanded, plus "owner" when it created the artifact.
func rolesOf(rc *request.Context, owner bool) map[string]bool {
	roles := map[string]bool{}
	for _, p := range auth.AllPermissions() {
		if rc.Actor.Has(p) {
			roles[string(p)] = true
		}
	}
	if owner {
		roles[RoleOwner] = true
	}
	return roles
}

// transitionAllowed reports whether some declared transition from → to names a
// role the actor holds.
func transitionAllowed(t *schema.Type, from, to string, roles map[string]bool) bool {
	for _, tr := range t.Doc.Lifecycle.Transitions {
		if (tr.From == from || tr.From == "*") && tr.To == to {
			for _, r := range tr.Roles {
				if roles[r] {
					return true
				}
			}
		}
	}
	return false
}

// reviewed applies a type's review rule (schema.Review) to a create or a new
// version by rc: the state the version is written in and the warning that
// tells the writer so, or nil when rc holds a role whose versions need no
// review. It is the one place the rule is applied, whichever operation writes
// the version (registerTool, createArtifact, updateArtifact, a batch); a
// lifecycle move alone is not a new version and is left to the lifecycle
// validators.
func reviewed(t *schema.Type, rc *request.Context) (*string, string) {
	r := t.Doc.Policy.Review
	if r == nil {
		return nil, ""
	}
	for _, role := range r.Roles {
		if rc.Actor.Has(auth.Permission(role)) {
			return nil, ""
		}
	}
	state := r.State
	return &state, fmt.Sprintf("written as %s: a new %s version by anyone without the %s permission waits for review, and what was reviewed keeps serving (policy.review of the %s schema)",
		state, t.Name(), strings.Join(r.Roles, " or "), t.Name())
}
