// Package toolspec is the shared description of a tool: the manifest a tool
// artifact's content is (Manifest: its runtime, schemas, resource caps, cost
// model, bundle files), what a call of it costs and may cost, what its
// runtime is told of it, and the operator's bounds on the resources a
// manifest may ask for (CapLimits and the checks against them).
//
// Both sides of the tool plane read it: registration and review
// (internal/toolreg) check a manifest against it before one is stored, and
// the dispatcher (internal/dispatch) runs a call by it. It is a leaf: it
// imports neither the store nor the dispatcher nor registration, only the
// runtimes' contract and the problem type its checks return
// (internal/policy/imports_test.go holds this).
package toolspec
