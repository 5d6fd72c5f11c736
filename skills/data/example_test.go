package data_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/scidex/substrate/skills/data"
)

// The JSON a job carries decodes straight into Input.
func ExampleCheckConformance() {
	args := `{
	  "csv": "subject,time_h,conc_mg_per_L\n1,0,0.74\n1,0.25,2.84\n1,0.25,-1\n2,x,\n",
	  "spec": {
	    "columns": [
	      {"name": "subject", "type": "integer", "required": true, "min": 1, "max": 12},
	      {"name": "time_h", "type": "number", "unit": "h", "required": true, "min": 0},
	      {"name": "conc_mg_per_L", "type": "number", "unit": "mg/L", "required": true, "min": 0}
	    ],
	    "unique_keys": [["subject", "time_h"]]
	  },
	  "declared_units": {"time_h": "h", "conc_mg_per_L": "mg/L"},
	  "max_violations": 100
	}`
	var in data.Input
	if err := json.Unmarshal([]byte(args), &in); err != nil {
		panic(err)
	}
	r, err := data.CheckConformance(context.Background(), in, func(f float64, msg string) {
		fmt.Printf("progress %.0f%%: %s\n", 100*f, msg)
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("conforms:", r.Conforms, "rows:", r.Rows, "violations:", r.TotalViolations)
	for _, v := range r.Violations {
		fmt.Printf("row %d (line %d) %s: %s: %s\n", v.Row, v.Line, v.Column, v.Code, v.Message)
	}
	// Output:
	// progress 100%: checked 4 rows, 4 violations
	// conforms: false rows: 4 violations: 4
	// row 3 (line 4) conc_mg_per_L: below_min: -1 is below the minimum 0
	// row 3 (line 4) subject,time_h: duplicate_key: unique key (subject, time_h) = ("1", "0.25") was first seen on row 2 (line 3)
	// row 4 (line 5) time_h: type_mismatch: "x" is not a decimal number (column type number)
	// row 4 (line 5) conc_mg_per_L: required_missing: column "conc_mg_per_L" is required; the cell is empty
}
