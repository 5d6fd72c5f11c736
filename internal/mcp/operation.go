package mcp

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"unicode"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
)

// Operations are the operation documents built into the binary: one named
// GraphQL operation per file, the agent-facing verbs of the substrate.
//
//go:embed operations/*.graphql
var embedded embed.FS

// Operations is the folder of the built-in operation documents.
func Operations() fs.FS {
	sub, err := fs.Sub(embedded, "operations")
	if err != nil {
		panic(err) // the embed pattern guarantees the folder
	}
	return sub
}

// operation is one operation document, parsed and validated against the
// schema: the source of one MCP tool.
type operation struct {
	file    string // the document's file name, for messages
	name    string // the tool name: the operation name in snake_case
	comment string // the document's leading # comment
	source  string // the document as sent to the GraphQL endpoint
	doc     *ast.QueryDocument
	op      *ast.OperationDefinition
}

// loadOperations reads every *.graphql file of fsys and validates it against
// schema. A document that does not parse or validate, holds other than one
// named operation, or whose file name is not its tool name is an error naming
// the file: the tool list is the contract agents see, so it never starts
// half-built.
func loadOperations(fsys fs.FS, schema *ast.Schema) ([]*operation, error) {
	files, err := fs.Glob(fsys, "*.graphql")
	if err != nil {
		return nil, fmt.Errorf("list operation documents: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no operation documents (*.graphql) in the operations folder")
	}
	sort.Strings(files)
	var out []*operation
	seen := map[string]string{}
	for _, file := range files {
		raw, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, fmt.Errorf("read operation document %s: %w", file, err)
		}
		op, err := parseOperation(file, string(raw), schema)
		if err != nil {
			return nil, err
		}
		if other, dup := seen[op.name]; dup {
			return nil, fmt.Errorf("operation documents %s and %s both make the tool %q", other, file, op.name)
		}
		seen[op.name] = file
		out = append(out, op)
	}
	return out, nil
}

func parseOperation(file, src string, schema *ast.Schema) (*operation, error) {
	doc, err := parser.ParseQuery(&ast.Source{Name: file, Input: src})
	if err != nil {
		return nil, fmt.Errorf("operation document %s does not parse: %w", file, err)
	}
	if errs := validator.ValidateWithRules(schema, doc, nil); len(errs) > 0 {
		return nil, fmt.Errorf("operation document %s is not valid against the schema: %w", file, errs)
	}
	if len(doc.Operations) != 1 {
		return nil, fmt.Errorf("operation document %s holds %d operations; want exactly one", file, len(doc.Operations))
	}
	op := doc.Operations[0]
	if op.Name == "" {
		return nil, fmt.Errorf("operation document %s: the operation has no name; its name becomes the tool's", file)
	}
	if op.Operation == ast.Subscription {
		return nil, fmt.Errorf("operation document %s: %s is a subscription; tools are queries and mutations", file, op.Name)
	}
	name := snakeCase(op.Name)
	if want := strings.TrimSuffix(path.Base(file), ".graphql"); want != name {
		return nil, fmt.Errorf("operation document %s holds %s, whose tool name is %q: name the file %s.graphql", file, op.Name, name, name)
	}
	return &operation{file: file, name: name, comment: leadingComment(src), source: src, doc: doc, op: op}, nil
}

// leadingComment is the document's first # lines, joined into paragraphs (an
// empty # line separates two).
func leadingComment(src string) string {
	var paras []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			paras = append(paras, strings.Join(cur, " "))
			cur = nil
		}
	}
	for _, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "#") {
			break
		}
		text := strings.TrimSpace(strings.TrimPrefix(line, "#"))
		if text == "" {
			flush()
			continue
		}
		cur = append(cur, text)
	}
	flush()
	return strings.Join(paras, "\n\n")
}

// snakeCase turns an operation name into a tool name: GetArtifact and
// getArtifact become get_artifact, listHTTPTools list_http_tools.
func snakeCase(s string) string {
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		if unicode.IsUpper(r) {
			prevLower := i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]))
			nextLower := i > 0 && i+1 < len(rs) && unicode.IsUpper(rs[i-1]) && unicode.IsLower(rs[i+1])
			if prevLower || nextLower {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
