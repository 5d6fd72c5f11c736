package secrets

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// loadFile reads a secrets file after checking that it is a regular file
// others cannot read. The mode is read from the open file, so the file
// checked is the file read.
func (s *Store) loadFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open secrets file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat secrets file %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("secrets file %s is not a regular file (%s)", path, fi.Mode().Type())
	}
	if perm := fi.Mode().Perm(); perm&0o027 != 0 {
		return fmt.Errorf("secrets file %s has mode %04o: others may read or use it, or its group may write it; chmod 600 (or 640) it", path, perm)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return fmt.Errorf("read secrets file %s: %w", path, err)
	}
	if len(b) > MaxFileBytes {
		return fmt.Errorf("secrets file %s is larger than %d bytes", path, MaxFileBytes)
	}
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		return s.parseJSON(path, b)
	}
	return s.parseLines(path, b)
}

// parseJSON reads {"NAME": "value", ...}. Its errors say where, never what:
// encoding/json's own messages may quote a character of the input.
func (s *Store) parseJSON(path string, b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return fmt.Errorf("secrets file %s: not valid JSON (syntax error at byte %d)", path, syn.Offset)
		}
		return fmt.Errorf("secrets file %s: a JSON secrets file is one object of string values", path)
	}
	for _, name := range sortedRawKeys(m) {
		var v string
		if err := json.Unmarshal(m[name], &v); err != nil {
			return fmt.Errorf("secrets file %s: a value is not a JSON string (a JSON secrets file is one object of string values)", path)
		}
		if err := s.add(name, v, "secrets file "+path); err != nil {
			return err
		}
	}
	return nil
}

// parseLines reads NAME=value lines, # comments and blank lines.
func (s *Store) parseLines(path string, b []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), MaxFileBytes)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		if !ok {
			return fmt.Errorf("secrets file %s line %d: want NAME=value (or a JSON object)", path, n)
		}
		if err := s.add(strings.TrimSpace(name), strings.TrimSpace(value), fmt.Sprintf("secrets file %s line %d", path, n)); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read secrets file %s: %w", path, err)
	}
	return nil
}

func sortedRawKeys(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
