package defaults_test

import (
	"encoding/json"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/schema/defaults"
	"github.com/scidex/substrate/internal/toolname"
)

// otherNames are dotted-name patterns of other namespaces, which need not
// spell a name as a tool does.
var otherNames = map[string]bool{
	"gate_result.json /content_schema/properties/gate/pattern": true,
}

// Every pattern of a default document that spells a dotted tool or skill
// name is toolname.Pattern, so a name one check admits no other refuses
// (a tool's name, the skill it implements, the skill a packet asks for).
func TestDottedNamePatternsAreToolnames(t *testing.T) {
	names, err := fs.Glob(defaults.FS, "*.json")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, name := range names {
		data, err := fs.ReadFile(defaults.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		walk(doc, "", func(path, pattern string) {
			if !strings.HasPrefix(pattern, "^[a-z][a-z0-9_") || !strings.Contains(pattern, `(\.[a-z]`) {
				return
			}
			where := name + " " + path
			if otherNames[where] {
				return
			}
			found++
			if pattern != toolname.Pattern {
				t.Errorf("%s is %q, not toolname.Pattern %q", where, pattern, toolname.Pattern)
			}
		})
	}
	if found < 4 {
		t.Errorf("found %d tool or skill name patterns; tool.json and skill.json have at least 4", found)
	}
}

// walk calls f with the JSON pointer and value of every string under a key
// named pattern or id_pattern.
func walk(v any, path string, f func(path, pattern string)) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if s, ok := v[k].(string); ok && (k == "pattern" || k == "id_pattern") {
				f(path+"/"+k, s)
				continue
			}
			walk(v[k], path+"/"+k, f)
		}
	case []any:
		for i, e := range v {
			walk(e, path+"/"+strconv.Itoa(i), f)
		}
	}
}
