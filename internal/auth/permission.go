package auth

import (
	"fmt"
	"strings"
)

// Permission is a capability granted to an actor. Permissions form a
// hierarchy: admin includes reviewer, which includes contributor, which
// includes viewer.
type Permission string

// The permissions an actor may hold, from least to most powerful.
const (
	PermViewer      Permission = "viewer"
	PermContributor Permission = "contributor"
	PermReviewer    Permission = "reviewer"
	PermAdmin       Permission = "admin"
)

// permRank orders the permissions; a permission includes every permission of
// lower or equal rank. Unknown permissions have rank 0 and include nothing.
var permRank = map[Permission]int{
	PermViewer:      1,
	PermContributor: 2,
	PermReviewer:    3,
	PermAdmin:       4,
}

// AllPermissions returns every known permission, from least to most powerful.
func AllPermissions() []Permission {
	return []Permission{PermViewer, PermContributor, PermReviewer, PermAdmin}
}

// Valid reports whether p is one of the known permissions.
func (p Permission) Valid() bool { return permRank[p] > 0 }

// Includes reports whether holding p grants q under the hierarchy. An unknown
// permission neither includes nor is included by anything.
func (p Permission) Includes(q Permission) bool {
	rp, rq := permRank[p], permRank[q]
	return rp > 0 && rq > 0 && rp >= rq
}

// ParsePermissions reads a comma-separated list such as "viewer, reviewer".
// Surrounding spaces are ignored and duplicates are dropped; an empty or blank
// string yields an empty list. An unknown name or an empty item is an error,
// never silently dropped.
func ParsePermissions(csv string) ([]Permission, error) {
	if strings.TrimSpace(csv) == "" {
		return nil, nil
	}
	var out []Permission
	seen := make(map[Permission]bool)
	for i, item := range strings.Split(csv, ",") {
		p := Permission(strings.TrimSpace(item))
		if p == "" {
			return nil, fmt.Errorf("auth: permission %d is empty", i+1)
		}
		if !p.Valid() {
			return nil, fmt.Errorf("auth: unknown permission %q (want one of viewer, contributor, reviewer, admin)", truncate(string(p), 32))
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out, nil
}

// validatePermissions returns an error naming the first unknown permission.
func validatePermissions(perms []Permission) error {
	for _, p := range perms {
		if !p.Valid() {
			return fmt.Errorf("auth: unknown permission %q", truncate(string(p), 32))
		}
	}
	return nil
}

// truncate shortens s to at most n bytes for use in an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
