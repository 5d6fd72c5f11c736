package toolreg

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/canon"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/internal/toolname"
	"github.com/scidex/substrate/internal/toolspec"
)

// Registrar runs registerTool: it writes tool versions, with their bundle
// files, through the store, which applies the tool schema's review rule and
// the registration-time checks (ToolCheck) to every write of a tool.
type Registrar struct{ store *store.Store }

// New returns the registrar of the tools in st.
func New(st *store.Store) *Registrar { return &Registrar{store: st} }

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
func (r *Registrar) Register(ctx context.Context, in RegisterInput) (*store.WriteResult, error) {
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
	files, err := r.bundleFiles(ctx, m, in.Files)
	if err != nil {
		return nil, err
	}
	if files != nil {
		m["files"] = mustJSON(files)
	}
	prev, err := r.store.Get(ctx, ref.Ref{Type: toolspec.ToolType, ID: name})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("registerTool: read tool %s: %w", name, err)
	}
	var warnings []string
	if prev == nil {
		content := mustJSON(m)
		return r.writeTool(ctx, in, func(s *store.Store) (*store.WriteResult, error) {
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
	return r.writeTool(ctx, in, func(s *store.Store) (*store.WriteResult, error) {
		return s.ServerUpdate(ctx, "registerTool", store.UpdateParams{Ref: prev.Unpinned().String(), BaseContentHash: prev.ContentHash,
			Content: content, Title: ptr(toolTitle(m)), IdempotencyKey: in.IdempotencyKey})
	}, warnings)
}

// writeTool stores the bundle's bytes and writes the tool in one transaction.
func (r *Registrar) writeTool(ctx context.Context, in RegisterInput, write func(*store.Store) (*store.WriteResult, error), warnings []string) (*store.WriteResult, error) {
	var res *store.WriteResult
	err := r.store.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		if err := putFiles(ctx, tx, in.Files); err != nil {
			return err
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

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("toolreg: encode %T: %v", v, err))
	}
	return b
}

func orNull(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}

// Install makes a tool of this build present, current and active, as the
// caller in ctx (the system actor at start): registered (a new version when
// its manifest changed) and, when the newest version is not active,
// activated. The skills and the action verbs are installed with it at every
// start; it changes nothing when nothing changed.
func (r *Registrar) Install(ctx context.Context, manifest json.RawMessage) error {
	res, err := r.Register(ctx, RegisterInput{Manifest: manifest})
	if err != nil {
		return err
	}
	if a := res.Artifact; a.LifecycleState == nil || *a.LifecycleState != "active" {
		active := "active"
		_, err = r.store.UpdateArtifact(ctx, store.UpdateParams{Ref: a.Unpinned().String(), BaseContentHash: a.ContentHash, LifecycleState: &active})
	}
	return err
}
