package policy

import (
	"slices"
	"strings"
	"testing"
)

const module = "github.com/scidex/substrate/"

// importRule is one one-way rule of the package graph: no package under
// From (itself or below) depends, directly or through others, on a package
// under any of Forbidden.
type importRule struct {
	From      string
	Forbidden []string
	Why       string
}

var importRules = []importRule{
	{From: "runtimes", Forbidden: []string{"internal/store", "internal/dbsqlc", "graph", "resolvers", "internal/app", "internal/dispatch"},
		Why: "a runtime is told the tool and its arguments and never sees the database, the API or the dispatcher (runtimes/doc.go); what it needs of them is an interface the composition supplies"},
	{From: "tools", Forbidden: []string{"internal/app"},
		Why: "the tools are what the composition root wires in, not the other way round"},
	{From: "internal/toolspec", Forbidden: []string{"internal/store", "internal/dbsqlc", "internal/dispatch", "internal/toolreg", "internal/workpacket", "internal/queue", "graph", "resolvers", "internal/app"},
		Why: "the tool description is shared by registration and the dispatcher, so it depends on neither of them nor on the database they write through"},
	{From: "internal/toolreg", Forbidden: []string{"internal/dispatch", "internal/workpacket", "internal/queue", "graph", "resolvers", "internal/app"},
		Why: "registration decides what is stored and the dispatcher runs what was stored, so registering a tool never depends on running one"},
	{From: "internal/workpacket", Forbidden: []string{"internal/toolreg", "graph", "resolvers", "internal/app"},
		Why: "work packets finish calls through the dispatcher and know nothing of registration or of the API that calls them"},
	{From: "internal/dispatch", Forbidden: []string{"internal/toolreg", "internal/workpacket", "graph", "resolvers", "internal/server", "internal/app"},
		Why: "the call state machine is what the other tool packages build on: it reaches registration's checks and the packets only through what the composition root wires in (the store's hook, its Awaiter)"},
	{From: "internal/queue", Forbidden: []string{"internal/dispatch", "internal/workpacket", "internal/toolreg"},
		Why: "the queue owns how jobs move and which processes are alive, never what a job means: the dispatcher is bound to it as its Runner"},
}

// under reports whether package path p is dir or below it (module-relative).
func under(p, dir string) bool {
	return p == module+dir || strings.HasPrefix(p, module+dir+"/")
}

// The package graph stays one-way: runtimes/* import neither the store nor
// the API nor the dispatcher, tools/ does not import the composition root,
// and the tool plane's packages import each other one way (toolspec ← toolreg;
// toolspec, queue ← dispatch ← workpacket). A broken rule names the chain of
// imports that breaks it.
func TestImportRules(t *testing.T) {
	imports := map[string][]string{}
	for _, line := range goList(t, "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...") {
		f := strings.Fields(line)
		if len(f) > 0 {
			imports[f[0]] = f[1:]
		}
	}
	if len(imports) < 20 {
		t.Fatalf("go list found %d packages", len(imports))
	}
	for _, rule := range importRules {
		checked := 0
		for _, pkg := range sortedKeys(imports) {
			if !under(pkg, rule.From) {
				continue
			}
			checked++
			if chain := forbiddenChain(imports, pkg, rule.Forbidden); chain != nil {
				t.Errorf("%s must not depend on %s (%s): %s", strings.TrimPrefix(pkg, module),
					strings.TrimPrefix(chain[len(chain)-1], module), rule.Why, strings.Join(trimAll(chain), " → "))
			}
		}
		if checked == 0 {
			t.Errorf("no package under %s/: the rule checks nothing", rule.From)
		}
	}
}

// forbiddenChain is the shortest import chain from pkg to a package under
// one of forbidden, or nil. Only the module's own packages are followed.
func forbiddenChain(imports map[string][]string, pkg string, forbidden []string) []string {
	prev := map[string]string{pkg: ""}
	queue := []string{pkg}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, dir := range forbidden {
			if p != pkg && under(p, dir) {
				var chain []string
				for q := p; q != ""; q = prev[q] {
					chain = append(chain, q)
				}
				slices.Reverse(chain)
				return chain
			}
		}
		for _, next := range imports[p] {
			if _, seen := prev[next]; seen || !strings.HasPrefix(next, module) {
				continue
			}
			prev[next] = p
			queue = append(queue, next)
		}
	}
	return nil
}

// The chain finder finds an indirect import and names every step.
func TestForbiddenChain(t *testing.T) {
	g := map[string][]string{
		module + "runtimes/x":    {"fmt", module + "internal/ok"},
		module + "internal/ok":   {module + "internal/deep"},
		module + "internal/deep": {module + "internal/store/sub"},
	}
	got := strings.Join(trimAll(forbiddenChain(g, module+"runtimes/x", []string{"internal/store"})), " → ")
	if got != "runtimes/x → internal/ok → internal/deep → internal/store/sub" {
		t.Fatalf("chain %q", got)
	}
	if c := forbiddenChain(g, module+"runtimes/x", []string{"graph"}); c != nil {
		t.Fatalf("a chain to a package not imported: %q", c)
	}
}

func trimAll(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = strings.TrimPrefix(p, module)
	}
	return out
}

func sortedKeys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
