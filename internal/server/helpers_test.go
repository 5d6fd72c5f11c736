package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/store"
)

// result is the decoded union member of any write: every field any member has.
type result struct {
	Typename         string          `json:"typename"`
	Code             string          `json:"code"`
	Message          string          `json:"message"`
	RequestID        string          `json:"requestId"`
	Retryable        bool            `json:"retryable"`
	Ref              string          `json:"ref"`
	ContentHash      string          `json:"contentHash"`
	Warnings         []string        `json:"warnings"`
	IdempotentReplay bool            `json:"idempotentReplay"`
	IdempotencyKey   string          `json:"idempotencyKey"`
	Artifact         json.RawMessage `json:"artifact"`
	Link             *struct {
		Predicate string   `json:"predicate"`
		Evidence  []string `json:"evidence"`
		To        struct{ ID string }
	} `json:"link"`
	Problems []struct {
		Path, Constraint, Message string
		ValueReceived             json.RawMessage
	} `json:"problems"`
	Missing            []string `json:"missing"`
	Mutability         string   `json:"mutability"`
	From               *string  `json:"from"`
	To                 string   `json:"to"`
	AllowedTransitions []string `json:"allowedTransitions"`
	YourBase           string   `json:"yourBase"`
	Current            *struct {
		ContentHash string
		Content     map[string]any
		Title       string
	} `json:"current"`
	ChangedBy        *struct{ ID string } `json:"changedBy"`
	DiffFromYourBase json.RawMessage      `json:"diffFromYourBase"`
	MergeHint        *struct {
		YourPatchReplaysCleanly  bool
		ConflictingPaths         []string
		MergedContent            json.RawMessage
		MergedTitle              *string
		SuggestedBaseContentHash string
	} `json:"mergeHint"`
}

// fragments select every field of each union member a write can return.
var fragments = map[string]string{
	"WriteSuccess":        `... on WriteSuccess { ref contentHash warnings idempotentReplay requestId artifact { id ref title content lifecycleState isLatest supersededBy revision } link { predicate evidence to { id } } }`,
	"ValidationFailed":    `... on ValidationFailed { problems { path constraint message valueReceived } }`,
	"IdempotencyKeyReuse": `... on IdempotencyKeyReuse { idempotencyKey }`,
	"LinkTargetMissing":   `... on LinkTargetMissing { missing }`,
	"MutabilityViolation": `... on MutabilityViolation { mutability }`,
	"LifecycleViolation":  `... on LifecycleViolation { from to allowedTransitions }`,
	"NotCommitted":        `... on NotCommitted { message }`,
	"VersionConflict": `... on VersionConflict { yourBase current { contentHash content title } changedBy { id } diffFromYourBase
      mergeHint { yourPatchReplaysCleanly conflictingPaths mergedContent mergedTitle suggestedBaseContentHash } }`,
}

var (
	membersMu sync.Mutex
	members   = map[string][]string{}
)

// selection returns the selection set for a union: the common Problem fields and
// a fragment for each of its members (GraphQL refuses fragments on non-members).
func selection(t testing.TB, env *apitest.Env, union string) string {
	t.Helper()
	membersMu.Lock()
	names, ok := members[union]
	membersMu.Unlock()
	if !ok {
		var out struct {
			T struct{ PossibleTypes []struct{ Name string } } `json:"__type"`
		}
		env.OK(t, "", `query($n: String!) { __type(name: $n) { possibleTypes { name } } }`, map[string]any{"n": union}, &out)
		for _, p := range out.T.PossibleTypes {
			names = append(names, p.Name)
		}
		membersMu.Lock()
		members[union] = names
		membersMu.Unlock()
	}
	sel := "typename: __typename\n ... on Problem { code message requestId retryable }\n"
	for _, n := range names {
		sel += fragments[n] + "\n"
	}
	return sel
}

// mutate runs one mutation (name, input type) and decodes its union result.
func mutate(t testing.TB, env *apitest.Env, token, name, inputType string, in map[string]any) result {
	t.Helper()
	union := strings.ToUpper(name[:1]) + name[1:] + "Result"
	q := "mutation($in: " + inputType + "!) { r: " + name + "(input: $in) { " + selection(t, env, union) + " } }"
	var out struct{ R result }
	env.OK(t, token, q, map[string]any{"in": in}, &out)
	return out.R
}

func mustWrite(t testing.TB, env *apitest.Env, token, name, inputType string, in map[string]any) result {
	t.Helper()
	r := mutate(t, env, token, name, inputType, in)
	if r.Typename != "WriteSuccess" {
		t.Fatalf("%s: %s %s %+v", name, r.Typename, r.Message, r.Problems)
	}
	return r
}

func createH(t testing.TB, env *apitest.Env, token string, in map[string]any) result {
	t.Helper()
	if _, ok := in["type"]; !ok {
		in["type"] = "hypothesis"
	}
	return mustWrite(t, env, token, "createArtifact", "CreateArtifactInput", in)
}

func update(t testing.TB, env *apitest.Env, token string, in map[string]any) result {
	t.Helper()
	return mutate(t, env, token, "updateArtifact", "UpdateArtifactInput", in)
}

func unpinned(ref string) string {
	for i := 0; i < len(ref); i++ {
		if ref[i] == '@' {
			return ref[:i]
		}
	}
	return ref
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// serverCreate writes an artifact as the server does for one of its own
// operations (the tool dispatcher's), on behalf of actor, and returns what a
// createArtifact over GraphQL would have.
func serverCreate(t testing.TB, env *apitest.Env, actor, op string, in map[string]any) result {
	t.Helper()
	content, _ := json.Marshal(in["content"])
	id, _ := in["id"].(string)
	rc := &request.Context{Actor: auth.Actor{ID: actor, Kind: auth.KindHuman, Permissions: []auth.Permission{auth.PermContributor}},
		RequestID: request.NewID(), Now: request.Clock(time.Now())}
	res, err := env.Store.ServerCreate(request.With(context.Background(), rc), op,
		store.CreateParams{Type: in["type"].(string), ID: id, Title: in["title"].(string), Content: content})
	if err != nil {
		t.Fatalf("%s %s: %v", op, in["type"], err)
	}
	return result{Typename: "WriteSuccess", Ref: res.Ref, ContentHash: res.ContentHash, RequestID: res.RequestID}
}
