package dispatch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/canon"
	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/internal/toolname"
	"github.com/scidex/substrate/internal/toolspec"
)

// Upload is one bundle file sent with registerTool.
type Upload struct {
	Path    string
	Content []byte
}

// RegisterInput is registerTool's input.
type RegisterInput struct {
	Manifest       json.RawMessage
	Files          []Upload
	IdempotencyKey string
}

// MaxBundleBytes bounds the files of one registration.
const MaxBundleBytes = 16 << 20

// Register runs registerTool: it creates the tool (tool:<name>, a draft), or,
// when the manifest or a bundle file changed, writes a new version of it —
// bumping the patch version when the manifest's version is not newer — and
// does nothing when nothing changed. The bundle files are stored by sha256
// with the tool's write, and the manifest's files list is what was uploaded.
// A new version by anyone but a reviewer or admin is a draft (the tool
// schema's policy.review): what runs for everyone has been looked at, and the
// reviewed version keeps serving calls by name until the draft is activated.
func (d *Dispatcher) Register(ctx context.Context, in RegisterInput) (*store.WriteResult, error) {
	rc := request.From(ctx)
	if rc == nil || rc.Anonymous || !rc.Actor.Has(auth.PermContributor) {
		return nil, problem.New(problem.PermissionDenied, "registering a tool needs the contributor permission")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(in.Manifest, &m); err != nil || m == nil {
		return nil, problem.Invalid(problem.Field("input.manifest", "type", "the manifest is a JSON object (a tool.json)", nil))
	}
	var name string
	if err := json.Unmarshal(m["name"], &name); err != nil || !toolname.Valid(name) {
		return nil, problem.Invalid(problem.Field("input.manifest.name", "pattern",
			"a tool's name is lower-case letters, digits, '_' and '-' in dot-separated segments, e.g. text-stats", json.RawMessage(orNull(m["name"]))))
	}
	files, err := d.bundleFiles(ctx, m, in.Files)
	if err != nil {
		return nil, err
	}
	if files != nil {
		m["files"] = mustJSON(files)
	}
	prev, err := d.store.Get(ctx, ref.Ref{Type: toolspec.ToolType, ID: name})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("registerTool: read tool %s: %w", name, err)
	}
	var warnings []string
	if prev == nil {
		content := mustJSON(m)
		return d.writeTool(ctx, in, func(s *store.Store) (*store.WriteResult, error) {
			return s.ServerCreate(ctx, "registerTool", store.CreateParams{Type: toolspec.ToolType, ID: name, Title: toolTitle(m),
				Content: content, IdempotencyKey: in.IdempotencyKey})
		}, nil)
	}
	if prev.CreatedBy != rc.Actor.ID && !rc.Actor.Has(auth.PermReviewer) {
		return nil, problem.New(problem.PermissionDenied, "tool %s belongs to %s: only its author, reviewers and admins register new versions", name, prev.CreatedBy)
	}
	same, err := sameBesidesVersion(prev.Content, m)
	if err != nil {
		return nil, err
	}
	if same {
		return &store.WriteResult{Ref: prev.Ref().String(), ContentHash: prev.ContentHash, RequestID: rc.RequestID,
			Warnings: []string{"unchanged: tool " + name + " already has this manifest and these files"}, Artifact: prev}, nil
	}
	var pm toolspec.Manifest
	_ = json.Unmarshal(prev.Content, &pm)
	var given string
	_ = json.Unmarshal(m["version"], &given)
	if !newer(given, pm.Version) {
		bumped := bumpPatch(pm.Version)
		m["version"] = mustJSON(bumped)
		warnings = append(warnings, fmt.Sprintf("version %s is not newer than the registered %s: registered as %s", given, pm.Version, bumped))
	}
	// Whether the new version is a draft is the tool schema's review rule
	// (policy.review), which the store applies to every write of a tool.
	content := mustJSON(m)
	return d.writeTool(ctx, in, func(s *store.Store) (*store.WriteResult, error) {
		return s.ServerUpdate(ctx, "registerTool", store.UpdateParams{Ref: prev.Unpinned().String(), BaseContentHash: prev.ContentHash,
			Content: content, Title: ptr(toolTitle(m)), IdempotencyKey: in.IdempotencyKey})
	}, warnings)
}

// writeTool stores the bundle's bytes and writes the tool in one transaction.
func (d *Dispatcher) writeTool(ctx context.Context, in RegisterInput, write func(*store.Store) (*store.WriteResult, error), warnings []string) (*store.WriteResult, error) {
	var res *store.WriteResult
	err := d.store.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		q := dbsqlc.New(tx.Conn())
		for _, f := range in.Files {
			sum := sha256.Sum256(f.Content)
			if err := q.ToolFilePut(ctx, hex.EncodeToString(sum[:]), f.Content, int64(len(f.Content))); err != nil {
				return fmt.Errorf("store bundle file %s: %w", f.Path, err)
			}
		}
		var err error
		res, err = write(tx.Store())
		return err
	})
	if err != nil {
		return nil, err
	}
	res.Warnings = append(res.Warnings, warnings...)
	return res, nil
}

// bundleFiles checks the uploads against the manifest's files list and
// returns the list to record: every upload, by path and sha256, plus listed
// files the server already holds. Nil when the manifest has no files at all.
func (d *Dispatcher) bundleFiles(ctx context.Context, m map[string]json.RawMessage, uploads []Upload) ([]map[string]any, error) {
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
		have, err := dbsqlc.New(d.store.Pool()).ToolFilesHave(ctx, missing)
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

// sameBesidesVersion says whether a manifest equals the registered content
// but for its version (and a files list whose sizes may be absent).
func sameBesidesVersion(prev json.RawMessage, m map[string]json.RawMessage) (bool, error) {
	var p map[string]json.RawMessage
	if err := json.Unmarshal(prev, &p); err != nil {
		return false, fmt.Errorf("registerTool: decode the registered tool: %w", err)
	}
	strip := func(x map[string]json.RawMessage) ([]byte, error) {
		c := map[string]json.RawMessage{}
		for k, v := range x {
			if k != "version" {
				c[k] = v
			}
		}
		b, _ := json.Marshal(c)
		return canon.Canonical(b)
	}
	a, err := strip(p)
	if err != nil {
		return false, err
	}
	b, err := strip(m)
	if err != nil {
		return false, problem.Invalid(problem.Field("input.manifest", "json", err.Error(), nil))
	}
	return bytes.Equal(a, b), nil
}

// newer says whether semantic version a is above b (major.minor.patch; a
// pre-release sorts below its release).
func newer(a, b string) bool {
	pa, oka := semver(a)
	pb, okb := semver(b)
	if !oka || !okb {
		return false
	}
	for i := range 3 {
		if pa[i] != pb[i] {
			return pa[i] > pb[i]
		}
	}
	return !strings.Contains(a, "-") && strings.Contains(b, "-")
}

func semver(v string) ([3]int, bool) {
	var out [3]int
	core, _, _ := strings.Cut(strings.SplitN(v, "+", 2)[0], "-")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return out, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return out, false
		}
		out[i] = n
	}
	return out, true
}

func bumpPatch(v string) string {
	p, ok := semver(v)
	if !ok {
		return "1.0.0"
	}
	return fmt.Sprintf("%d.%d.%d", p[0], p[1], p[2]+1)
}

func toolTitle(m map[string]json.RawMessage) string {
	var name, version string
	_ = json.Unmarshal(m["name"], &name)
	_ = json.Unmarshal(m["version"], &version)
	return strings.TrimSpace(name + " " + version)
}

func ptr[T any](v T) *T { return &v }
