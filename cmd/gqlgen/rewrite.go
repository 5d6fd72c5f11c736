package main

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"golang.org/x/tools/imports"
)

const (
	funcHead   = "\nfunc (ec *executionContext) "
	concurrent = "graphql.MarshalSliceConcurrently("
	inOrder    = "marshalSliceInOrder(" // graph/inorder.go
	newGroup   = "graphql.NewDeferredGroup(ctx)"
	lazyGroup  = "deferredGroup(ctx, fields)" // graph/inorder.go
	collect    = "fields := graphql.CollectFields("
	fieldSet   = "\n\treturn out\n}"
	objectOut  = "\n\treturn objectValue(fields, out)\n}" // graph/inorder.go
	newSet     = "out := graphql.NewFieldSet(fields)"
	newSync    = "out := newSyncObject(fields)" // graph/inorder.go
	dispatch   = "\n\tout.Dispatch(ctx)\n"
)

// outUse matches each use of a marshaller's field set.
var outUse = regexp.MustCompile(`\bout\.([A-Za-z]+)`)

// plainField matches gqlgen's function for a field that reads a struct field
// or calls a method of the object without arguments, directives or error;
// it captures the function's signature, its field-context function, the
// value read and the marshaller.
var plainField = regexp.MustCompile(`^(_[A-Za-z0-9_]+\(ctx context\.Context, field graphql\.CollectedField, obj [^)]+\) \(ret graphql\.Marshaler\)) \{
	return graphql\.ResolveField\(
		ctx,
		ec\.OperationContext,
		field,
		func\(ctx context\.Context, field graphql\.CollectedField\) \(\*graphql\.FieldContext, error\) \{
			return ec\.(fieldContext_[A-Za-z0-9_]+)\(ctx, field\)
		\},
		func\(ctx context\.Context\) \(any, error\) \{
			return (obj\.[A-Za-z0-9_]+(?:\(\))?), nil
		\},
		nil,
		func\(ctx context\.Context, selections ast\.SelectionSet, v [^\n]+\) graphql\.Marshaler \{
			return ec\.(marshal[^(\s]+)\(ctx, selections, v\)
		\},
		true,
		(?:true|false),
	\)
\}`)

// hits records what the rewrite changed, by function name, and what it found
// in a shape the plan did not foresee.
type hits struct {
	direct, lists, groups map[string]bool
	problems              []string
}

func newHits() *hits {
	return &hits{direct: map[string]bool{}, lists: map[string]bool{}, groups: map[string]bool{}}
}

// rewriteDir makes the planned changes in the generated files in dir and
// fails unless they hit exactly the plan.
func rewriteDir(dir string, pl *plan) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.generated.go"))
	if err != nil {
		return err
	}
	h := newHits()
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		out := rewriteFile(src, pl, h)
		if bytes.Equal(out, src) {
			continue
		}
		// The rewritten functions no longer name some types ("time"): drop
		// the imports nothing uses now.
		if out, err = imports.Process(file, out, &imports.Options{Comments: true, TabIndent: true, TabWidth: 8, FormatOnly: false}); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if err := os.WriteFile(file, out, 0o644); err != nil {
			return err
		}
	}
	if err := check(pl, h); err != nil {
		return err
	}
	elems := map[string]bool{}
	for _, e := range pl.lists {
		elems[e] = true
	}
	log.Printf("lists marshalled in order: %d (%s)", len(pl.lists), strings.Join(sortedKeys(elems), ", "))
	log.Printf("fields marshalled straight from the object: %d", len(pl.direct))
	log.Printf("objects making their @defer group only when needed, and written without gqlgen's field set: %d", len(pl.groups))
	log.Printf("objects whose fields all resolve in line, their values in one syncObject: %d", len(pl.sync))
	return nil
}

// rewriteFile rewrites, function by function, the functions of src that pl
// names, and records in h what it changed.
func rewriteFile(src []byte, pl *plan, h *hits) []byte {
	parts := bytes.Split(src, []byte(funcHead))
	for i := 1; i < len(parts); i++ {
		nameB, _, _ := bytes.Cut(parts[i], []byte("("))
		name := string(nameB)
		if f, ok := pl.direct[name]; ok {
			if m := plainField.FindSubmatchIndex(parts[i]); m != nil {
				sig, fieldContext := parts[i][m[2]:m[3]], string(parts[i][m[4]:m[5]])
				value, marshal := string(parts[i][m[6]:m[7]]), string(parts[i][m[8]:m[9]])
				if value != f.value || marshal != f.marshal || fieldContext != f.fieldContext {
					h.problems = append(h.problems, fmt.Sprintf("field %s (%s): gqlgen reads %s, marshals with %s and makes its context with %s; the plan says %s, %s, %s",
						f.name, name, value, marshal, fieldContext, f.value, f.marshal, f.fieldContext))
					continue
				}
				body := fmt.Sprintf("%s {\n\treturn ec.%s(ctx, field.Selections, %s)\n}", sig, marshal, value)
				parts[i] = append([]byte(body), parts[i][m[1]:]...)
				h.direct[name] = true
			}
			continue
		}
		if bytes.Contains(parts[i], []byte(newGroup)) && bytes.Contains(parts[i], []byte(collect)) {
			if _, ok := pl.groups[name]; !ok {
				h.problems = append(h.problems, fmt.Sprintf("function %s makes an @defer group but is not the marshaller of an object the plan knows", name))
				continue
			}
			if bytes.Count(parts[i], []byte(fieldSet)) != 1 {
				h.problems = append(h.problems, fmt.Sprintf("object %s (%s): not one \"return out\" at its end", pl.groups[name], name))
				continue
			}
			parts[i] = bytes.ReplaceAll(parts[i], []byte(newGroup), []byte(lazyGroup))
			if !pl.sync[name] {
				parts[i] = bytes.Replace(parts[i], []byte(fieldSet), []byte(objectOut), 1)
			} else if p := syncShape(parts[i]); p != "" {
				h.problems = append(h.problems, fmt.Sprintf("object %s (%s) resolves every field in line, but %s", pl.groups[name], name, p))
			} else {
				// Its fields resolved when the loop ends: nothing to dispatch,
				// and the values written in order by the syncObject itself.
				parts[i] = bytes.Replace(parts[i], []byte(newSet), []byte(newSync), 1)
				parts[i] = bytes.Replace(parts[i], []byte(dispatch), []byte("\n"), 1)
			}
			h.groups[name] = true
		}
		if _, ok := pl.lists[name]; ok && bytes.Contains(parts[i], []byte(concurrent)) {
			parts[i] = bytes.ReplaceAll(parts[i], []byte(concurrent), []byte(inOrder))
			h.lists[name] = true
		}
	}
	return bytes.Join(parts, []byte(funcHead))
}

// syncShape says what keeps an object marshaller from taking a syncObject:
// anything but one field set, made once and dispatched once, of which only
// Values and Invalids are used; "" when nothing does.
func syncShape(fn []byte) string {
	if n := bytes.Count(fn, []byte(newSet)); n != 1 {
		return fmt.Sprintf("makes %d field sets", n)
	}
	if n := bytes.Count(fn, []byte(dispatch)); n != 1 {
		return fmt.Sprintf("dispatches %d times", n)
	}
	for _, m := range outUse.FindAllSubmatch(fn, -1) {
		switch string(m[1]) {
		case "Values", "Invalids", "Dispatch":
		default:
			return "uses its field set's " + string(m[1])
		}
	}
	return ""
}

// check fails unless the rewrite hit every function of the plan, naming each
// one it missed and each one it found in an unforeseen shape.
func check(pl *plan, h *hits) error {
	problems := append([]string(nil), h.problems...)
	for _, name := range sortedKeys(pl.direct) {
		if !h.direct[name] {
			f := pl.direct[name]
			problems = append(problems, fmt.Sprintf("field %s (%s): not found in the shape the rewrite marshals straight from the object (it reads %s, marshals with %s)", f.name, name, f.value, f.marshal))
		}
	}
	for _, name := range sortedKeys(pl.lists) {
		if !h.lists[name] {
			problems = append(problems, fmt.Sprintf("list %s of %s: no %s to run in order", name, pl.lists[name], strings.TrimSuffix(concurrent, "(")))
		}
	}
	for _, name := range sortedKeys(pl.groups) {
		if !h.groups[name] {
			problems = append(problems, fmt.Sprintf("object %s (%s): no %s beside its field collection", pl.groups[name], name, newGroup))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("gqlgen's output does not match what its data says it wrote (did gqlgen change its templates?); %d mismatches:\n  %s",
		len(problems), strings.Join(problems, "\n  "))
}
