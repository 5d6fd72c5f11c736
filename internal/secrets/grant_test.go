package secrets

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/toolname"
)

// The JSON secrets file grants each secret to tool names and host:port
// pairs; the old forms (a string member, a NAME=value line) and an
// environment secret without a grant in the file define a secret usable by
// nothing, and Ungranted names them for the start-up warning.
func TestGrantsFromFile(t *testing.T) {
	content := `{
	  "UNITS_TOKEN": {"value": "` + value + `", "tools": ["http-units", "pk.nca"], "hosts": ["127.0.0.1:8765", "Units.Example:443", "[::1]:8765"]},
	  "FROM_ENV": {"tools": ["http-units"], "hosts": ["units.example:443"]},
	  "OLD_STYLE": "` + value + `",
	  "VALUE_ONLY": {"value": "` + value + `"}
	}`
	s, err := Load(Options{Environ: []string{"SCIDEX_SECRET_FROM_ENV=" + value, "SCIDEX_SECRET_ENV_ONLY=" + value}, File: writeFile(t, content, 0o600)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		secret, tool, url string
		want              bool
	}{
		{"UNITS_TOKEN", "http-units", "http://127.0.0.1:8765/convert", true},
		{"UNITS_TOKEN", "pk.nca", "https://units.example/x", true},          // 443 filled in, case folded
		{"UNITS_TOKEN", "http-units", "https://UNITS.EXAMPLE:443/", true},   // as the dialer sees it
		{"UNITS_TOKEN", "http-units", "http://[0:0::1]:8765/", true},        // IPv6 canonical, bracketed
		{"UNITS_TOKEN", "http-units", "http://127.0.0.1:08765/", true},      // the port dialled is 8765
		{"UNITS_TOKEN", "http-units", "http://127.0.0.1:8766/", false},      // another port
		{"UNITS_TOKEN", "http-units", "http://localhost:8765/", false},      // another name for it
		{"UNITS_TOKEN", "http-units", "http://units.example/", false},       // http: port 80
		{"UNITS_TOKEN", "http-units", "https://units.example.:443/", false}, // the absolute name is another name
		{"UNITS_TOKEN", "http-units", "http://[::ffff:127.0.0.1]:8765/", false},
		{"UNITS_TOKEN", "http-units", "ftp://127.0.0.1:8765/", false},
		{"UNITS_TOKEN", "other.tool", "http://127.0.0.1:8765/", false},
		{"UNITS_TOKEN", "http-units.v2", "http://127.0.0.1:8765/", false},
		{"FROM_ENV", "http-units", "https://units.example/", true},
		{"FROM_ENV", "pk.nca", "https://units.example/", false},
		{"OLD_STYLE", "http-units", "http://127.0.0.1:8765/", false},
		{"VALUE_ONLY", "http-units", "http://127.0.0.1:8765/", false},
		{"ENV_ONLY", "http-units", "http://127.0.0.1:8765/", false},
		{"MISSING", "http-units", "http://127.0.0.1:8765/", false},
	} {
		u, err := url.Parse(c.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Granted(c.secret, c.tool, Target(u)); got != c.want {
			t.Errorf("Granted(%s, %s, %s) = %v, want %v (target %q)", c.secret, c.tool, c.url, got, c.want, Target(u))
		}
	}
	if got := strings.Join(s.Ungranted(), ","); got != "ENV_ONLY,OLD_STYLE,VALUE_ONLY" {
		t.Errorf("Ungranted = %s", got)
	}
	if v, _ := s.Lookup("UNITS_TOKEN"); v.Reveal() != value {
		t.Error("the object form lost its value")
	}
	lines, err := Load(Options{Environ: []string{}, File: writeFile(t, "A="+value+"\n", 0o600)})
	if err != nil || lines.Granted("A", "t", "127.0.0.1:1") || strings.Join(lines.Ungranted(), ",") != "A" {
		t.Errorf("a NAME=value line is granted to something: %v %v", err, lines.Ungranted())
	}
}

// A malformed grant stops the server with an error that names the entry
// and never prints a value.
func TestGrantRefuses(t *testing.T) {
	entry := func(rest string) string { return `{"A": {"value": "` + value + `"` + rest + `}}` }
	for name, c := range map[string]struct {
		env     []string
		content string
		want    string
	}{
		"unknown key":        {content: entry(`, "tool": ["t"], "hosts": ["h:1"]`), want: `secret A: unknown key "tool"`},
		"value-like key":     {content: `{"A": {"` + value + `": 1}}`, want: "secret A: an unknown key"},
		"host without port":  {content: entry(`, "tools": ["t"], "hosts": ["units.example"]`), want: "secret A: hosts[0]: no port"},
		"ipv6 without port":  {content: entry(`, "tools": ["t"], "hosts": ["h:1", "[::1]"]`), want: "hosts[1]: no port"},
		"bare ipv6":          {content: entry(`, "tools": ["t"], "hosts": ["::1"]`), want: "hosts[0]: not host:port"},
		"bad port":           {content: entry(`, "tools": ["t"], "hosts": ["h:99999"]`), want: "hosts[0]: the port is not a number"},
		"pattern host":       {content: entry(`, "tools": ["t"], "hosts": ["*.example:443"]`), want: "hosts[0]: a host is one host"},
		"zone":               {content: entry(`, "tools": ["t"], "hosts": ["[fe80::1%eth0]:443"]`), want: "hosts[0]: an IPv6 zone"},
		"unicode host":       {content: entry(`, "tools": ["t"], "hosts": ["ünits.example:443"]`), want: "hosts[0]: the host is not ASCII"},
		"bad tool name":      {content: entry(`, "tools": ["Http_Units"], "hosts": ["h:1"]`), want: "the grant of secret A: tools[0] is not a tool name"},
		"tool with slash":    {content: entry(`, "tools": ["t", "a/b"], "hosts": ["h:1"]`), want: "tools[1] is not a tool name"},
		"tools without host": {content: entry(`, "tools": ["t"]`), want: "at least one tool"},
		"empty tools":        {content: entry(`, "tools": [], "hosts": ["h:1"]`), want: "at least one tool"},
		"tools not a list":   {content: entry(`, "tools": "t", "hosts": ["h:1"]`), want: `"tools" is not a list of strings`},
		"value not a string": {content: `{"A": {"value": 5}}`, want: `"value" is not a JSON string`},
		"entry a number":     {content: `{"A": 5}`, want: "an entry is a string (the value) or an object"},
		"nothing":            {content: `{"A": {}}`, want: "neither a value nor a grant"},
		"grant of no secret": {content: `{"A": {"tools": ["t"], "hosts": ["h:1"]}}`, want: "SCIDEX_SECRET_A is not set"},
		"twice":              {content: `{"A": "` + value + `", "A": {"tools": ["t"], "hosts": ["h:1"]}}`, want: "written twice"},
		"env and file value": {env: []string{"SCIDEX_SECRET_A=" + value}, content: entry(`, "tools": ["t"], "hosts": ["h:1"]`), want: "defined twice"},
		"trailing data":      {content: `{"A": "` + value + `"} {}`, want: "more than one JSON value"},
		"bad name":           {content: `{"a-b": {"tools": ["t"], "hosts": ["h:1"]}}`, want: "member 1: the name is not a secret name"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Load(Options{Environ: append([]string{}, c.env...), File: writeFile(t, c.content, 0o600)})
			if err == nil {
				t.Fatal("Load accepted it")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not say %q", err, c.want)
			}
			if strings.Contains(err.Error(), "v4lue") {
				t.Errorf("the error prints the value: %v", err)
			}
		})
	}
	if _, err := New(map[string]string{"A": value}, map[string]Grant{"B": {Tools: []string{"t"}, Hosts: []string{"h:1"}}}); err == nil {
		t.Error("New granted a secret it does not hold")
	}
	if _, err := New(map[string]string{"A": value}, map[string]Grant{"A": {Tools: []string{"t"}, Hosts: []string{"h"}}}); err == nil || !strings.Contains(err.Error(), "no port") {
		t.Errorf("New took a host without a port: %v", err)
	}
}

// A grant's tool names are judged by the tool schema's name pattern.
func TestToolNamePatternIsTheSchemas(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "schema", "defaults", "tool.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schema struct {
			Properties struct {
				Name struct {
					Pattern   string
					MaxLength int
				}
			}
		} `json:"content_schema"`
		IDPattern string `json:"id_pattern"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.IDPattern != toolname.Pattern {
		t.Errorf("the tool schema's name pattern is %s, the grants' %s", doc.IDPattern, toolname.Pattern)
	}
	if p := doc.Schema.Properties.Name; p.Pattern != toolname.Pattern || p.MaxLength != toolname.MaxLength {
		t.Errorf("the tool schema's name is %s (max %d), the grants' %s (max %d)", p.Pattern, p.MaxLength, toolname.Pattern, toolname.MaxLength)
	}
}
