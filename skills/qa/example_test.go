package qa_test

import (
	"encoding/json"
	"fmt"

	"github.com/scidex/substrate/skills/qa"
)

// The JSON a tool call carries decodes straight into Input.
func ExampleCheckReadiness() {
	args := `{
	  "sop_id": "SOP-12", "version": "3",
	  "sections": ["Purpose", "Scope", "Responsibilities", "Definitions", "Procedure",
	               "Records", "References", "Revision History"],
	  "roles": [{"name": "operator", "people": ["A. Lee"]}],
	  "equipment": [{"id": "EQ-7", "last_calibrated": "2025-10-01", "calibration_due": "2026-10-01"}],
	  "training_records": [{"person": "A. Lee", "sop_id": "SOP-12", "version": "2", "date": "2025-05-01"}],
	  "approvals": [
	    {"role": "author", "person": "R. Roe", "date": "2026-02-01", "signature_present": true},
	    {"role": "reviewer", "person": "S. Sun", "date": "2026-02-03", "signature_present": true},
	    {"role": "quality_assurance", "person": "B. Khan", "date": "2026-02-05", "signature_present": true}],
	  "effective_date": "2026-02-05",
	  "review_date": "2028-02-05",
	  "as_of": "2026-12-01"
	}`
	var in qa.Input
	if err := json.Unmarshal([]byte(args), &in); err != nil {
		panic(err)
	}
	r, err := qa.CheckReadiness(in)
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Status, r.Passed, "passed", r.Failed, "failed")
	for _, c := range r.Checks {
		if c.Status == qa.Failed {
			fmt.Printf("%s %s: %s\n", c.ID, c.Subject, c.Reason)
		}
	}
	// Output:
	// not_ready 17 passed 2 failed
	// equipment_calibrated EQ-7: calibration of EQ-7 expired on 2026-10-01, before as_of 2026-12-01
	// person_trained A. Lee: no training record for A. Lee on SOP-12 v3 (trained on SOP-12 v2 only)
}
