package problem_test

import (
	"errors"
	"fmt"

	"github.com/scidex/substrate/skills/problem"
)

// A procedure collects every problem, then refuses with all of them; its
// caller reaches them with errors.As.
func ExampleList() {
	var ps problem.List
	ps.Add("as_of", "required", nil, "as_of is required")
	ps.Add("equipment[1].id", "duplicate", "b-7", "equipment id %q is listed twice (also equipment[%d])", "b-7", 0)
	err := ps.Err("qa.check_readiness")
	fmt.Println(err)

	var pe *problem.Error
	if errors.As(err, &pe) {
		for _, p := range pe.Problems {
			fmt.Println(p.Path, p.Code)
		}
	}
	// Output:
	// qa.check_readiness: invalid input: as_of: as_of is required (required); equipment[1].id: equipment id "b-7" is listed twice (also equipment[0]) (duplicate)
	// as_of required
	// equipment[1].id duplicate
}
