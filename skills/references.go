package skills

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

//go:embed references.json
var referencesJSON []byte

// Reference is one guidance document or dataset a skill relies on.
type Reference struct {
	ID           string         `json:"id"`
	Title        string         `json:"title"`
	Kind         string         `json:"kind"`
	Version      string         `json:"version"`
	URL          *string        `json:"url,omitempty"`
	File         string         `json:"file,omitempty"`
	SHA256       *string        `json:"sha256"`
	RetrievedOn  *string        `json:"retrieved_on"`
	SupersededBy *string        `json:"superseded_by"`
	Constants    map[string]any `json:"constants,omitempty"`
	Status       string         `json:"status"`
	Note         string         `json:"note,omitempty"`
}

// Statuses of a reference, and the intended statuses of a skill.
const (
	Verified = "verified"
	ToVerify = "to_verify"

	Designed  = "designed"
	Preview   = "preview"
	Available = "available"
)

// References is the references file, by id.
func References() (map[string]Reference, error) {
	var f struct {
		References []Reference `json:"references"`
	}
	if err := json.Unmarshal(referencesJSON, &f); err != nil {
		return nil, fmt.Errorf("skills: references.json: %w", err)
	}
	out := map[string]Reference{}
	for i, r := range f.References {
		switch {
		case r.ID == "":
			return nil, fmt.Errorf("skills: references.json: entry %d has no id", i)
		case r.Status != Verified && r.Status != ToVerify:
			return nil, fmt.Errorf("skills: references.json: %s: status %q is not verified or to_verify", r.ID, r.Status)
		case r.Status == Verified && (r.SHA256 == nil || *r.SHA256 == ""):
			return nil, fmt.Errorf("skills: references.json: %s is verified but has no sha256", r.ID)
		}
		if _, dup := out[r.ID]; dup {
			return nil, fmt.Errorf("skills: references.json: %s appears twice", r.ID)
		}
		out[r.ID] = r
	}
	return out, nil
}

// Gate is the references check of a catalog: for each skill, whether it may
// be served at its intended status, and the problems that keep it designed.
type Gate struct {
	// Served is each skill's served status: its intended one when every
	// reference it depends on is verified, else designed.
	Served map[string]string
	// Problems name a skill intended for preview or available that depends
	// on a to_verify or unknown reference; any problem fails the check.
	Problems []string
}

// Check runs the gate over skills.
func Check(skills []Skill, refs map[string]Reference) Gate {
	g := Gate{Served: map[string]string{}}
	for _, s := range skills {
		var missing, unverified []string
		for _, id := range s.References {
			r, ok := refs[id]
			switch {
			case !ok:
				missing = append(missing, id)
			case r.Status != Verified:
				unverified = append(unverified, id)
			}
		}
		sort.Strings(missing)
		sort.Strings(unverified)
		served := s.Intended
		if len(missing)+len(unverified) > 0 {
			served = Designed
		}
		g.Served[s.Name] = served
		if len(missing) > 0 {
			g.Problems = append(g.Problems, fmt.Sprintf("%s names references that are not in references.json: %s", s.Name, strings.Join(missing, ", ")))
		}
		if s.Intended != Designed && len(unverified) > 0 {
			g.Problems = append(g.Problems, fmt.Sprintf("%s is intended for %s but depends on references still to_verify: %s (verify them, or keep the skill designed)",
				s.Name, s.Intended, strings.Join(unverified, ", ")))
		}
	}
	return g
}
