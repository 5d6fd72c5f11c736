package server_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/scidex/substrate/graph/model"
	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/canon"
	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/schema"
)

const createMutation = `mutation($in: CreateArtifactInput!) {
  createArtifact(input: $in) {
    __typename
    ... on WriteSuccess { ref contentHash requestId idempotentReplay warnings artifact { id ref type artifactId title content revision isLatest createdBy { id kind } } }
    ... on ValidationFailed { code message requestId problems { path constraint message valueReceived suggestion } }
    ... on PermissionDenied { code message }
  }
}`

type createResult struct {
	CreateArtifact struct {
		Typename         string          `json:"__typename"`
		Ref              string          `json:"ref"`
		ContentHash      string          `json:"contentHash"`
		RequestID        string          `json:"requestId"`
		IdempotentReplay bool            `json:"idempotentReplay"`
		Code             string          `json:"code"`
		Message          string          `json:"message"`
		Artifact         json.RawMessage `json:"artifact"`
		Problems         []struct {
			Path          string          `json:"path"`
			Constraint    string          `json:"constraint"`
			Message       string          `json:"message"`
			ValueReceived json.RawMessage `json:"valueReceived"`
		} `json:"problems"`
	} `json:"createArtifact"`
}

func create(t *testing.T, env *apitest.Env, token string, in map[string]any) createResult {
	t.Helper()
	var out createResult
	env.OK(t, token, createMutation, map[string]any{"in": in}, &out)
	return out
}

// Every default type can be created from its schema's example and read back,
// through the polymorphic fields and its typed subtype, by ref, pinned ref and node id.
func TestCreateAndReadEveryDefaultType(t *testing.T) {
	env := apitest.New(t)
	tok := apitest.Token(t, "curie", "reviewer")
	docs, err := dbtest.DefaultDocuments()
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 24 {
		t.Fatalf("want 24 default types (the design's 19, group, role, alias, debate_round and notebook), got %d", len(docs))
	}
	// Examples cite papers; the citation validators want those papers to exist.
	// The paper example goes first, the other cited papers are created up front.
	// Messages go to role:reviewer, so the role example comes next.
	rank := func(doc json.RawMessage) int {
		switch {
		case strings.Contains(string(doc), `"type": "paper"`):
			return 0
		case strings.Contains(string(doc), `"type": "role"`):
			return 1
		}
		return 2
	}
	sort.SliceStable(docs, func(i, j int) bool { return rank(docs[i]) < rank(docs[j]) })
	paperDoc, _ := schema.ParseDocument(docs[0])
	for _, pmid := range citedPMIDs(docs) {
		if "PMID:"+pmid == paperDoc.Examples[0].ID {
			continue
		}
		in := map[string]any{"type": "paper", "id": "PMID:" + pmid, "title": "Paper " + pmid, "content": map[string]any{"title": "Paper " + pmid}}
		if r := create(t, env, tok, in).CreateArtifact; r.Typename != "WriteSuccess" {
			t.Fatalf("create cited paper %s: %+v", pmid, r)
		}
	}
	for _, raw := range docs {
		doc, err := schema.ParseDocument(raw)
		if err != nil {
			t.Fatal(err)
		}
		if doc.Type == "schema" {
			continue // schema artifacts are created by seeding; see TestRegisterTypeAtRunTime
		}
		if doc.Type == "alias" {
			continue // the registry's entries are claimed, their content the server's; see alias_test.go
		}
		if doc.Type == "debate_round" {
			continue // appended by debate.argue, naming its session, packet and call; see tools/debate
		}
		t.Run(doc.Type, func(t *testing.T) {
			ex := doc.Examples[0]
			id := ex.ID
			if id == "" && doc.IDStrategy == schema.IDStrategyClient {
				t.Fatalf("%s example has no id but the type needs one", doc.Type)
			}
			in := map[string]any{"type": doc.Type, "title": ex.Title, "content": json.RawMessage(ex.Content)}
			if id != "" {
				in["id"] = id
			}
			var res result
			op := "createArtifact"
			switch {
			case doc.Policy.Create.ServerOnly: // ledgers: the server writes them (see policy_test.go)
				op = "invokeTool"
				res = serverCreate(t, env, "curie", op, in)
			case len(doc.Policy.Create.Via) > 0: // messages are sent, not created
				op = doc.Policy.Create.Via[0]
				var c map[string]any
				_ = json.Unmarshal(ex.Content, &c)
				res = mutate(t, env, tok, op, "SendMessageInput", c)
			case doc.Type == "tool": // the example is in_process: admins register those
				res = mutate(t, env, apitest.Token(t, "curie", auth.PermAdmin), op, "CreateArtifactInput", in)
			default:
				res = mutate(t, env, tok, op, "CreateArtifactInput", in)
			}
			if res.Typename != "WriteSuccess" {
				t.Fatalf("create %s: %s %s %+v", doc.Type, res.Typename, res.Message, res.Problems)
			}
			wantHash, _ := canon.Hash(canon.Fields{Title: ex.Title, Content: ex.Content, LifecycleState: doc.Lifecycle.Initial})
			if res.ContentHash != wantHash {
				t.Errorf("contentHash %s, want %s", res.ContentHash, wantHash)
			}
			gqlType := model.Typed[doc.Type]
			unpinned := strings.SplitN(res.Ref, "@", 2)[0]
			q := fmt.Sprintf(`query($ref: Ref!, $pinned: Ref!, $id: ID!) {
			  a: artifact(ref: $ref) { typename: __typename id ref type title content contentHash lifecycleState isLatest revision createdBy { id } provenance { operation actor { id } requestId } }
			  b: artifact(ref: $pinned) { typename: __typename ref }
			  n: node(id: $id) { typename: __typename id ... on %s { artifactId } }
			}`, gqlType)
			var got struct {
				A struct {
					Typename, ID, Ref, Type, Title, ContentHash string
					LifecycleState                              *string
					IsLatest                                    bool
					Revision                                    int
					Content                                     json.RawMessage
					CreatedBy                                   struct{ ID string }
					Provenance                                  []struct {
						Operation string
						Actor     struct{ ID string }
						RequestID string
					}
				}
				B struct{ Typename, Ref string }
				N struct{ Typename, ID, ArtifactID string }
			}
			env.OK(t, tok, q, map[string]any{"ref": unpinned, "pinned": res.Ref, "id": unpinned}, &got)
			a := got.A
			if a.Typename != gqlType || got.N.Typename != gqlType || got.B.Typename != gqlType {
				t.Errorf("typenames %s/%s/%s, want %s", a.Typename, got.B.Typename, got.N.Typename, gqlType)
			}
			if a.ID != unpinned || a.Ref != res.Ref || got.B.Ref != res.Ref || got.N.ID != unpinned {
				t.Errorf("ids/refs: %s %s %s %s (want %s / %s)", a.ID, a.Ref, got.B.Ref, got.N.ID, unpinned, res.Ref)
			}
			if a.Type != doc.Type || a.Title != ex.Title || a.ContentHash != res.ContentHash || !a.IsLatest || a.Revision != 1 {
				t.Errorf("envelope: %+v", a)
			}
			if !jsonEqual(t, a.Content, ex.Content) {
				t.Errorf("content round trip:\n got %s\nwant %s", a.Content, ex.Content)
			}
			if a.CreatedBy.ID != "curie" || len(a.Provenance) != 1 || a.Provenance[0].Actor.ID != "curie" ||
				a.Provenance[0].Operation != op || a.Provenance[0].RequestID != res.RequestID {
				t.Errorf("createdBy/provenance: %+v %+v", a.CreatedBy, a.Provenance)
			}
			if (a.LifecycleState == nil) != (doc.Lifecycle.Initial == nil) ||
				(a.LifecycleState != nil && *a.LifecycleState != *doc.Lifecycle.Initial) {
				t.Errorf("lifecycleState %v, want %v", a.LifecycleState, doc.Lifecycle.Initial)
			}
		})
	}
}

// Typed subtypes expose content fields as typed GraphQL fields.
func TestTypedFields(t *testing.T) {
	env := apitest.New(t)
	tok := apitest.Contributor(t, "ada")
	res := create(t, env, tok, map[string]any{"type": "hypothesis", "title": "TREM2 R47H impairs microglial phagocytosis",
		"content": map[string]any{"target_gene": "TREM2", "confidence": 0.7, "disease": "Alzheimer's disease"}}).CreateArtifact
	if res.Typename != "WriteSuccess" {
		t.Fatalf("%+v", res)
	}
	var got struct {
		Artifact struct {
			TargetGene string
			Confidence float64
			Disease    string
			Mechanism  *string
		}
	}
	env.OK(t, tok, `query($r: Ref!) { artifact(ref: $r) { ... on Hypothesis { targetGene confidence disease mechanism } } }`,
		map[string]any{"r": res.Ref}, &got)
	if got.Artifact.TargetGene != "TREM2" || got.Artifact.Confidence != 0.7 || got.Artifact.Disease != "Alzheimer's disease" || got.Artifact.Mechanism != nil {
		t.Errorf("typed fields: %+v", got.Artifact)
	}
}

var pmidRE = regexp.MustCompile(`PMID:\s*([0-9]+)|"pmid":\s*"([0-9]+)"`)

// citedPMIDs lists every PubMed id the documents' examples mention.
func citedPMIDs(docs []json.RawMessage) []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range docs {
		for _, m := range pmidRE.FindAllStringSubmatch(string(d), -1) {
			id := m[1] + m[2]
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	sort.Strings(out)
	return out
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	ca, err1 := canon.Canonical(a)
	cb, err2 := canon.Canonical(b)
	if err1 != nil || err2 != nil {
		t.Fatalf("canonical: %v %v", err1, err2)
	}
	return string(ca) == string(cb)
}
