package skills

import (
	"fmt"

	"github.com/scidex/substrate/skills/data"
)

// conformanceInputSchema is data.check_conformance's input schema: the
// table from a dataset artifact or inline, and the column specification.
func conformanceInputSchema(example any) js {
	column := closed("One declared column, matched to the header by exact name.", js{
		"name":     nonBlank("The column's name in the header, unique."),
		"type":     oneOfStrings("What every cell must be: text, an int64 integer, a decimal number, true/false (any case), or a date YYYY-MM-DD.", data.Types),
		"unit":     str("The unit (UCUM) the dataset must declare for the column, compared as exact text; absent: the dataset declares none."),
		"required": boolean("No cell of the column may be empty."),
		"min":      js{"type": []string{"number", "string", "null"}, "description": "An inclusive lower bound of an integer, number or date column: a number, or a date string."},
		"max":      js{"type": []string{"number", "string", "null"}, "description": "An inclusive upper bound, as min."},
		"allowed":  array("The closed list of values a cell may hold, compared as exact text.", js{"type": "string"}),
	}, "name", "type")
	spec := closed("The declared shape of the table.", js{
		"columns":             with(array("The declared columns; order is not checked.", column), "minItems", 1),
		"unique_keys":         array("Column sets whose values must not repeat across rows (a row with an empty key cell is not checked for that key).", with(array("A key's columns, each declared.", js{"type": "string"}), "minItems", 1)),
		"allow_extra_columns": boolean("Accept header columns the spec does not declare (default: each is a column_unexpected violation)."),
	}, "columns")
	s := args("A table, from a dataset artifact or inline CSV, and the column specification it must conform to.", js{
		"dataset":        with(str("A dataset artifact's ref, as dataset:pk-study-1: its inline table_csv, or with file one of its files, read from the server's dataset directory and checked against its sha256."), "pattern", "^dataset:"),
		"file":           with(str("Which of the dataset's files[].path to read (default: its table_csv, or its only CSV file); needs dataset."), "minLength", 1),
		"csv":            with(str("The table as CSV text, a header row then data rows, instead of dataset."), "minLength", 1),
		"spec":           spec,
		"declared_units": js{"type": "object", "description": "The units the dataset declares, by column name, each compared with the spec's unit (default: the dataset's columns[].unit).", "additionalProperties": js{"type": "string"}},
		"max_violations": with(integer(fmt.Sprintf("How many violations to list, 1 to %d (0 or absent: %d); all are counted.", data.DefaultMaxViolations, data.DefaultMaxViolations)),
			"minimum", 0, "maximum", data.DefaultMaxViolations),
	}, []string{"spec"}, example)
	// The branches name their fields (true) and what they require; the
	// top-level properties validate them. csv excludes a dataset (false:
	// absent); file needs one.
	s["anyOf"] = []any{
		js{"title": "a dataset artifact", "properties": js{"dataset": true, "file": true}, "required": []string{"dataset"}},
		js{"title": "an inline table", "properties": js{"csv": true}, "required": []string{"csv"}},
	}
	s["dependentSchemas"] = js{
		"csv":  js{"properties": js{"dataset": false, "file": false}},
		"file": js{"required": []string{"dataset"}},
	}
	return s
}

// conformanceOutputSchema is data.check_conformance's result.
func conformanceOutputSchema() js {
	violation := open("One way the table does not conform.", js{
		"row":     integer("The 1-based data row (the first after the header is 1); 0 for the table as a whole (header, columns, units)."),
		"line":    integer("The CSV line the row starts on (the header is line 1); 0 for a declared unit."),
		"column":  str("The column concerned; absent for a whole row."),
		"key":     texts("A unique key's columns, for duplicate_key."),
		"code":    oneOfStrings("What is wrong.", data.ViolationCodes),
		"value":   str("The offending cell or declared unit, when there is one."),
		"message": str("What is wrong and what was expected."),
	}, "row", "line", "code", "message")
	report := open("The outcome of the check.", js{
		"logic_version":    with(str("The version of the checks."), "const", data.LogicVersion),
		"conforms":         boolean("True when there is no violation at all."),
		"rows":             integer("The number of data rows read."),
		"header":           js{"type": []string{"array", "null"}, "items": js{"type": "string"}, "description": "The header row as read; null when the table has none."},
		"total_violations": integer("Every violation, counted."),
		"violations":       array("The first max_violations violations, in table order.", violation),
		"truncated":        boolean("Some violations were counted but not listed."),
		"violation_counts": js{"type": "object", "description": "Violations by code.", "additionalProperties": js{"type": "integer"}},
	}, "logic_version", "conforms", "rows", "header", "total_violations", "violations", "truncated", "violation_counts")
	return result("data.check_conformance's result: the report, and whether the table conforms.", merge(common(data.LogicVersion), js{
		"report":   report,
		"conforms": boolean("True when the table has no violation."),
		"source":   str("Where the rows came from: inline csv, or the dataset ref (and the file and its sha256)."),
	}), resultRequired("report", "conforms", "source")...)
}
