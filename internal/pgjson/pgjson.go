// Package pgjson is the Go type sqlc uses for jsonb columns. pgx scans jsonb into
// a json.RawMessage by running json.Unmarshal over the whole document; JSON here
// is scanned by copying the bytes, which matters on every read of content.
package pgjson

// JSON is a jsonb value as its text. Convert to and from json.RawMessage freely.
type JSON []byte

// ScanBytes copies the value pgx read (pgtype.BytesScanner), without parsing it.
func (j *JSON) ScanBytes(src []byte) error {
	if src == nil {
		*j = nil
		return nil
	}
	*j = append((*j)[:0], src...)
	return nil
}
