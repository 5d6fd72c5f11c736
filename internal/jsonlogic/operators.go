package jsonlogic

// opcode says what a compiled node does.
type opcode uint8

const (
	opConst opcode = iota // a literal value, including an array of literals
	opArray               // an array literal with rules among its elements
	opVar
	opMissing
	opMissingSome
	opEq
	opNe
	opStrictEq
	opStrictNe
	opLt
	opLe
	opGt
	opGe
	opNot
	opTruthy
	opAnd
	opOr
	opIf
	opIn
	opCat
	opSubstr
	opAdd
	opSub
	opMul
	opDiv
	opMod
	opMin
	opMax
	opMerge
	opSome
	opAll
	opNone
	opMap
	opFilter
)

// operator is an operator's opcode and how many arguments it takes.
type operator struct {
	code     opcode
	min, max int // max < 0: no upper bound
}

// operators is every operator a filter may use, by name.
var operators = map[string]operator{
	"var":          {opVar, 0, 2},
	"missing":      {opMissing, 0, -1},
	"missing_some": {opMissingSome, 2, 2},

	"==":  {opEq, 2, 2},
	"!=":  {opNe, 2, 2},
	"===": {opStrictEq, 2, 2},
	"!==": {opStrictNe, 2, 2},
	"<":   {opLt, 2, 3},
	"<=":  {opLe, 2, 3},
	">":   {opGt, 2, 2},
	">=":  {opGe, 2, 2},

	"!":   {opNot, 1, 1},
	"!!":  {opTruthy, 1, 1},
	"and": {opAnd, 1, -1},
	"or":  {opOr, 1, -1},
	"if":  {opIf, 0, -1},
	"?:":  {opIf, 0, -1},

	"in":     {opIn, 2, 2},
	"cat":    {opCat, 0, -1},
	"substr": {opSubstr, 2, 3},

	"+":   {opAdd, 0, -1},
	"-":   {opSub, 1, 2},
	"*":   {opMul, 1, -1},
	"/":   {opDiv, 2, 2},
	"%":   {opMod, 2, 2},
	"min": {opMin, 0, -1},
	"max": {opMax, 0, -1},

	"merge":  {opMerge, 0, -1},
	"some":   {opSome, 2, 2},
	"all":    {opAll, 2, 2},
	"none":   {opNone, 2, 2},
	"map":    {opMap, 2, 2},
	"filter": {opFilter, 2, 2},
}

// node is one compiled value of a filter.
type node struct {
	op    opcode
	args  []*node // operands, or the elements of an opArray
	value any     // opConst: the value, built once and shared by every evaluation
	path  path    // opVar: the path, split and parsed once
	cost  int     // opVar: extra steps a lookup costs, for a very long path
}
