package pgembed

import (
	"io"
	"os"
)

// maxLogSize is the size past which the server log is rotated at start.
const maxLogSize = 16 << 20

// openLog opens the server log for appending, first moving an oversized log
// to postgres.log.1. It returns the file and its size, where this run's
// output begins.
func openLog(l layout, r runAs) (*os.File, int64, error) {
	if fi, err := os.Stat(l.logFile); err == nil && fi.Size() > maxLogSize {
		_ = os.Rename(l.logFile, l.logFile+".1")
	}
	f, err := os.OpenFile(l.logFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, 0, err
	}
	if err := r.chown(l.logFile); err != nil {
		f.Close()
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

// logSince returns up to the last 8 KiB the server logged after offset.
func logSince(path string, offset int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size()-offset > 8<<10 {
		offset = fi.Size() - 8<<10
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return ""
	}
	b, _ := io.ReadAll(f)
	return string(b)
}
