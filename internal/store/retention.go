package store

import "time"

// Retention (SPEC-001 §13.7): a message its recipient completed longer ago
// than the retention period is archived for them. An archived message leaves
// the recipient's mailbox lists and counts (unless they ask for archived ones
// too) and stays readable by its ref, with its delivery saying when it was
// archived.
//
// Archival is a function of the delivery's acknowledgement time and the
// request's clock (request.Context.Now, which the server's Opts.Now sets), not
// a job: a delivery completed at t is archived from t + retention on, at
// every read, with nothing to run and nothing a sweep could miss. Tests move
// the clock instead of waiting. A longer retention configured later brings a
// delivery back into the lists until its new date; deliveries are never
// deleted. Only COMPLETED deliveries are archived: a PENDING or READ one is
// still work to do, and a REJECTED one stays where its recipient left it.

// DefaultMessageRetention is 90 days.
const DefaultMessageRetention = 90 * 24 * time.Hour

// MessageRetention is the store's retention period.
func (s *Store) MessageRetention() time.Duration { return s.retention }

// archiveBefore is the acknowledgement time at or before which a completed
// delivery is archived at now.
func (s *Store) archiveBefore(now time.Time) time.Time { return now.Add(-s.retention) }

// archivedAt is when d was archived, as of now; nil while it is not.
func (s *Store) archivedAt(d Delivery, now time.Time) *time.Time {
	if d.Status != AckCompleted || d.AckedAt == nil {
		return nil
	}
	at := d.AckedAt.Add(s.retention)
	if at.After(now) {
		return nil
	}
	return &at
}
