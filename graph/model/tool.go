package model

// ToolCall (a typed artifact model written by cmd/typegen) is the success
// member of the tool mutations' result unions.

// IsInvokeToolResult marks ToolCall as a member of InvokeToolResult.
func (ToolCall) IsInvokeToolResult() {}

// IsCancelToolCallResult marks ToolCall as a member of CancelToolCallResult.
func (ToolCall) IsCancelToolCallResult() {}
