package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/request"
)

// MessageType is the type sendMessage writes and ackMessage acknowledges.
const MessageType = "message"

// BroadcastAll addresses a message to every actor the server knows (admins
// only).
const BroadcastAll = "actors:*"

// Acknowledgement states of a message delivery.
const (
	AckPending   = "pending"
	AckRead      = "read"
	AckCompleted = "completed"
	AckRejected  = "rejected"
)

// SendParams is the input of sendMessage.
type SendParams struct {
	Recipient      string  `json:"recipient"`
	Subject        *string `json:"subject,omitempty"`
	Body           string  `json:"body"`
	Priority       *string `json:"priority,omitempty"`
	InReplyTo      *string `json:"inReplyTo,omitempty"`
	IdempotencyKey string  `json:"-"`
}

// AckParams is the input of ackMessage.
type AckParams struct {
	Ref            string  `json:"ref"`
	Status         string  `json:"status"`
	Response       *string `json:"response,omitempty"`
	IdempotencyKey string  `json:"-"`
}

// Delivery is one recipient's copy of a message: its acknowledgement state.
type Delivery struct {
	MessagePK int64
	Recipient string
	Status    string
	AckedAt   *time.Time
	Response  *string
	// ArchivedAt is when the delivery was archived (retention.go); nil while
	// it is not.
	ArchivedAt *time.Time
}

// SendMessage writes one message artifact and a delivery per recipient; group
// and role recipients fan out to their members. The message.created event is
// private to the sender and the recipients.
func (s *Store) SendMessage(ctx context.Context, p SendParams) (*WriteResult, error) {
	res, replay, err := write(ctx, s, writeOp{Operation: "sendMessage", IdempotencyKey: p.IdempotencyKey, Input: p},
		func(ctx context.Context, w *writer) (*WriteResult, error) { return s.send(ctx, w, p) })
	if err != nil {
		return nil, err
	}
	return s.finish(ctx, res, replay)
}

func (s *Store) send(ctx context.Context, w *writer, p SendParams) (*WriteResult, error) {
	if strings.TrimSpace(p.Body) == "" {
		return nil, problem.Invalid(problem.Field("body", "minLength", "a message needs a body", p.Body))
	}
	recipients, err := s.resolveRecipients(ctx, w, p.Recipient)
	if err != nil {
		return nil, err
	}
	content := map[string]any{"recipient": p.Recipient, "body": p.Body}
	if singleRecipient(p.Recipient) {
		// One recipient: the message itself shows where they are with it. A role or
		// group message keeps each member's state on their delivery only.
		content["ack_status"] = AckPending
	}
	if p.Subject != nil {
		content["subject"] = *p.Subject
	}
	if p.Priority != nil {
		content["priority"] = *p.Priority
	}
	if p.InReplyTo != nil {
		orig, err := ref.Parse(*p.InReplyTo)
		if err != nil || orig.Type != MessageType {
			return nil, problem.Invalid(problem.Field("inReplyTo", "ref", "a reply names the message it answers: message:<id>", *p.InReplyTo))
		}
		row, err := w.q.ArtifactGetByTypeID(ctx, orig.Type, orig.ID)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, problem.NotFoundRef(orig.Unpinned().String())
		}
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", orig, err)
		}
		if ok, err := s.canRead(ctx, w.q, fromRow(row)); err != nil {
			return nil, err
		} else if !ok {
			return nil, problem.NotFoundRef(orig.Unpinned().String())
		}
		content["in_reply_to"] = orig.Unpinned().String()
	}
	title := commentTitle(p.Body)
	if p.Subject != nil && strings.TrimSpace(*p.Subject) != "" {
		title = commentTitle(*p.Subject)
	}
	raw, _ := json.Marshal(content)
	audience := append([]string{w.rc.Actor.ID}, recipients...)
	res, err := s.create(ctx, w, CreateParams{Type: MessageType, Title: title, Content: raw, audience: dedupeSorted(audience)}, "sendMessage")
	if err != nil {
		return nil, err
	}
	if err := w.q.DeliveryInsertMany(ctx, res.Artifact.PK, w.rc.Now, recipients); err != nil {
		return nil, fmt.Errorf("deliver: %w", err)
	}
	return res, nil
}

// resolveRecipients turns an address into actor ids: actor:<id>, @handle,
// actors:role:<role> (the members of role:<role>), group:<id> (its members).
func (s *Store) resolveRecipients(ctx context.Context, w *writer, to string) ([]string, error) {
	bad := func(msg string) error { return problem.Invalid(problem.Field("recipient", "recipient", msg, to)) }
	var ids []string
	switch {
	case strings.HasPrefix(to, "actor:"):
		id := strings.TrimPrefix(to, "actor:")
		if id == "" || strings.ContainsAny(id, " \t\n@") {
			return nil, bad("actor:<id> names one actor")
		}
		ids = []string{id}
	case strings.HasPrefix(to, "@"):
		var err error
		if ids, err = s.handleRecipients(ctx, w, to); err != nil {
			return nil, err
		}
	case to == BroadcastAll:
		if !w.rc.Actor.Has(auth.PermAdmin) {
			return nil, problem.New(problem.PermissionDenied, "recipient: %s delivers to every actor; only admins broadcast (address actor:<id>, @handle, actors:role:<role> or group:<id>)", to)
		}
		all, err := w.q.ActorIDs(ctx)
		if err != nil {
			return nil, fmt.Errorf("resolve %s: %w", to, err)
		}
		for _, id := range all {
			if id != w.rc.Actor.ID { // the sender keeps no copy of their own broadcast
				ids = append(ids, id)
			}
		}
	case strings.HasPrefix(to, "actors:role:"), strings.HasPrefix(to, "group:"):
		typ, id := "group", strings.TrimPrefix(to, "group:")
		if strings.HasPrefix(to, "actors:role:") {
			typ, id = "role", strings.TrimPrefix(to, "actors:role:")
		}
		var err error
		if ids, err = roleMembers(ctx, w.q, typ, id, to); err != nil {
			return nil, err
		}
	default:
		return nil, bad("address a message to actor:<id>, @handle, actors:role:<role>, group:<id> or (admins) actors:*")
	}
	ids = dedupeSorted(ids)
	if len(ids) == 0 {
		return nil, bad(to + " has no members")
	}
	return ids, nil
}

// roleMembers are the members a role or group artifact lists; to is the
// address that named it, for the refusal.
func roleMembers(ctx context.Context, q *dbsqlc.Queries, typ, id, to string) ([]string, error) {
	row, err := q.ArtifactGetByTypeID(ctx, typ, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, problem.Invalid(problem.Field("recipient", "recipient", fmt.Sprintf("no %s artifact %s:%s lists the members to deliver to", typ, typ, id), to))
	}
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", to, err)
	}
	var c struct {
		Members []string `json:"members"`
	}
	_ = json.Unmarshal(row.Content, &c)
	return c.Members, nil
}

// AckMessage records a recipient's acknowledgement: pending -> read ->
// completed | rejected (read may be skipped).
func (s *Store) AckMessage(ctx context.Context, p AckParams) (*WriteResult, error) {
	res, replay, err := write(ctx, s, writeOp{Operation: "ackMessage", IdempotencyKey: p.IdempotencyKey, Input: p},
		func(ctx context.Context, w *writer) (*WriteResult, error) { return s.ack(ctx, w, p) })
	if err != nil {
		return nil, err
	}
	return s.finish(ctx, res, replay)
}

var ackNext = map[string][]string{
	AckPending: {AckRead, AckCompleted, AckRejected},
	AckRead:    {AckCompleted, AckRejected},
}

func (s *Store) ack(ctx context.Context, w *writer, p AckParams) (*WriteResult, error) {
	r, err := ref.Parse(p.Ref)
	if err != nil || r.Type != MessageType {
		return nil, problem.Invalid(problem.Field("ref", "ref", "acknowledge a message: message:<id>", p.Ref))
	}
	switch p.Status {
	case AckRead, AckCompleted, AckRejected:
	default:
		return nil, problem.Invalid(problem.Field("status", "enum", "acknowledge with READ, COMPLETED or REJECTED", p.Status))
	}
	row, err := w.q.ArtifactGetByTypeID(ctx, r.Type, r.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, problem.NotFoundRef(r.Unpinned().String())
	}
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", r, err)
	}
	var c struct {
		Recipient string `json:"recipient"`
	}
	_ = json.Unmarshal(row.Content, &c)
	single := singleRecipient(c.Recipient)
	if single {
		// The acknowledgement is written into the message too: hold it still.
		if row, err = w.q.ArtifactGetForUpdate(ctx, r.Type, r.ID); err != nil {
			return nil, fmt.Errorf("lock %s: %w", r, err)
		}
	}
	d, err := w.q.DeliveryGetForUpdate(ctx, row.Pk, w.rc.Actor.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		if row.CreatedBy == w.rc.Actor.ID {
			return nil, problem.New(problem.PermissionDenied, "you sent %s; only its recipients acknowledge it", r.Unpinned())
		}
		return nil, problem.NotFoundRef(r.Unpinned().String()) // another's mail does not exist for you
	}
	if err != nil {
		return nil, fmt.Errorf("load delivery: %w", err)
	}
	a := fromRow(row)
	res := &WriteResult{Ref: a.Ref().String(), ContentHash: a.ContentHash, RequestID: w.rc.RequestID, Warnings: []string{}, Artifact: a}
	if d.Status == p.Status {
		res.Warnings = append(res.Warnings, "already "+p.Status)
		return res, nil
	}
	if !contains(ackNext[d.Status], p.Status) {
		pr := problem.New(problem.LifecycleViolation, "%s is %s for you; it cannot become %s", r.Unpinned(), d.Status, p.Status)
		pr.Refs = []string{r.Unpinned().String()}
		pr.Extra = &LifecycleInfo{From: d.Status, To: p.Status, Allowed: append([]string{}, ackNext[d.Status]...)}
		return nil, pr
	}
	now := w.rc.Now
	if err := w.q.DeliveryUpdate(ctx, dbsqlc.DeliveryUpdateParams{Status: p.Status, AckedAt: &now, Response: p.Response,
		MessagePk: row.Pk, Recipient: w.rc.Actor.ID}); err != nil {
		return nil, fmt.Errorf("acknowledge: %w", err)
	}
	if single {
		next := map[string]any{}
		_ = json.Unmarshal(row.Content, &next)
		next["ack_status"], next["ack_at"] = p.Status, now.Format(time.RFC3339Nano)
		if p.Response != nil {
			next["response"] = *p.Response
		}
		raw, _ := json.Marshal(next)
		up, err := s.update(ctx, w, UpdateParams{Ref: a.Unpinned().String(), BaseContentHash: a.ContentHash, Content: raw, operation: "ackMessage"})
		if err != nil {
			return nil, err
		}
		res.Ref, res.ContentHash, res.Artifact = up.Ref, up.ContentHash, up.Artifact
	} else if _, err := w.journal(ctx, "ackMessage", a.Ref().String()); err != nil {
		return nil, err
	}
	payload := map[string]any{"ref": a.Unpinned().String(), "recipient": w.rc.Actor.ID, "status": p.Status, "previousStatus": d.Status}
	if p.Response != nil {
		payload["response"] = *p.Response
	}
	if err := w.event(ctx, "message.acked", a.Unpinned().String(), payload, dedupeSorted([]string{row.CreatedBy, w.rc.Actor.ID})); err != nil {
		return nil, err
	}
	return res, nil
}

// MailboxParams selects a page of the caller's mail.
type MailboxParams struct {
	Status string
	// IncludeArchived lists archived messages too.
	IncludeArchived bool
	First           *int
	After           int64 // message pk of the last message of the previous page
}

// MailboxItem is a message and the caller's delivery of it.
type MailboxItem struct {
	Message  *Artifact
	Delivery Delivery
}

// Mailbox lists the caller's messages in a status, newest first.
func (s *Store) Mailbox(ctx context.Context, p MailboxParams) ([]MailboxItem, bool, error) {
	rc := request.From(ctx)
	if rc == nil || rc.Anonymous {
		return nil, false, problem.New(problem.Unauthenticated, "the mailbox needs a token")
	}
	n, err := PageSize(p.First, "first")
	if err != nil {
		return nil, false, err
	}
	before := p.After
	if before == 0 {
		before = 1<<63 - 1
	}
	rows, err := s.q.MailboxList(ctx, dbsqlc.MailboxListParams{Recipient: rc.Actor.ID, Status: p.Status, BeforePk: before, Lim: int32(n + 1),
		IncludeArchived: p.IncludeArchived, ArchiveBefore: s.archiveBefore(rc.Now)})
	if err != nil {
		return nil, false, fmt.Errorf("mailbox: %w", err)
	}
	more := len(rows) > n
	if more {
		rows = rows[:n]
	}
	out := make([]MailboxItem, len(rows))
	for i, r := range rows {
		out[i] = MailboxItem{Message: fromRow(r.Artifact), Delivery: s.deliveryFromRow(ctx, r.MessageDelivery)}
	}
	return out, more, nil
}

// MailboxCount counts the caller's messages in a status (the archived ones
// only with includeArchived).
func (s *Store) MailboxCount(ctx context.Context, status string, includeArchived bool) (int, error) {
	rc := request.From(ctx)
	if rc == nil || rc.Anonymous {
		return 0, problem.New(problem.Unauthenticated, "the mailbox needs a token")
	}
	n, err := s.q.MailboxCount(ctx, dbsqlc.MailboxCountParams{Recipient: rc.Actor.ID, Status: status,
		IncludeArchived: includeArchived, ArchiveBefore: s.archiveBefore(rc.Now)})
	if err != nil {
		return 0, fmt.Errorf("mailbox count: %w", err)
	}
	return int(n), nil
}

func (s *Store) deliveryFromRow(ctx context.Context, r dbsqlc.MessageDelivery) Delivery {
	d := Delivery{MessagePK: r.MessagePk, Recipient: r.Recipient, Status: r.Status, AckedAt: r.AckedAt, Response: r.Response}
	if rc := request.From(ctx); rc != nil {
		d.ArchivedAt = s.archivedAt(d, rc.Now)
	}
	return d
}

// singleRecipient reports whether an address names one actor (rather than the
// members of a role or group).
func singleRecipient(to string) bool {
	return strings.HasPrefix(to, "actor:") || strings.HasPrefix(to, "@")
}

func dedupeSorted(xs []string) []string {
	seen := map[string]bool{}
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		if x != "" && !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}
