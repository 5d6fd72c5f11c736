package dispatch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/runtimes"
)

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
