package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/scidex/substrate/graph"
	"github.com/scidex/substrate/internal/documents"
)

// documentsCmd runs `scidex documents push|list`: the trusted documents of
// production mode (internal/documents), in the database of DATABASE_URL or
// of the data dir (joining a running server's embedded cluster).
func documentsCmd(ctx context.Context, args []string) error {
	usage := &configError{problems: []string{"usage: scidex documents push <file.graphql>… (register the operations clients send, each file as they send it) | scidex documents list"}}
	if len(args) == 0 {
		return usage
	}
	switch args[0] {
	case "push":
		return documentsPush(ctx, args[1:])
	case "list":
		return documentsList(ctx, args[1:])
	}
	return usage
}

// documentsPush registers each file's text, byte for byte, as one trusted
// document, after checking it against the schema: every file or none.
func documentsPush(ctx context.Context, args []string) error {
	f := newFlags("documents push")
	c := addCommon(f)
	if err := f.Parse(args); err != nil {
		return err
	}
	if f.NArg() == 0 {
		return &configError{problems: []string{"scidex documents push: name the files of the operations to register (.graphql, each as a client sends it)"}}
	}
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	var docs []documents.Document
	var problems []string
	for _, path := range f.Args() {
		raw, err := os.ReadFile(path)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", path, err))
			continue
		}
		if err := checkDocument(schema, path, string(raw)); err != nil {
			problems = append(problems, err.Error())
			continue
		}
		docs = append(docs, documents.Document{Name: filepath.Base(path), Document: string(raw)})
	}
	if len(problems) > 0 {
		return &configError{problems: append(problems, "nothing was registered")}
	}
	log, err := c.logger()
	if err != nil {
		return err
	}
	db, err := openDatabase(ctx, *c.dataDir, log, true)
	if err != nil {
		return err
	}
	defer db.close()
	reg, err := documents.New(db.pool).Register(ctx, "push", docs)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "SHA256\tFILE\t")
	for _, r := range reg {
		state := "registered"
		if !r.New {
			state = "already registered"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", r.Hash, r.Name, state)
	}
	return w.Flush()
}

// checkDocument parses and validates a document against the schema, so a
// typo is found when it is pushed, not when a client first sends it.
func checkDocument(schema *ast.Schema, path, text string) error {
	if strings.TrimSpace(text) == "" {
		return fmt.Errorf("%s: empty", path)
	}
	doc, err := parser.ParseQuery(&ast.Source{Name: path, Input: text})
	if err != nil {
		return fmt.Errorf("%s: %s", path, describe(err))
	}
	if errs := validator.Validate(schema, doc); len(errs) > 0 {
		return fmt.Errorf("%s: %s", path, describe(errs))
	}
	if len(doc.Operations) == 0 {
		return fmt.Errorf("%s: no operation (a file of fragments alone is never sent)", path)
	}
	return nil
}

func describe(err error) string {
	var list gqlerror.List
	if errors.As(err, &list) {
		var parts []string
		for _, e := range list {
			parts = append(parts, e.Error())
		}
		return strings.Join(parts, "; ")
	}
	return err.Error()
}

func documentsList(ctx context.Context, args []string) error {
	f := newFlags("documents list")
	c := addCommon(f)
	if err := f.Parse(args); err != nil {
		return err
	}
	log, err := c.logger()
	if err != nil {
		return err
	}
	db, err := openDatabase(ctx, *c.dataDir, log, true)
	if err != nil {
		return err
	}
	defer db.close()
	list, err := documents.New(db.pool).List(ctx)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "SHA256\tNAME\tSOURCE\tBYTES\tREGISTERED")
	for _, d := range list {
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\n", d.Hash, d.Name, d.Source, d.Bytes, d.RegisteredAt.UTC().Format("2006-01-02T15:04:05Z"))
	}
	return w.Flush()
}
