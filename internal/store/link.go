package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/pgjson"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
)

// LinkParams is the input of addLink.
type LinkParams struct {
	From           string          `json:"from"`
	Predicate      string          `json:"predicate"`
	To             string          `json:"to"`
	Evidence       []string        `json:"evidence,omitempty"`
	Metadata       json.RawMessage `json:"metadata,omitempty"`
	IdempotencyKey string          `json:"-"`
}

// CiteParams is the input of cite: a `cites` link to the paper of a PubMed id.
type CiteParams struct {
	Ref            string  `json:"ref"`
	PMID           string  `json:"pmid"`
	Span           *string `json:"span,omitempty"`
	Claim          *string `json:"claim,omitempty"`
	IdempotencyKey string  `json:"-"`
}

// AddLink adds a typed edge from one artifact to another. The predicate and the
// target's type must be declared by the source's schema, the target (and every
// piece of evidence) must exist.
func (s *Store) AddLink(ctx context.Context, p LinkParams) (*WriteResult, error) {
	res, replay, err := write(ctx, s, writeOp{Operation: "addLink", IdempotencyKey: p.IdempotencyKey, Input: p},
		func(ctx context.Context, w *writer) (*WriteResult, error) { return s.link(ctx, w, "addLink", p) })
	if err != nil {
		return nil, err
	}
	return s.finish(ctx, res, replay)
}

// Cite links ref to paper:PMID:<pmid> with the predicate cites.
func (s *Store) Cite(ctx context.Context, p CiteParams) (*WriteResult, error) {
	res, replay, err := write(ctx, s, writeOp{Operation: "cite", IdempotencyKey: p.IdempotencyKey, Input: p},
		func(ctx context.Context, w *writer) (*WriteResult, error) { return s.cite(ctx, w, p) })
	if err != nil {
		return nil, err
	}
	return s.finish(ctx, res, replay)
}

var pmidInputRE = regexp.MustCompile(`^(?:PMID:\s*)?([0-9]{1,9})$`)

func (s *Store) cite(ctx context.Context, w *writer, p CiteParams) (*WriteResult, error) {
	m := pmidInputRE.FindStringSubmatch(strings.TrimSpace(p.PMID))
	if m == nil {
		return nil, problem.Invalid(problem.Field("pmid", "pattern", "a PubMed id is 1 to 9 digits, optionally prefixed PMID:", p.PMID))
	}
	meta := map[string]any{}
	if p.Span != nil {
		meta["span"] = *p.Span
	}
	if p.Claim != nil {
		meta["claim"] = *p.Claim
	}
	b, _ := json.Marshal(meta)
	return s.link(ctx, w, "cite", LinkParams{From: p.Ref, Predicate: "cites", To: paperRef(m[1]).String(), Metadata: b})
}

func (s *Store) link(ctx context.Context, w *writer, operation string, p LinkParams) (*WriteResult, error) {
	fromPath, toPath := "from", "to"
	if operation == "cite" {
		fromPath, toPath = "ref", "pmid"
	}
	var problems []problem.Detail
	from, err := ref.Parse(p.From)
	if err != nil {
		problems = append(problems, problem.Field(fromPath, "ref", err.Error(), p.From))
	}
	to, err := ref.Parse(p.To)
	if err != nil {
		problems = append(problems, problem.Field(toPath, "ref", err.Error(), p.To))
	}
	evidence := make([]ref.Ref, 0, len(p.Evidence))
	for i, e := range p.Evidence {
		r, err := ref.Parse(e)
		if err != nil {
			problems = append(problems, problem.Field(fmt.Sprintf("evidence[%d]", i), "ref", err.Error(), e))
			continue
		}
		evidence = append(evidence, r)
	}
	if len(p.Metadata) > 0 && !json.Valid(p.Metadata) {
		problems = append(problems, problem.Field("metadata", "json", "is not valid JSON", nil))
	}
	if len(problems) > 0 {
		return nil, problem.Invalid(problems...)
	}
	srcRow, err := w.q.ArtifactGetByTypeID(ctx, from.Type, from.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, problem.NotFoundRef(from.Unpinned().String())
	}
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", from, err)
	}
	src := fromRow(srcRow)
	if err := s.readable(ctx, w, src); err != nil {
		return nil, err
	}
	t, err := s.registry.GetWith(ctx, w.q, src.Type)
	if err != nil {
		return nil, err
	}
	rule, ok := t.Doc.Links[p.Predicate]
	if !ok {
		return nil, problem.Invalid(problem.Detail{Path: "predicate", Constraint: "declared",
			Message:    fmt.Sprintf("%s artifacts have no %q links", src.Type, p.Predicate),
			Value:      mustJSON(p.Predicate),
			Suggestion: "declared predicates: " + strings.Join(sortedKeys(t.Doc.Links), ", ")})
	}
	if rule.ServerOnly && operations[operation] != opServer {
		return nil, problem.New(problem.PermissionDenied,
			"%s --%s--> links are written only by the server's own operations (links.%s.server_only in the %s schema), not by %s: the server links a result to the call it ran",
			src.Type, p.Predicate, p.Predicate, src.Type, operation)
	}
	if !allowsTarget(rule.Targets, to.Type) {
		return nil, problem.Invalid(problem.Field(toPath, "target_type",
			fmt.Sprintf("%s --%s--> links may point at %s, not %s", src.Type, p.Predicate, strings.Join(rule.Targets, ", "), to.Type), to.String()))
	}
	if rule.EvidenceRequired && len(evidence) == 0 {
		return nil, problem.Invalid(problem.Field("evidence", "evidence_required",
			fmt.Sprintf("%s links are claims: give the refs of the evidence", p.Predicate), nil))
	}
	c := &Checker{s: s, w: w}
	exists, err := c.Existing(ctx, append([]ref.Ref{to}, evidence...))
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, r := range append([]ref.Ref{to}, evidence...) {
		if !exists[r.String()] {
			missing = append(missing, r.String())
		}
	}
	if len(missing) > 0 {
		pr := problem.New(problem.LinkTargetMissing, "no artifact %s; create it first (in a batch, an earlier write may create it)", strings.Join(missing, ", "))
		pr.Refs = missing
		return nil, pr
	}
	tgtRow, err := w.q.ArtifactGetByTypeID(ctx, to.Type, to.ID)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", to, err)
	}
	if ok, err := s.canRead(ctx, w.q, fromRow(tgtRow)); err != nil {
		return nil, err
	} else if !ok {
		pr := problem.New(problem.LinkTargetMissing, "no artifact %s", to.Unpinned())
		pr.Refs = []string{to.Unpinned().String()}
		return nil, pr
	}
	var toHash *string
	if to.IsPinned() {
		toHash = &to.Hash
	}
	evStrings := make([]string, len(evidence))
	for i, e := range evidence {
		evStrings[i] = e.String()
	}
	meta := p.Metadata
	if len(meta) == 0 {
		meta = json.RawMessage("{}")
	}
	warnings := []string{}
	if err := w.recordActor(ctx); err != nil {
		return nil, err
	}
	pk, err := w.q.LinkInsert(ctx, dbsqlc.LinkInsertParams{FromPk: src.PK, Predicate: p.Predicate, ToPk: tgtRow.Pk, ToHash: toHash,
		Evidence: evStrings, CreatedBy: w.rc.Actor.ID, CreatedAt: w.rc.Now, Metadata: pgjson.JSON(meta)})
	if errors.Is(err, pgx.ErrNoRows) {
		// The same edge exists: linking is idempotent.
		existing, err := w.q.LinkGetByEdge(ctx, src.PK, p.Predicate, tgtRow.Pk)
		if err != nil {
			return nil, fmt.Errorf("load existing link: %w", err)
		}
		return &WriteResult{Ref: src.Ref().String(), ContentHash: src.ContentHash, RequestID: w.rc.RequestID, LinkPK: existing.Pk,
			Warnings: []string{fmt.Sprintf("the link %s --%s--> %s already existed; nothing was written", from.Unpinned(), p.Predicate, to.Unpinned())}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("insert link: %w", err)
	}
	if _, err := w.journal(ctx, operation, src.Ref().String()); err != nil {
		return nil, err
	}
	if p.Predicate == PredDerivedFrom {
		if err := inheritPrivacy(ctx, w, src, fromRow(tgtRow)); err != nil {
			return nil, err
		}
	}
	payload := map[string]any{"from": src.Unpinned().String(), "predicate": p.Predicate, "to": to.String(), "evidence": evStrings, "linkId": pk}
	audience, err := w.audience(ctx, src, fromRow(tgtRow))
	if err != nil {
		return nil, err
	}
	if err := w.event(ctx, "link.created", src.Unpinned().String(), payload, audience); err != nil {
		return nil, err
	}
	return &WriteResult{Ref: src.Ref().String(), ContentHash: src.ContentHash, RequestID: w.rc.RequestID, LinkPK: pk, Warnings: warnings}, nil
}

func allowsTarget(targets []string, typ string) bool {
	for _, t := range targets {
		if t == "*" || t == typ {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func linkFromRow(r dbsqlc.Link) *Link {
	return &Link{PK: r.Pk, FromPK: r.FromPk, Predicate: r.Predicate, ToPK: r.ToPk, ToHash: r.ToHash,
		Evidence: r.Evidence, CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt}
}
