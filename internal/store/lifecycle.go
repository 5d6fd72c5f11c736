package store

import (
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
