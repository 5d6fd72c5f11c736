// Package toolreg is registration and review of tools: registerTool
// (Registrar.Register: a new tool, or a new version of one, with its bundle
// files), the storage of bundle files by sha256 (tool_files: stored with the
// tool's write, served to the runtimes by DBBundle, collected when no version
// lists them), and the checks every write of a tool passes before it is
// stored (ToolCheck, the store's hook: the operator's caps, a runtime that
// accepts the manifest).
//
// Review itself is the tool schema's rule, which the store applies to every
// write of a tool: a version by anyone but a reviewer or admin is a draft, and
// the reviewed version keeps serving until a reviewer activates the new one.
//
// It reads a manifest through internal/toolspec and writes through the store;
// it never runs a tool, and imports neither the dispatcher (internal/dispatch)
// nor the work packets (internal/workpacket): what a call runs is decided
// there from what registration stored.
package toolreg
