package toolreg

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/scidex/substrate/internal/problem"
)

// A registration's bundle: the files uploaded with registerTool, checked
// against the manifest's files list before anything is stored.

// bundleFiles checks the uploads against the manifest's files list and
// returns the list to record: every upload, by path and sha256, plus listed
// files the server already holds. Nil when the manifest has no files at all.
func (r *Registrar) bundleFiles(ctx context.Context, m map[string]json.RawMessage, uploads []Upload) ([]map[string]any, error) {
	var listed []struct {
		Path   string `json:"path"`
		SHA256 string `json:"sha256"`
	}
	if raw, ok := m["files"]; ok {
		if err := json.Unmarshal(raw, &listed); err != nil {
			return nil, problem.Invalid(problem.Field("input.manifest.files", "type", "files is a list of {path, sha256}", nil))
		}
	}
	if len(uploads) == 0 && len(listed) == 0 {
		return nil, nil
	}
	var problems []problem.Detail
	total := 0
	byPath := map[string]string{}
	for i, u := range uploads {
		total += len(u.Content)
		if !cleanPath(u.Path) {
			problems = append(problems, problem.Field(fmt.Sprintf("input.files.%d.path", i), "bundle_path",
				"a bundle path is relative, inside the bundle, with no '..' or empty segment", u.Path))
			continue
		}
		if _, dup := byPath[u.Path]; dup {
			problems = append(problems, problem.Field(fmt.Sprintf("input.files.%d.path", i), "unique", "uploaded twice", u.Path))
		}
		sum := sha256.Sum256(u.Content)
		byPath[u.Path] = hex.EncodeToString(sum[:])
	}
	if total > MaxBundleBytes {
		problems = append(problems, problem.Field("input.files", "maxBytes", fmt.Sprintf("a bundle is at most %d bytes; this one is %d", MaxBundleBytes, total), nil))
	}
	var missing []string
	for i, l := range listed {
		got, uploaded := byPath[l.Path]
		switch {
		case uploaded && got != l.SHA256:
			problems = append(problems, problem.Field(fmt.Sprintf("input.manifest.files.%d.sha256", i), "sha256_matches",
				fmt.Sprintf("%s was uploaded with sha256 %s, not the listed %s", l.Path, got, l.SHA256), l.SHA256))
		case !uploaded:
			byPath[l.Path] = l.SHA256
			missing = append(missing, l.SHA256)
		}
	}
	if len(missing) > 0 {
		have, err := r.have(ctx, missing)
		if err != nil {
			return nil, fmt.Errorf("registerTool: look up bundle files: %w", err)
		}
		held := map[string]bool{}
		for _, h := range have {
			held[h] = true
		}
		for i, l := range listed {
			if _, up := uploadPath(uploads, l.Path); !up && !held[l.SHA256] {
				problems = append(problems, problem.Field(fmt.Sprintf("input.manifest.files.%d", i), "file_uploaded",
					fmt.Sprintf("%s is listed but was not uploaded, and the server does not hold sha256 %s", l.Path, l.SHA256), nil))
			}
		}
	}
	if len(problems) > 0 {
		return nil, problem.Invalid(problems...)
	}
	paths := make([]string, 0, len(byPath))
	for p := range byPath {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	out := make([]map[string]any, len(paths))
	for i, p := range paths {
		size := -1
		if u, ok := uploadPath(uploads, p); ok {
			size = len(u.Content)
		}
		out[i] = map[string]any{"path": p, "sha256": byPath[p]}
		if size >= 0 {
			out[i]["size"] = size
		}
	}
	return out, nil
}

func uploadPath(uploads []Upload, p string) (Upload, bool) {
	for _, u := range uploads {
		if u.Path == p {
			return u, true
		}
	}
	return Upload{}, false
}

func cleanPath(p string) bool {
	return p != "" && !strings.HasPrefix(p, "/") && path.Clean(p) == p && !strings.HasPrefix(p, "../") && p != ".."
}
