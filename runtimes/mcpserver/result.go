package mcpserver

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scidex/substrate/runtimes"
)

// maxMessage bounds a server's error text carried into a call's failure.
const maxMessage = 2000

// output turns a tools/call result into the substrate tool's output, as the
// package doc describes.
func (r *Runtime) output(server, tool string, res *mcp.CallToolResult) (json.RawMessage, error) {
	if res.IsError {
		msg := texts(res)
		if msg == "" {
			msg = "the tool reported an error and no message"
		}
		return nil, runtimes.Errorf(runtimes.CodeToolError, false, "%s", cut(msg, maxMessage)).
			With("server", server).With("tool_name", tool)
	}
	text, single := singleText(res)
	var out []byte
	switch {
	case res.StructuredContent != nil:
		b, err := marshal(res.StructuredContent)
		if err != nil {
			return nil, runtimes.Errorf(runtimes.CodeBadOutput, false, "the structuredContent of %q on %q is not JSON: %v", tool, server, err)
		}
		out = b
		if single && sameJSONValue([]byte(text), res.StructuredContent) {
			out = []byte(text)
		}
	case single && json.Valid([]byte(text)):
		out = []byte(text)
	default:
		content := res.Content
		if content == nil {
			content = []mcp.Content{}
		}
		b, err := marshal(map[string]any{"content": content})
		if err != nil {
			return nil, runtimes.Errorf(runtimes.CodeBadOutput, false, "the content of %q on %q cannot be encoded: %v", tool, server, err)
		}
		out = b
	}
	if int64(len(out)) > r.opts.MaxOutputBytes {
		return nil, runtimes.Errorf(runtimes.CodeOutputTooLarge, false, "the tool's output is %d bytes, over the %d-byte cap", len(out), r.opts.MaxOutputBytes).
			With("server", server).With("tool_name", tool)
	}
	return json.RawMessage(out), nil
}

// singleText is the result's content when it is exactly one text item.
func singleText(res *mcp.CallToolResult) (string, bool) {
	if len(res.Content) != 1 {
		return "", false
	}
	t, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", false
	}
	return t.Text, true
}

// texts joins the result's text content, the message of an isError result.
func texts(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok && strings.TrimSpace(t.Text) != "" {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// sameJSONValue reports whether text is JSON for the value v the SDK decoded
// (both decoded the encoding/json way: numbers as float64).
func sameJSONValue(text []byte, v any) bool {
	var w any
	if err := json.Unmarshal(text, &w); err != nil {
		return false
	}
	return reflect.DeepEqual(w, v)
}

// marshal encodes v without HTML escaping, as the tool wrote it.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// cut shortens s to at most n bytes on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
