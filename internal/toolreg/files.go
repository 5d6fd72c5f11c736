package toolreg

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/runtimes"
)

// Bundle files live in tool_files, this package's table, by sha256: a
// registration stores the bytes in the transaction that writes the tool
// version listing them (putFiles), a later one may list a file the server
// already holds without uploading it again (have), the runtimes read them
// (DBBundle), and CollectFiles deletes those no tool version lists.

// FileGrace is how long a bundle file is kept after it was last stored or
// asked for, listed or not: a registration that asked whether the server
// holds a file, or stored it, writes the tool version listing it well within
// this, so a collected file is never one a registration in flight will list.
const FileGrace = 24 * time.Hour

// DBBundle serves bundle files from the tool_files table, where registerTool
// stores them by sha256. The runtime that uses a file checks its hash.
type DBBundle struct{ Pool *pgxpool.Pool }

// Open implements runtimes.Bundle.
func (b DBBundle) Open(ctx context.Context, f runtimes.File) (io.ReadCloser, error) {
	content, err := dbsqlc.New(b.Pool).ToolFileGet(ctx, f.SHA256)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, runtimes.Errorf(runtimes.CodeBundleAltered, true, "bundle file %s (sha256 %s) is not stored on this server", f.Path, f.SHA256)
	}
	if err != nil {
		return nil, fmt.Errorf("read bundle file %s: %w", f.Path, err)
	}
	return io.NopCloser(bytes.NewReader(content)), nil
}

// putFiles stores the uploads' bytes in tx, by sha256.
func putFiles(ctx context.Context, tx *store.Tx, files []Upload) error {
	q := dbsqlc.New(tx.Conn())
	for _, f := range files {
		sum := sha256.Sum256(f.Content)
		if err := q.ToolFilePut(ctx, hex.EncodeToString(sum[:]), f.Content, int64(len(f.Content))); err != nil {
			return fmt.Errorf("store bundle file %s: %w", f.Path, err)
		}
	}
	return nil
}

// have returns which of the hashes the server holds, touching each (see
// FileGrace).
func (r *Registrar) have(ctx context.Context, hashes []string) ([]string, error) {
	return dbsqlc.New(r.store.Pool()).ToolFilesHave(ctx, hashes)
}

// CollectFiles deletes the bundle files that no version of any tool lists
// (current or past, whatever its lifecycle state) and that were not stored or
// asked for within FileGrace before now. The server runs it on its sweep
// ticker.
func (r *Registrar) CollectFiles(ctx context.Context, now time.Time) (int64, error) {
	return dbsqlc.New(r.store.Pool()).ToolFilesCollect(ctx, now.Add(-FileGrace))
}
