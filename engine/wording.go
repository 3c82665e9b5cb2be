package engine

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
)

// failureWording is how one kind of integrity failure reads, in the hosted
// service's words (SPEC §4): expected and found fill errors_detail and
// hints, detail fills a flag's detail and ends the errors line. Each is a
// template whose {name} placeholders take the failure's words (failureArgs).
type failureWording struct{ expected, found, detail string }

// Kinds of integrity failure, the keys of wordings beside a failed rule's
// type and CheckBounds.
const (
	failNoValue        = "no_value"          // a rule's field or a bound's path resolves to nothing
	failNotNumber      = "not_number"        // a rule compares or sums a value that is not a number
	failTargetNone     = "target_none"       // equals_field / other_field resolves to nothing
	failTargetMany     = "target_many"       // … to more than one value
	failTargetNotNumer = "target_not_number" // … to a value that is not a number
)

// wordings is the one table of the integrity checks' wording. The
// placeholders: {at} where the failing value is (a concrete location, as
// `line_items[0].quantity`), {field} the path as the caller wrote it,
// {value} the failing value (a number as its literal was written), {sum}
// the computed sum (printed as Python prints it: formatSum), {target} what
// a rule compares with (`total (135.0)`: the caller's path and the number
// as written there, or the rule's own number as written), {allowed} what
// exists_in looks values up in, {first} where unique first saw a value,
// {range} a bound's range, {what} "rule" or "bound", {member} the rule
// member naming the target, {count} how many values it names.
var wordings = map[string]failureWording{
	RuleSumEquals: {"a sum equal to {target}", "sum {sum}", "values sum to {sum}, expected {target}"},
	RuleGTE:       {"a number at least {target}", "{value}", "{at} is {value}, expected at least {target}"},
	RuleLTE:       {"a number at most {target}", "{value}", "{at} is {value}, expected at most {target}"},
	RuleExistsIn:  {"one of {allowed}", "{value}", "{at} is {value}, expected one of {allowed}"},
	RuleUnique:    {"values distinct from each other", "{value} repeated", "{at} repeats {value}, first seen at {first}"},
	CheckBounds:   {"{range}", "{value}", "{at} is {value}, expected {range}"},
	failNoValue: {"a value at {field}", "no value",
		"no value at {field}; add it, or set if_present to skip the {what} when it is absent"},
	failNotNumber:      {"a number at {field}", "{value}", "{at} is {value}, expected a number"},
	failTargetNone:     {"a number at {field}", "no value", "{member} names {field}, which has no value"},
	failTargetMany:     {"one number at {field}", "{count} values", "{member} names {field}, which resolves to {count} values; name a single value"},
	failTargetNotNumer: {"a number at {field}", "{value}", "{member} names {field}, which holds {value}, not a number"},
}

// failureArgs are the words of one failure: placeholder names without
// braces, then their values.
type failureArgs map[string]string

// word renders the wording of kind with args.
func word(kind string, args failureArgs) (expected, found, detail string) {
	w := wordings[kind]
	pairs := make([]string, 0, 2*len(args))
	for name, value := range args {
		pairs = append(pairs, "{"+name+"}", value)
	}
	r := strings.NewReplacer(pairs...)
	return r.Replace(w.expected), r.Replace(w.found), r.Replace(w.detail)
}

// callerPath is a location as a caller writes a path: without the leading
// `$.` (the root stays `$`).
func callerPath(s string) string {
	if rest, ok := strings.CutPrefix(s, "$."); ok {
		return rest
	}
	return s
}

// valueText is a value of the output in a failure's words: a number as its
// literal was written (`135.0` stays `135.0`), anything else as brief
// describes it, with its type (`string "x"`); at most maxQuote characters.
func valueText(v any) string {
	if x, ok := v.(json.Number); ok {
		return truncate(string(x), maxQuote)
	}
	return brief(v)
}

// formatSum prints a sum of the number literals addends as the hosted
// service's Python does: an integer when every addend is an integer
// literal, otherwise the shortest round-trip float, with `.0` when it is
// integral (Python's repr: exponent form below 1e-4 and from 1e16).
func formatSum(sum float64, addends []json.Number) string {
	fraction := func(a json.Number) bool { return strings.ContainsAny(string(a), ".eE") }
	if !slices.ContainsFunc(addends, fraction) && sum == math.Trunc(sum) && math.Abs(sum) < 1e21 {
		return strconv.FormatFloat(sum, 'f', 0, 64)
	}
	return pythonFloat(sum)
}

// pythonFloat is Python's repr of a float: the shortest digits that
// round-trip, in exponent form below 1e-4 and from 1e16, else with a
// fraction (`.0` when integral).
func pythonFloat(f float64) string {
	switch {
	case math.IsInf(f, 0) && f > 0:
		return "inf"
	case math.IsInf(f, 0):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX, as Python writes it
	if exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:]); exp < -4 || exp >= 16 {
		return e
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}
