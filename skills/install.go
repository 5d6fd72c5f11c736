package skills

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/scidex/substrate/internal/canon"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/internal/toolreg"
)

// Install makes the catalog's skills present and current, as the server (the
// system actor): each skill's tool registered (a new version when its
// manifest changed) and active, and its skill artifact (skill:<name>) with
// its references resolved from references.json and its served status — the
// intended one when the references gate passes for it, else designed
// (lifecycle draft). It runs at every start and changes nothing when
// nothing changed.
func Install(ctx context.Context, reg *toolreg.Registrar, st *store.Store, cat []Skill) error {
	refs, err := References()
	if err != nil {
		return err
	}
	gate := Check(cat, refs)
	ctx = request.With(ctx, request.System("install-skills", time.Now()))
	for _, s := range cat {
		if err := reg.Install(ctx, s.Tool); err != nil {
			return fmt.Errorf("skills: install the %s tool: %w", s.Name, err)
		}
		if err := installSkill(ctx, st, s, refs, gate.Served[s.Name]); err != nil {
			return fmt.Errorf("skills: install the %s skill: %w", s.Name, err)
		}
	}
	return nil
}

// installOp is the server operation skills are written through: the only one
// that sets a skill's served_status (policy.server_fields of the skill schema).
const installOp = "installSkills"

// lifecycleOf is the skill artifact's lifecycle state for a served status.
func lifecycleOf(served string) string {
	if served == Designed {
		return "draft"
	}
	return served
}

func installSkill(ctx context.Context, st *store.Store, s Skill, refs map[string]Reference, served string) error {
	var doc map[string]any
	if err := json.Unmarshal(s.Doc, &doc); err != nil {
		return fmt.Errorf("decode the skill document: %w", err)
	}
	used := make([]any, 0, len(s.References))
	for _, id := range s.References {
		r := refs[id]
		entry := map[string]any{"id": r.ID, "title": r.Title, "status": r.Status}
		if r.Version != "" {
			entry["version"] = r.Version
		}
		if r.URL != nil {
			entry["url"] = *r.URL
		}
		if r.SHA256 != nil {
			entry["sha256"] = *r.SHA256
		}
		if r.RetrievedOn != nil {
			entry["retrieved_on"] = *r.RetrievedOn
		}
		if r.SupersededBy != nil {
			entry["superseded_by"] = *r.SupersededBy
		}
		if len(r.Constants) > 0 {
			entry["constants"] = r.Constants
		}
		used = append(used, entry)
	}
	doc["name"], doc["version"], doc["tool_name"] = s.Name, s.Version, s.Name
	doc["check_logic_version"], doc["references"] = s.CheckLogicVersion, used
	doc["intended_status"], doc["served_status"] = s.Intended, served
	doc["dependencies"] = map[string]any{"tools": []string{s.Name}}
	name := title(doc)
	content, _ := json.Marshal(doc)
	state := lifecycleOf(served)
	r := ref.Ref{Type: "skill", ID: s.Name}
	cur, err := st.Get(ctx, r)
	if errors.Is(err, store.ErrNotFound) {
		res, err := st.ServerCreate(ctx, installOp, store.CreateParams{Type: "skill", ID: s.Name, Title: name, Content: content, LifecycleState: &state})
		if err != nil {
			return err
		}
		return link(ctx, st, res.Ref, s.Name)
	}
	if err != nil {
		return err
	}
	same, err := sameJSON(cur.Content, content)
	if err != nil {
		return err
	}
	curState := ""
	if cur.LifecycleState != nil {
		curState = *cur.LifecycleState
	}
	if same && curState == state {
		return nil
	}
	p := store.UpdateParams{Ref: r.String(), BaseContentHash: cur.ContentHash, Content: content}
	if curState != state {
		p.LifecycleState = &state
	}
	if _, err := st.ServerUpdate(ctx, installOp, p); err != nil {
		if pr, ok := problem.As(err); ok && pr.Code == problem.LifecycleViolation {
			// A served status cannot go back by a declared transition (an
			// available skill whose reference was found wrong): keep the
			// content current and leave the state to a person.
			p.LifecycleState = nil
			_, err = st.ServerUpdate(ctx, installOp, p)
		}
		return err
	}
	return nil
}

// link records that the skill is implemented by its tool (idempotent).
func link(ctx context.Context, st *store.Store, skillRef, tool string) error {
	_, err := st.AddLink(ctx, store.LinkParams{From: skillRef, Predicate: "implemented_by", To: "tool:" + tool})
	return err
}

func title(doc map[string]any) string {
	if s, ok := doc["title"].(string); ok && s != "" {
		delete(doc, "title")
		return s
	}
	name, _ := doc["name"].(string)
	return name
}

func sameJSON(a, b []byte) (bool, error) {
	x, err := canon.Canonical(a)
	if err != nil {
		return false, err
	}
	y, err := canon.Canonical(b)
	if err != nil {
		return false, err
	}
	return bytes.Equal(x, y), nil
}
