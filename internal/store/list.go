package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/filter"
	"github.com/scidex/substrate/internal/problem"
)

// Page sizes of list queries.
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
)

// OrderField is a column artifacts can be listed by.
type OrderField string

// The orderable envelope fields.
const (
	OrderCreatedAt    OrderField = "created_at"
	OrderUpdatedAt    OrderField = "updated_at"
	OrderTitle        OrderField = "title"
	OrderQualityScore OrderField = "quality_score"
)

// sortExpr is the SQL each order sorts by; the pk breaks ties, so keyset paging
// never skips or repeats a row.
var sortExpr = map[OrderField]struct{ expr, cast string }{
	OrderCreatedAt:    {"a.created_at", "timestamptz"},
	OrderUpdatedAt:    {"a.updated_at", "timestamptz"},
	OrderTitle:        {"a.title", "text"},
	OrderQualityScore: {"coalesce(a.quality_score, '-Infinity'::float8)", "float8"},
}

// ListParams selects a page of artifacts of one type.
type ListParams struct {
	Type    string
	Filter  *filter.Expr
	OrderBy OrderField
	Desc    bool
	First   *int
	After   string
}

// Page is one page of a list, each item with its cursor.
type Page struct {
	Items   []*Artifact
	Cursors []string
	HasNext bool
}

type cursor struct {
	Order OrderField `json:"o"`
	Desc  bool       `json:"d"`
	Value string     `json:"v"`
	PK    int64      `json:"k"`
}

// PageSize checks a requested page size; path names the argument in errors.
func PageSize(first *int, path string) (int, error) {
	if first == nil {
		return DefaultPageSize, nil
	}
	if *first < 0 || *first > MaxPageSize {
		return 0, problem.Invalid(problem.Field(path, "range", fmt.Sprintf("must be between 0 and %d", MaxPageSize), *first))
	}
	return *first, nil
}

// List returns a page of artifacts of one type, filtered and ordered, after a
// cursor. Unless the filter mentions isLatest, only latest artifacts are listed.
func (s *Store) List(ctx context.Context, p ListParams) (*Page, error) {
	if _, err := s.typeOf(ctx, s.q, p.Type); err != nil {
		return nil, err
	}
	if p.OrderBy == "" {
		p.OrderBy = OrderCreatedAt
	}
	order, ok := sortExpr[p.OrderBy]
	if !ok {
		return nil, problem.Invalid(problem.Field("orderBy.field", "enum", "unknown order field", string(p.OrderBy)))
	}
	limit, err := PageSize(p.First, "first")
	if err != nil {
		return nil, err
	}
	b := &filter.Builder{}
	where := "a.type = " + b.Arg(p.Type) + " AND (" + b.SQL(p.Filter, "a") + ") AND " + privateSQL(ctx, b, "a")
	if !filter.Mentions(p.Filter, "isLatest") {
		where += " AND a.is_latest"
	}
	if p.After != "" {
		c, err := decodeCursor(p.After, "after")
		if err != nil {
			return nil, err
		}
		if c.Order != p.OrderBy || c.Desc != p.Desc {
			return nil, problem.Invalid(problem.Field("after", "cursor", "this cursor belongs to a listing in another order; page with the same orderBy", p.After))
		}
		cmp := ">"
		if p.Desc {
			cmp = "<"
		}
		where += fmt.Sprintf(" AND (%s, a.pk) %s (%s::%s, %s)", order.expr, cmp, b.Arg(c.Value), order.cast, b.Arg(c.PK))
	}
	dir := "ASC"
	if p.Desc {
		dir = "DESC"
	}
	sql := fmt.Sprintf("SELECT a.* FROM artifacts a WHERE %s ORDER BY %s %s, a.pk %s LIMIT %d",
		where, order.expr, dir, dir, limit+1)
	rows, err := s.db.Query(ctx, sql, b.Args...)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", p.Type, err)
	}
	recs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[dbsqlc.Artifact])
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", p.Type, err)
	}
	page := &Page{}
	if len(recs) > limit {
		page.HasNext = true
		recs = recs[:limit]
	}
	for _, r := range recs {
		a := fromRow(r)
		if err := s.upgrade(ctx, a); err != nil {
			return nil, err
		}
		page.Items = append(page.Items, a)
		page.Cursors = append(page.Cursors, encodeCursor(cursor{Order: p.OrderBy, Desc: p.Desc, Value: sortValue(a, p.OrderBy), PK: a.PK}))
	}
	return page, nil
}

// Count returns how many artifacts a listing would return in all.
func (s *Store) Count(ctx context.Context, typ string, f *filter.Expr) (int, error) {
	b := &filter.Builder{}
	where := "a.type = " + b.Arg(typ) + " AND (" + b.SQL(f, "a") + ") AND " + privateSQL(ctx, b, "a")
	if !filter.Mentions(f, "isLatest") {
		where += " AND a.is_latest"
	}
	var n int
	if err := s.db.QueryRow(ctx, "SELECT count(*) FROM artifacts a WHERE "+where, b.Args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count %s: %w", typ, err)
	}
	return n, nil
}

func sortValue(a *Artifact, f OrderField) string {
	switch f {
	case OrderUpdatedAt:
		return a.UpdatedAt.Format(time.RFC3339Nano)
	case OrderTitle:
		return a.Title
	case OrderQualityScore:
		if a.QualityScore == nil {
			return "-Infinity"
		}
		return strconv.FormatFloat(*a.QualityScore, 'g', -1, 64)
	}
	return a.CreatedAt.Format(time.RFC3339Nano)
}

func encodeCursor(c cursor) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s, path string) (cursor, error) {
	var c cursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || sortExpr[c.Order].expr == "" || !validCursorValue(c) {
		return c, problem.Invalid(problem.Field(path, "cursor", "is not a cursor this server issued; pass an endCursor or edge cursor unchanged", s))
	}
	return c, nil
}

func validCursorValue(c cursor) bool {
	switch sortExpr[c.Order].cast {
	case "timestamptz":
		_, err := time.Parse(time.RFC3339Nano, c.Value)
		return err == nil
	case "float8":
		if c.Value == "-Infinity" {
			return true
		}
		_, err := strconv.ParseFloat(c.Value, 64)
		return err == nil
	}
	return true
}
