package auth

import (
	"slices"
	"testing"
)

func TestHasFollowsTheHierarchy(t *testing.T) {
	all := AllPermissions()
	tests := []struct {
		held []Permission
		has  []Permission // every other known permission must be refused
	}{
		{nil, nil},
		{[]Permission{PermViewer}, []Permission{PermViewer}},
		{[]Permission{PermContributor}, []Permission{PermViewer, PermContributor}},
		{[]Permission{PermReviewer}, []Permission{PermViewer, PermContributor, PermReviewer}},
		{[]Permission{PermAdmin}, all},
		{[]Permission{PermViewer, PermReviewer}, []Permission{PermViewer, PermContributor, PermReviewer}},
		{[]Permission{"superuser"}, nil},
	}
	for _, tt := range tests {
		a := Actor{ID: "x", Kind: KindHuman, Permissions: tt.held}
		for _, p := range all {
			if got, want := a.Has(p), slices.Contains(tt.has, p); got != want {
				t.Errorf("actor with %v: Has(%s) = %v, want %v", tt.held, p, got, want)
			}
		}
		if a.Has("superuser") || a.Has("") {
			t.Errorf("actor with %v has an unknown permission", tt.held)
		}
	}
}

func TestParsePermissions(t *testing.T) {
	tests := []struct {
		in      string
		want    []Permission
		wantErr bool
	}{
		{"", nil, false},
		{"  ", nil, false},
		{"viewer", []Permission{PermViewer}, false},
		{"viewer, reviewer ,admin", []Permission{PermViewer, PermReviewer, PermAdmin}, false},
		{"admin,admin", []Permission{PermAdmin}, false},
		{"viewer,,admin", nil, true},
		{"viewer,", nil, true},
		{"Admin", nil, true},
		{"viewer,root", nil, true},
	}
	for _, tt := range tests {
		got, err := ParsePermissions(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParsePermissions(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("ParsePermissions(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestValidKind(t *testing.T) {
	for _, k := range []string{"human", "ai_local", "ai_external", "ai_swarm"} {
		if !ValidKind(k) {
			t.Errorf("ValidKind(%q) = false", k)
		}
	}
	for _, k := range []string{"", "Human", "ai", "robot", "ai_swarm "} {
		if ValidKind(k) {
			t.Errorf("ValidKind(%q) = true", k)
		}
	}
}
