package dispatch_test

import (
	"testing"
)

// A skill's dependencies.tools must name registered, active tools, and a
// skill may document a tool.
func TestSkillDependsOnActiveTools(t *testing.T) {
	e := env(t, nil)
	r := register(t, e, admin(t), manifest(t, "checksum"))
	const createQ = `mutation($c: JSON!) { createArtifact(input: {type: "skill", title: "Checksum a text", content: $c}) {
	  __typename ... on WriteSuccess { ref } ... on ValidationFailed { problems { path message } } } }`
	content := map[string]any{"name": "qa.checksum", "version": "1.0.0", "summary": "Checksums a text.", "tool_name": "checksum.sha256",
		"dependencies": map[string]any{"tools": []any{"checksum.sha256", "no.such.tool"}}}
	type created struct {
		CreateArtifact struct {
			Typename string `json:"__typename"`
			Ref      string
			Problems []struct{ Path, Message string }
		}
	}
	var out created
	e.OK(t, alice(t), createQ, map[string]any{"c": content}, &out)
	if out.CreateArtifact.Typename != "ValidationFailed" || len(out.CreateArtifact.Problems) != 2 ||
		out.CreateArtifact.Problems[0].Path != "content.dependencies.tools.0" || out.CreateArtifact.Problems[1].Path != "content.dependencies.tools.1" {
		t.Fatalf("a draft and a missing tool: %+v", out.CreateArtifact)
	}
	setState(t, e, admin(t), r.RegisterTool.Ref, "active")
	content["dependencies"] = map[string]any{"tools": []any{"checksum.sha256"}}
	out = created{}
	e.OK(t, alice(t), createQ, map[string]any{"c": content}, &out)
	if out.CreateArtifact.Typename != "WriteSuccess" {
		t.Fatalf("an active tool: %+v", out.CreateArtifact)
	}
	var link struct {
		AddLink struct {
			Typename string `json:"__typename"`
		}
	}
	e.OK(t, alice(t), `mutation($f: Ref!) { addLink(input: {from: $f, predicate: "documents", to: "tool:checksum.sha256"}) { __typename } }`,
		map[string]any{"f": out.CreateArtifact.Ref}, &link)
	if link.AddLink.Typename != "WriteSuccess" {
		t.Fatalf("documents link: %s", link.AddLink.Typename)
	}
}
