package skills

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"

	"github.com/scidex/substrate/skills/refdata"
)

// CheckFiles hashes every reference that names a file against its sha256:
// the files of skills/refdata, the one copy the skills read.
func CheckFiles(refs map[string]Reference) []string {
	ids := make([]string, 0, len(refs))
	for id := range refs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var problems []string
	for _, id := range ids {
		r := refs[id]
		if r.File == "" {
			continue
		}
		b, err := refdata.FS.ReadFile(r.File)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: its file %s is not in skills/refdata", id, r.File))
			continue
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); r.SHA256 == nil || got != *r.SHA256 {
			problems = append(problems, fmt.Sprintf("%s: %s has sha256 %s, references.json says %v", id, r.File, got, deref(r.SHA256)))
		}
	}
	return problems
}

func deref(s *string) string {
	if s == nil {
		return "none"
	}
	return *s
}
