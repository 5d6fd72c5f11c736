package secrets

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
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

// parseJSON reads one JSON object whose members are secrets:
//
//	{"NAME": "value", "OTHER": {"value": "…", "tools": […], "hosts": […]}, "FROM_ENV": {"tools": […], "hosts": […]}}
//
// Its errors say where, never what: encoding/json's own messages may quote
// a character of the input.
func (s *Store) parseJSON(path string, b []byte) error {
	where := "secrets file " + path
	dec := json.NewDecoder(bytes.NewReader(b))
	syntax := func(err error) error {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return fmt.Errorf("%s: not valid JSON (syntax error at byte %d)", where, syn.Offset)
		}
		return fmt.Errorf("%s: not valid JSON (it ends early)", where)
	}
	if _, err := dec.Token(); err != nil { // the '{', which loadFile saw
		return syntax(err)
	}
	seen := map[string]bool{}
	var grantOnly []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return syntax(err)
		}
		name, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return syntax(err)
		}
		at := fmt.Sprintf("%s, member %d", where, len(seen)+1)
		if ValidName(name) {
			at = fmt.Sprintf("%s, secret %s", where, name)
		}
		if seen[name] {
			return fmt.Errorf("%s: the name is written twice in the file; keep one", at)
		}
		seen[name] = true
		e, err := parseEntry(raw)
		if err != nil {
			return fmt.Errorf("%s: %w", at, err)
		}
		if e.Value != nil {
			if err := s.add(name, *e.Value, at); err != nil {
				return err
			}
		} else if e.Tools == nil && e.Hosts == nil {
			return fmt.Errorf("%s: the entry has neither a value nor a grant", at)
		} else {
			grantOnly = append(grantOnly, name)
		}
		if e.Tools != nil || e.Hosts != nil {
			if err := s.addGrant(name, Grant{Tools: e.Tools, Hosts: e.Hosts}, at); err != nil {
				return err
			}
		}
	}
	if _, err := dec.Token(); err != nil { // the '}'
		return syntax(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: more than one JSON value (a JSON secrets file is one object)", where)
	}
	for _, name := range grantOnly {
		if !s.Has(name) {
			return fmt.Errorf("%s, secret %s: a grant without a value is for a secret of the environment, and %s%s is not set", where, name, EnvPrefix, name)
		}
	}
	return nil
}

// entry is one member of a JSON secrets file: a string (the value, granted
// to nothing) or an object of value, tools and hosts.
type entry struct {
	Value *string
	Tools []string
	Hosts []string
}

// entryKeys are the keys of an entry object; a key of few lower-case
// letters cannot be a secret, so an unknown one is quoted.
var entryKeys = regexp.MustCompile(`^[a-z_]{1,16}$`)

func parseEntry(raw json.RawMessage) (*entry, error) {
	if len(raw) > 0 && raw[0] == '"' {
		var v string
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, errors.New("the value is not a JSON string")
		}
		return &entry{Value: &v}, nil
	}
	var m map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &m) != nil {
		return nil, errors.New(`an entry is a string (the value) or an object {"value": "…", "tools": ["tool.name"], "hosts": ["host:port"]}`)
	}
	var e entry
	for _, k := range sortedKeys(m) {
		var err error
		switch k {
		case "value":
			var v string
			if err = json.Unmarshal(m[k], &v); err == nil {
				e.Value = &v
			} else {
				err = errors.New(`"value" is not a JSON string`)
			}
		case "tools", "hosts":
			var l []string
			if err = json.Unmarshal(m[k], &l); err != nil || l == nil {
				err = fmt.Errorf("%q is not a list of strings", k)
			} else if k == "tools" {
				e.Tools = l
			} else {
				e.Hosts = l
			}
		default:
			if entryKeys.MatchString(k) {
				err = fmt.Errorf("unknown key %q (an entry has value, tools and hosts)", k)
			} else {
				err = errors.New("an unknown key (an entry has value, tools and hosts)")
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return &e, nil
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
