package resolvers

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/scidex/substrate/graph/model"
	"github.com/scidex/substrate/internal/store"
)

func deliveryModel(d *store.Delivery) *model.MessageDelivery {
	return &model.MessageDelivery{RecipientID: d.Recipient, Status: model.AckStatus(strings.ToUpper(d.Status)), AckedAt: d.AckedAt, Response: d.Response, ArchivedAt: d.ArchivedAt}
}

func (r *Resolver) mailbox(ctx context.Context, status *model.AckStatus, first *int, after *string, includeArchived *bool) (*model.ArtifactConnection, error) {
	archived := includeArchived != nil && *includeArchived
	st := store.AckPending
	if status != nil {
		st = strings.ToLower(string(*status))
	}
	afterPK, err := decodePK(after, "after")
	if err != nil {
		return nil, err
	}
	items, more, err := r.Store.Mailbox(ctx, store.MailboxParams{Status: st, First: first, After: afterPK, IncludeArchived: archived})
	if err != nil {
		return nil, err
	}
	ld := r.loaders(ctx)
	conn := &model.ArtifactConnection{Edges: []*model.ArtifactEdge{}, PageInfo: &model.PageInfo{HasNextPage: more}}
	arts := make([]*store.Artifact, len(items))
	for i, it := range items {
		d := it.Delivery
		ld.primeDelivery(it.Message.PK, &d)
		arts[i] = it.Message
		conn.Edges = append(conn.Edges, &model.ArtifactEdge{Cursor: encodePK(it.Message.PK), Node: model.NewArtifact(it.Message)})
	}
	if err := r.prefetch(ctx, arts, path(ctx, selection(ctx), "edges", "node")); err != nil {
		return nil, err
	}
	setPageInfo(conn.PageInfo, len(conn.Edges), func(i int) string { return conn.Edges[i].Cursor }, after != nil)
	conn.CountFunc = func(ctx context.Context) (int, error) { return r.Store.MailboxCount(ctx, st, archived) }
	return conn, nil
}

// messageReplies lists the messages answering b that the caller may read.
func (r *Resolver) messageReplies(ctx context.Context, b *model.Base, first *int, after *string) (*model.ArtifactConnection, error) {
	raw, _ := json.Marshal(map[string]any{"content.in_reply_to": b.A.Unpinned().String()})
	f, err := parseFilter(model.JSON(raw))
	if err != nil {
		return nil, err
	}
	return r.listConnection(ctx, store.ListParams{Type: store.MessageType, Filter: f, OrderBy: store.OrderCreatedAt, First: first}, after)
}
