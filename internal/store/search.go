package store

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/filter"
	"github.com/scidex/substrate/internal/problem"
)

// Search modes.
const (
	ModeAuto       = "AUTO"
	ModeLexical    = "LEXICAL"
	ModeFuzzy      = "FUZZY"
	ModeStructured = "STRUCTURED"
	ModeSemantic   = "SEMANTIC"
	ModeHybrid     = "HYBRID"
)

// MaxQueryLen bounds a search query.
const MaxQueryLen = 500

// SearchParams is the input of search.
type SearchParams struct {
	Query  string
	Types  []string
	Mode   string
	Filter *filter.Expr
	First  *int
	After  string
}

// Hit is one search result.
type Hit struct {
	Artifact *Artifact
	Score    float64
	// TitleHighlight and Highlight mark the matched terms with <mark>…</mark>: in
	// the title, and in a snippet of the content's text.
	TitleHighlight *string
	Highlight      *string
	Cursor         string
}

// SearchResult is a page of hits and how they were found.
type SearchResult struct {
	Hits     []Hit
	HasNext  bool
	ModeUsed string
	FellBack bool
	Notice   string
}

type searchCursor struct {
	Mode  string  `json:"m"`
	Query string  `json:"q"`
	Score float64 `json:"s"`
	PK    int64   `json:"k"`
}

// Search finds artifacts by text (lexical full-text search, with trigram matching
// for short or misspelt terms) or by structure (the filter alone). It answers
// with the mode that ran: SEMANTIC and HYBRID run lexically while no embedding
// backend is configured, and say so.
func (s *Store) Search(ctx context.Context, p SearchParams) (*SearchResult, error) {
	limit, err := PageSize(p.First, "first")
	if err != nil {
		return nil, err
	}
	q := strings.TrimSpace(p.Query)
	if utf8.RuneCountInString(q) > MaxQueryLen {
		return nil, problem.Invalid(problem.Field("query", "maxLength", fmt.Sprintf("a query is at most %d characters", MaxQueryLen), nil))
	}
	for i, t := range p.Types {
		if _, err := s.typeOf(ctx, s.q, t); err != nil {
			if pr, ok := problem.As(err); ok && len(pr.Details) == 1 {
				pr.Details[0].Path = fmt.Sprintf("types[%d]", i)
			}
			return nil, err
		}
	}
	res := &SearchResult{}
	mode := p.Mode
	if mode == "" {
		mode = ModeAuto
	}
	switch mode {
	case ModeSemantic, ModeHybrid:
		res.FellBack = true
		res.Notice = "no embedding backend is configured, so " + mode + " search ran as lexical search (AUTO)"
		mode = ModeAuto
	case ModeStructured:
		if p.Filter == nil && len(p.Types) == 0 {
			return nil, problem.Invalid(problem.Field("filter", "required", "STRUCTURED search selects by filter and types: give at least one", nil))
		}
	case ModeAuto, ModeLexical, ModeFuzzy:
		if q == "" {
			return nil, problem.Invalid(problem.Field("query", "minLength", "a text search needs a query (use mode STRUCTURED to select by filter alone)", q))
		}
	default:
		return nil, problem.Invalid(problem.Field("mode", "enum", "unknown search mode", mode))
	}
	var cur *searchCursor
	if p.After != "" {
		c, err := decodeSearchCursor(p.After, q)
		if err != nil {
			return nil, err
		}
		cur = &c
		mode = c.Mode // page on with what ran on the first page
	}
	run := func(m string) error {
		hits, more, err := s.searchRun(ctx, m, q, p, cur, limit)
		res.Hits, res.HasNext, res.ModeUsed = hits, more, m
		return err
	}
	switch mode {
	case ModeAuto:
		if err := run(ModeLexical); err != nil {
			return nil, err
		}
		if len(res.Hits) == 0 && cur == nil {
			if err := run(ModeFuzzy); err != nil {
				return nil, err
			}
			if len(res.Hits) > 0 {
				res.FellBack = true
				res.Notice = strings.TrimSpace(res.Notice + " no word matched exactly; these are fuzzy (trigram) matches on titles")
			}
		}
	default:
		if err := run(mode); err != nil {
			return nil, err
		}
	}
	return res, nil
}

type searchRow struct {
	dbsqlc.Artifact
	Score          float64
	TitleHighlight *string
	Highlight      *string
}

// highlightOpts mark matched terms and keep snippets short.
const highlightOpts = `StartSel=<mark>, StopSel=</mark>, MaxWords=24, MinWords=8, MaxFragments=2, FragmentDelimiter=" … "`

func (s *Store) searchRun(ctx context.Context, mode, q string, p SearchParams, cur *searchCursor, limit int) ([]Hit, bool, error) {
	b := &filter.Builder{}
	where := []string{"a.is_latest", "(" + b.SQL(p.Filter, "a") + ")", privateSQL(ctx, b, "a")}
	if len(p.Types) > 0 {
		where = append(where, "a.type = ANY("+b.Arg(p.Types)+"::text[])")
	} else {
		// Schema documents are the system's own; they are searched only when asked for.
		where = append(where, "a.type <> 'schema'")
	}
	var score, from, title, snippet string
	switch mode {
	case ModeLexical:
		tsq := "websearch_to_tsquery('english', " + b.Arg(q) + ")"
		from = "search_docs d JOIN artifacts a ON a.pk = d.artifact_pk"
		where = append(where, "d.doc @@ "+tsq)
		// A match in the title ranks above any number of mentions in content: the
		// cover-density rank (0..1) plus 1 when the title itself matches.
		score = "(ts_rank_cd(d.doc, " + tsq + ", 32) + CASE WHEN to_tsvector('english', a.title) @@ " + tsq + " THEN 1 ELSE 0 END)::float8"
		title = "ts_headline('english', p.title, " + tsq + ", '" + highlightOpts + "')"
		snippet = "ts_headline('english', scidex_text(p.content), " + tsq + ", '" + highlightOpts + "')"
	case ModeFuzzy:
		arg := b.Arg(q)
		from = "artifacts a"
		where = append(where, "("+arg+" <% a.title OR a.title % "+arg+")")
		score = "greatest(word_similarity(" + arg + ", a.title), similarity(a.title, " + arg + "))::float8"
		title, snippet = "NULL::text", "NULL::text"
	case ModeStructured:
		from = "artifacts a"
		score = "1::float8"
		title, snippet = "NULL::text", "NULL::text"
	}
	// Keyset paging on (score, pk); STRUCTURED lists newest first, by pk.
	order := "score DESC, a.pk DESC"
	if mode == ModeStructured {
		order = "a.pk DESC"
	}
	if cur != nil {
		if mode == ModeStructured {
			where = append(where, "a.pk < "+b.Arg(cur.PK))
		} else {
			where = append(where, "("+score+", a.pk) < ("+b.Arg(cur.Score)+"::float8, "+b.Arg(cur.PK)+")")
		}
	}
	// Highlights are computed for the page only, after sorting and limiting.
	sql := fmt.Sprintf(`SELECT p.*, %s AS title_highlight, %s AS highlight FROM (
		SELECT a.*, %s AS score FROM %s WHERE %s ORDER BY %s LIMIT %d
	) AS p ORDER BY %s`,
		title, snippet, score, from, strings.Join(where, " AND "), order, limit+1,
		strings.ReplaceAll(strings.ReplaceAll(order, "a.", "p."), "score", "p.score"))
	rows, err := s.db.Query(ctx, sql, b.Args...)
	if err != nil {
		return nil, false, fmt.Errorf("search: %w", err)
	}
	recs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[searchRow])
	if err != nil {
		return nil, false, fmt.Errorf("search: %w", err)
	}
	more := len(recs) > limit
	if more {
		recs = recs[:limit]
	}
	hits := make([]Hit, len(recs))
	for i, r := range recs {
		a := fromRow(r.Artifact)
		if err := s.upgrade(ctx, a); err != nil {
			return nil, false, err
		}
		hits[i] = Hit{Artifact: a, Score: r.Score, TitleHighlight: r.TitleHighlight, Highlight: r.Highlight,
			Cursor: encodeSearchCursor(searchCursor{Mode: mode, Query: queryTag(q), Score: r.Score, PK: r.Pk})}
	}
	return hits, more, nil
}

func queryTag(q string) string {
	sum := sha256.Sum256([]byte(q))
	return hex.EncodeToString(sum[:8])
}

func encodeSearchCursor(c searchCursor) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeSearchCursor(s, q string) (searchCursor, error) {
	var c searchCursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || (c.Mode != ModeLexical && c.Mode != ModeFuzzy && c.Mode != ModeStructured) {
		return c, problem.Invalid(problem.Field("after", "cursor", "is not a search cursor this server issued; pass an endCursor unchanged", s))
	}
	if c.Query != queryTag(q) {
		return c, problem.Invalid(problem.Field("after", "cursor", "this cursor belongs to another query; page with the same query", s))
	}
	return c, nil
}
