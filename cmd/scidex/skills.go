package main

import (
	"fmt"
	"strings"

	"github.com/scidex/substrate/skills"
)

// skillsCmd runs `scidex skills check-references`: the references gate. It
// fails when a skill intended for preview or available depends on a
// reference still to_verify (or unknown), or when a dataset file no longer
// matches its recorded sha256. CI runs it (scripts/verify).
func skillsCmd(args []string) error {
	if len(args) == 0 || args[0] != "check-references" {
		return &configError{problems: []string{"usage: scidex skills check-references"}}
	}
	refs, err := skills.References()
	if err != nil {
		return err
	}
	cat := skills.Catalog(skills.Deps{})
	g := skills.Check(cat, refs)
	problems := append(g.Problems, skills.CheckFiles(refs)...)
	for _, s := range cat {
		fmt.Printf("%-28s intended %-9s served %s\n", s.Name, s.Intended, g.Served[s.Name])
	}
	if len(problems) > 0 {
		return fmt.Errorf("references check failed:\n  %s", strings.Join(problems, "\n  "))
	}
	fmt.Printf("references check passed: %d skills, %d references\n", len(cat), len(refs))
	return nil
}
