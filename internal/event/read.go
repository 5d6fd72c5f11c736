package event

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbsqlc"
)

// page reads up to limit events after a cursor that actor may see, in delivery
// order, stopping at the horizon. heldBack reports that events past the horizon
// exist (a transaction older than them is still running); scanned is where the
// safe part of the read ended, past events the actor may not see.
func page(ctx context.Context, q *dbsqlc.Queries, after Cursor, actor auth.Actor, limit int) (evs []*Event, heldBack bool, err error) {
	rows, err := q.EventListAfter(ctx, dbsqlc.EventListAfterParams{
		AfterXid: pgtype.Uint64{Uint64: after.XID, Valid: true}, AfterID: after.ID,
		Admin: actor.Has(auth.PermAdmin), ActorID: actor.ID, Lim: int32(limit),
	})
	if err != nil {
		return nil, false, fmt.Errorf("read events: %w", err)
	}
	for _, r := range rows {
		e, horizon, err := fromRow(r)
		if err != nil {
			return nil, false, err
		}
		if e.Cursor.XID >= horizon {
			// This and every later row belong to transactions not yet older than
			// all running ones: wait, or a late commit could sort before them.
			return evs, true, nil
		}
		evs = append(evs, e)
	}
	return evs, false, nil
}

// tail is the cursor of the newest event that may be handed out now.
func tail(ctx context.Context, q *dbsqlc.Queries) (Cursor, error) {
	r, err := q.EventTail(ctx)
	if err != nil {
		return Cursor{}, fmt.Errorf("event tail: %w", err)
	}
	x, err := parseXID(r.Xid)
	if err != nil {
		return Cursor{}, err
	}
	return Cursor{XID: x, ID: r.ID}, nil
}
