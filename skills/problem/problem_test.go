package problem

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
)

// The message is the one each procedure gave before they shared this type:
// a prefix naming the procedure, or none.
func TestErrorText(t *testing.T) {
	var l List
	l.Add("spec.columns[0].type", "unknown_type", nil, "type %q is not one of %s", "bogus", "string, integer")
	l.Add("spec.unique_keys[0]", "empty_key", nil, "a unique key names at least one column")
	cases := []struct{ procedure, want string }{
		{"data.check_conformance", `data.check_conformance: invalid input: spec.columns[0].type: type "bogus" is not one of string, integer (unknown_type); spec.unique_keys[0]: a unique key names at least one column (empty_key)`},
		{"pk", `pk: invalid input: spec.columns[0].type: type "bogus" is not one of string, integer (unknown_type); spec.unique_keys[0]: a unique key names at least one column (empty_key)`},
		{"", `spec.columns[0].type: type "bogus" is not one of string, integer (unknown_type); spec.unique_keys[0]: a unique key names at least one column (empty_key)`},
	}
	for _, c := range cases {
		if got := l.Err(c.procedure).Error(); got != c.want {
			t.Errorf("procedure %q:\n got %s\nwant %s", c.procedure, got, c.want)
		}
	}
}

// An empty list is no error at all, not an *Error with nothing in it.
func TestEmptyListIsNil(t *testing.T) {
	var l List
	if err := l.Err("pk"); err != nil {
		t.Fatalf("Err of an empty list = %#v, want nil", err)
	}
}

// A caller finds the problems through wrapping, in the order added.
func TestErrorsAs(t *testing.T) {
	var l List
	l.Add("times[2]", "unsorted_times", 1.0, "is %v", 1.0)
	l.Add("dose", "non_positive_dose", -1, "is %v", -1)
	err := fmt.Errorf("run: %w", l.Err("pk"))
	var pe *Error
	if !errors.As(err, &pe) || pe.Procedure != "pk" || len(pe.Problems) != 2 || pe.Problems[0].Path != "times[2]" || pe.Problems[1].Code != "non_positive_dose" {
		t.Fatalf("errors.As(%v) = %+v", err, pe)
	}
}

// The JSON names are the ones the procedures used; a problem without a
// value has no value key.
func TestJSON(t *testing.T) {
	b, err := json.Marshal([]Problem{
		{Path: "conc", Code: "length_mismatch", Message: "has 3 values", Value: 3},
		{Path: "as_of", Code: "required", Message: "as_of is required"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"path":"conc","code":"length_mismatch","message":"has 3 values","value":3},{"path":"as_of","code":"required","message":"as_of is required"}]`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
}
