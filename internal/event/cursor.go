package event

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/scidex/substrate/internal/problem"
)

// Cursor is a position in the event log: events are delivered in (XID, ID) order.
type Cursor struct {
	XID uint64
	ID  int64
}

// Less orders cursors the way events are delivered.
func (c Cursor) Less(o Cursor) bool {
	return c.XID < o.XID || (c.XID == o.XID && c.ID < o.ID)
}

// String is the opaque form clients see.
func (c Cursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte("ev:" + strconv.FormatUint(c.XID, 10) + ":" + strconv.FormatInt(c.ID, 10)))
}

// ParseCursor reads a cursor a client sent back; path names the argument in errors.
func ParseCursor(s, path string) (Cursor, error) {
	bad := problem.Invalid(problem.Field(path, "cursor", "is not an event cursor this server issued; pass an event's cursor (or a poll's cursor) unchanged", s))
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, bad
	}
	parts := strings.Split(string(b), ":")
	if len(parts) != 3 || parts[0] != "ev" {
		return Cursor{}, bad
	}
	x, err1 := strconv.ParseUint(parts[1], 10, 64)
	id, err2 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil || id < 0 {
		return Cursor{}, bad
	}
	return Cursor{XID: x, ID: id}, nil
}

func parseXID(s string) (uint64, error) {
	x, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("xid %q: %w", s, err)
	}
	return x, nil
}
