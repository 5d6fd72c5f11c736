package mcp_test

import (
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/mcp"
)

// An agent claims a handle over MCP, and mail to it reaches the agent; a
// reserved name is refused as data naming the rule. Renamed over MCP, the old
// handle still delivers to the agent and nobody else may claim it.
func TestClaimHandleOverMCP(t *testing.T) {
	e := env(t, mcp.Options{})
	bot := mustConnect(t, e, apitest.Contributor(t, "agent-7f3a"))
	ada := mustConnect(t, e, apitest.Contributor(t, "ada"))

	var claimed struct{ ClaimHandle writeResult }
	data(t, bot, "claim_handle", call(t, bot, "claim_handle", map[string]any{"name": "@TREM2-Bot"}), &claimed)
	if claimed.ClaimHandle.Typename != "WriteSuccess" || !strings.HasPrefix(claimed.ClaimHandle.Ref, "alias:trem2-bot@") {
		t.Fatalf("claim_handle: %+v", claimed.ClaimHandle)
	}
	var refused struct{ ClaimHandle writeResult }
	data(t, ada, "claim_handle", call(t, ada, "claim_handle", map[string]any{"name": "@admin"}), &refused)
	if refused.ClaimHandle.Typename != "PermissionDenied" || !strings.Contains(refused.ClaimHandle.Message, "reserved") {
		t.Errorf("ada claims @admin: %+v", refused.ClaimHandle)
	}

	var sent struct{ SendMessage writeResult }
	data(t, ada, "send_message", call(t, ada, "send_message", map[string]any{"input": map[string]any{"recipient": "@trem2-bot", "body": "Rerun the NCA, please"}}), &sent)
	if sent.SendMessage.Typename != "WriteSuccess" {
		t.Fatalf("send to @trem2-bot: %+v", sent.SendMessage)
	}
	var box struct {
		Mailbox struct {
			Edges []struct{ Node struct{ Ref string } }
		}
	}
	data(t, bot, "mailbox", call(t, bot, "mailbox", map[string]any{}), &box)
	if len(box.Mailbox.Edges) != 1 || unpinned(box.Mailbox.Edges[0].Node.Ref) != unpinned(sent.SendMessage.Ref) {
		t.Errorf("the bot's mailbox: %+v", box.Mailbox)
	}

	var renamed struct{ RenameHandle writeResult }
	data(t, bot, "rename_handle", call(t, bot, "rename_handle", map[string]any{"from": "@trem2-bot", "to": "@nca-bot"}), &renamed)
	if renamed.RenameHandle.Typename != "WriteSuccess" || !strings.HasPrefix(renamed.RenameHandle.Ref, "alias:nca-bot@") {
		t.Fatalf("rename_handle: %+v", renamed.RenameHandle)
	}
	var taken struct{ ClaimHandle writeResult }
	data(t, ada, "claim_handle", call(t, ada, "claim_handle", map[string]any{"name": "@trem2-bot"}), &taken)
	if taken.ClaimHandle.Typename == "WriteSuccess" {
		t.Fatalf("ada claimed the tombstone @trem2-bot: %+v", taken.ClaimHandle)
	}
	data(t, ada, "send_message", call(t, ada, "send_message", map[string]any{"input": map[string]any{"recipient": "@trem2-bot", "body": "Still there?"}}), &sent)
	if sent.SendMessage.Typename != "WriteSuccess" {
		t.Fatalf("send to the tombstone @trem2-bot: %+v", sent.SendMessage)
	}
	data(t, bot, "mailbox", call(t, bot, "mailbox", map[string]any{"includeArchived": true}), &box)
	if len(box.Mailbox.Edges) != 2 || unpinned(box.Mailbox.Edges[0].Node.Ref) != unpinned(sent.SendMessage.Ref) {
		t.Errorf("the bot's mailbox after the rename: %+v", box.Mailbox)
	}
}
