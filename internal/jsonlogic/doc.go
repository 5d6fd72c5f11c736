// Package jsonlogic compiles and evaluates the JSONLogic (https://jsonlogic.com)
// filters that clients attach to event subscriptions (websocket subscriptions
// and polling).
//
// # Why it exists
//
// A server may hold ten thousand subscriptions and publish a hundred events a
// second, each event tested against every subscriber's filter. So a filter is
// compiled once, when the subscription is made, into a small read-only tree,
// and every event's envelope is decoded once and shared by all subscribers.
// Evaluation never mutates the data or the compiled tree, so any number of
// goroutines may evaluate the same [Filter] at once, and a simple filter
// evaluates without allocating. A bad filter is refused by [Compile] with a
// [CompileError] naming where the problem is (for example
// `filter.and[1]: unknown operator "matches"`), so the subscription is refused
// before it starts rather than failing on every event.
//
// Filters come from clients, so they are bounded: the JSON may be at most
// [MaxFilterBytes] long, nested at most [MaxDepth] deep, and hold at most
// [MaxNodes] values; one evaluation may take at most [MaxSteps] steps, after
// which it is abandoned and the filter does not match. Evaluation never panics
// on any data: a type mismatch yields null or false, as JSONLogic does.
//
// # The subset
//
// Data access: var (dot paths into objects, and into arrays by index;
// {"var": ["a.b", default]}; {"var": ""} is the whole data), missing,
// missing_some.
//
// Logic: if and its alias ?:, with any number of branches; ==, !=, ===, !==;
// !, !!; and, or (which return the deciding value, not just a boolean).
//
// Comparison: <, <=, >, >=, including the three-argument "between" form of
// < and <=.
//
// Arithmetic: +, -, *, /, %, min, max.
//
// Strings: cat, substr, in (substring).
//
// Arrays: in (membership), some, all, none, map, filter, merge. In some, all,
// none, map and filter the inner rule sees each element as its whole data.
//
// Not supported, and refused at compile time: reduce (its accumulator lets a
// small filter build values that grow exponentially), log (a side effect),
// method, and custom operators.
//
// # Semantics
//
// Values behave as in json-logic-js, the reference implementation, which
// follows JavaScript: null, false, 0, "" and the empty array are falsy and
// everything else, including "0" and the empty object, is truthy. Numbers may
// be float64 or json.Number (or any Go integer type) in the data; results of
// arithmetic are float64.
//
// == and != are JavaScript's loose equality: values of the same type compare
// by value; null equals only null; a boolean compares as the number 1 or 0; a
// number and a string compare as numbers (the string converted as by
// JavaScript's Number(): surrounding white space ignored, "" is 0, "0x1f" is
// hexadecimal, anything else non-numeric is NaN and equal to nothing); an
// array compares with a scalar as its elements joined with commas ([1] == 1,
// [] == ""); an object compares with a scalar as "[object Object]". Two arrays
// or two objects are never equal (JavaScript compares them by identity, which
// a filter over decoded JSON cannot observe). === and !== are strict: equal
// only with the same type and value, and arrays and objects are never equal.
//
// <, <=, > and >= are JavaScript's relational comparison: two strings compare
// by code point; otherwise both sides are converted to numbers (null is 0,
// true is 1, a non-numeric string is NaN) and any comparison with NaN is
// false. So, as in JavaScript, {"<": [{"var": "absent"}, 1]} is true, because
// a missing value is null and null is 0.
//
// The deliberate deviations from json-logic-js are:
//
//   - Arithmetic that would produce NaN or ±Infinity (division or % by zero,
//     non-numeric operands, min or max of nothing) returns null.
//   - var paths must be constant strings or integers; a computed path is
//     refused. Paths do not index into strings ("abc.0" is not "a").
//   - Operators with a fixed number of arguments must be given exactly that
//     many (JavaScript ignores extras and treats missing ones as undefined);
//     and and or need at least one argument, * at least one.
//   - An object with no key or more than one key is refused, where
//     json-logic-js would treat it as a literal value.
//   - * with a single argument converts it to a number, as + does
//     (json-logic-js returns it unchanged).
//   - substr counts code points, and strings order by code point, where
//     JavaScript uses UTF-16 code units (which differ only for characters
//     beyond U+FFFF).
//   - missing_some given a single key rather than an array counts it as one
//     key.
//   - An evaluation that exceeds MaxSteps is abandoned (see above).
package jsonlogic
