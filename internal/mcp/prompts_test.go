package mcp_test

import (
	"context"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/mcp"
)

// The skills are prompts: an agent lists them and gets, for one, the
// procedure to follow — inputs with units, outputs, limits, an example and
// the tool call to make — with its task quoted.
func TestSkillsArePrompts(t *testing.T) {
	e := env(t, mcp.Options{})
	cs := mustConnect(t, e, apitest.Contributor(t, "alice"))
	if cs.InitializeResult().Capabilities.Prompts == nil {
		t.Fatal("initialize does not advertise prompts")
	}
	lp, err := cs.ListPrompts(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var nca *sdk.Prompt
	for _, p := range lp.Prompts {
		if p.Name == "skill.pk.nca" {
			nca = p
		}
	}
	if nca == nil || len(lp.Prompts) < 3 || nca.Description == "" || len(nca.Arguments) != 1 || nca.Arguments[0].Name != "task" {
		t.Fatalf("prompts: %d, skill.pk.nca %+v", len(lp.Prompts), nca)
	}
	got, err := cs.GetPrompt(context.Background(), &sdk.GetPromptParams{Name: "skill.pk.nca",
		Arguments: map[string]string{"task": "NCA of my theophylline profile, 320 mg oral"}})
	if err != nil {
		t.Fatal(err)
	}
	text := got.Messages[0].Content.(*sdk.TextContent).Text
	for _, want := range []string{"NCA of my theophylline profile", "## Inputs", "mg/L", "## Example", `"auc_method"`, "`tool.pk.nca`", "run_skill", "pk.nca/1"} {
		if !strings.Contains(text, want) {
			t.Errorf("the prompt does not say %q:\n%s", want, text)
		}
	}
	if _, err := cs.GetPrompt(context.Background(), &sdk.GetPromptParams{Name: "skill.nope"}); err == nil || !strings.Contains(err.Error(), "skill.pk.nca") {
		t.Errorf("an unknown prompt: %v (want the names of the prompts)", err)
	}
}
