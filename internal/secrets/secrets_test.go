package secrets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const value = "v4lue-that-must-not-leak"

func writeFile(t *testing.T, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secrets")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadEnvironmentAndFile(t *testing.T) {
	for name, content := range map[string]string{
		"lines": "# a comment\n\nFROM_FILE=" + value + "\n  SPACED = a b c  \nEQUALS=x=y\r\n",
		"json":  `  {"FROM_FILE": "` + value + `", "SPACED": "a b c", "EQUALS": "x=y"}`,
	} {
		t.Run(name, func(t *testing.T) {
			s, err := Load(Options{
				Environ: []string{"PATH=/bin", "SCIDEX_SECRET_FROM_ENV=" + value, "SCIDEX_SECRETS_FILE=ignored"},
				File:    writeFile(t, content, 0o640),
			})
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"FROM_ENV": value, "FROM_FILE": value, "SPACED": "a b c", "EQUALS": "x=y"}
			if got := strings.Join(s.Names(), ","); got != "EQUALS,FROM_ENV,FROM_FILE,SPACED" {
				t.Errorf("names %s", got)
			}
			for n, v := range want {
				got, ok := s.Lookup(n)
				if !ok || got.Reveal() != v {
					t.Errorf("%s = %q, %v; want %q", n, got.Reveal(), ok, v)
				}
			}
			if s.Has("MISSING") || s.Has("FILE") {
				t.Error("Has reports a secret that is not there")
			}
		})
	}
}

// A malformed secrets configuration stops the server, with an error that
// names the entry and never prints a value.
func TestLoadRefuses(t *testing.T) {
	for name, c := range map[string]struct {
		env     []string
		content string
		mode    os.FileMode
		want    string
	}{
		"world-readable": {content: "A=" + value, mode: 0o644, want: "mode 0644"},
		"world-only":     {content: "A=" + value, mode: 0o604, want: "mode 0604"},
		"group-writable": {content: "A=" + value, mode: 0o620, want: "mode 0620"},
		"no equals":      {content: "A=1\n" + value + "\n", mode: 0o600, want: "line 2"},
		"bad name":       {content: value + "ish=1", mode: 0o600, want: "not a secret name"},
		"lower name":     {content: "lower=" + value, mode: 0o600, want: "not a secret name"},
		"empty":          {content: "A=\n", mode: 0o600, want: "secret A is empty"},
		"control":        {content: `{"A": "` + value + `\n"}`, mode: 0o600, want: "control character"},
		"twice in file":  {content: "A=" + value + "\nA=" + value, mode: 0o600, want: "defined twice"},
		"env and file":   {env: []string{"SCIDEX_SECRET_A=" + value}, content: "A=" + value, mode: 0o600, want: "defined twice"},
		"json syntax":    {content: `{"A": "` + value + `",}`, mode: 0o600, want: "syntax error at byte"},
		"json number":    {content: `{"A": 12345}`, mode: 0o600, want: "an entry is a string (the value) or an object"},
		"json array":     {content: `{"A": ["` + value + `"]}`, mode: 0o600, want: "an entry is a string (the value) or an object"},
		"env bad name":   {env: []string{"SCIDEX_SECRET_a-b=" + value}, want: `"a-b" is not a secret name`},
		"env empty":      {env: []string{"SCIDEX_SECRET_A="}, want: "secret A is empty"},
	} {
		t.Run(name, func(t *testing.T) {
			o := Options{Environ: append([]string{}, c.env...)}
			if c.content != "" {
				o.File = writeFile(t, c.content, c.mode)
			}
			_, err := Load(o)
			if err == nil {
				t.Fatalf("Load accepted it")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not say %q", err, c.want)
			}
			if strings.Contains(err.Error(), value) || strings.Contains(err.Error(), "v4lue") {
				t.Errorf("the error prints the value: %v", err)
			}
		})
	}
	if _, err := Load(Options{Environ: []string{}, File: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory as the secrets file: %v", err)
	}
	if _, err := Load(Options{Environ: []string{}, File: filepath.Join(t.TempDir(), "none")}); err == nil {
		t.Error("a missing secrets file was accepted")
	}
}

// A Value printed, logged or marshalled any way shows [redacted].
func TestValueRedacted(t *testing.T) {
	s, err := New(map[string]string{"A": value}, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := s.Lookup("A")
	var logs bytes.Buffer
	l := slog.New(slog.NewJSONHandler(&logs, nil))
	l.Info("x", "secret", v, "any", any(v))
	l.Info("y", slog.Any("group", struct{ V Value }{v}))
	j, _ := json.Marshal(map[string]any{"v": v, "s": struct{ V Value }{v}})
	text := fmt.Sprintf("%v %s %q %x %+v %#v %d", v, v, v, v, v, v, v) + fmt.Sprint(v) + fmt.Sprintf("%+v", struct{ V Value }{v}) + string(j) + logs.String()
	if strings.Contains(text, value) || strings.Contains(text, fmt.Sprintf("%x", value)) {
		t.Errorf("a Value printed its secret: %s", text)
	}
	if !strings.Contains(text, "[redacted]") {
		t.Errorf("no redacted form in %s", text)
	}
}
