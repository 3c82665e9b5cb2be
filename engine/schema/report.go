package schema

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/verifier-dev/verifier/internal/ijson"
)

// foundLimit bounds the quoted instance in Found and messages.
const foundLimit = 80

// spans are one Report's keyword and failing schema, and its strings as
// offsets into the evaluator's buffer.
type spans struct {
	kw                       kwID
	node                     int32
	kwLoc                    int32 // kwLocNode, kwLocInBuf or an index into the node's kwLocs
	kwLocAt, exp, found, msg [2]int32
}

const (
	kwLocNode  = -1 // the keyword location is the node's own (a false schema)
	kwLocInBuf = -2 // the keyword location is kwLocAt
)

// result builds the Result of the recorded failures and the described
// objects with undeclared keys. The failures' strings are slices of one
// copy of the evaluator's buffer, made only when something failed.
func (e *evaluator) result(valid bool) *Result {
	res := &Result{Valid: valid, Passed: e.passed, Total: e.total, Described: len(e.described)}
	if e.omitted > 0 {
		res.Omitted = &Omitted{Failures: e.omitted}
		for _, kw := range e.omittedKw {
			res.Omitted.Keywords = append(res.Omitted.Keywords, kw.String())
		}
	}
	if fails := e.fails; len(fails) > 0 {
		all := string(e.buf)
		rs := make([]Report, len(e.spans))
		for k := range e.spans {
			sp, rp := &e.spans[k], &rs[k]
			rp.Keyword = sp.kw.String()
			rp.KeywordLocation = keywordLocation(e.nodes[sp.node], sp, all)
			rp.Expected = all[sp.exp[0]:sp.exp[1]]
			rp.Found = all[sp.found[0]:sp.found[1]]
			rp.Message = all[sp.msg[0]:sp.msg[1]]
		}
		out := make([]Failure, len(fails))
		for i := range fails {
			r := &fails[i]
			out[i] = Failure{InstancePath: all[r.p0:r.p1], Report: &rs[r.report]}
		}
		res.Failures = out
	}
	var scratch []byte
	for i := range e.described {
		if d := &e.described[i]; len(d.undeclared) > 0 {
			if len(res.Undeclared) >= e.keep {
				if res.Omitted == nil {
					res.Omitted = &Omitted{}
				}
				res.Omitted.Undeclared++
				continue
			}
			scratch = e.appendDescPath(scratch[:0], d)
			res.Undeclared = append(res.Undeclared, Described{InstancePath: string(scratch), Undeclared: d.undeclared})
		}
	}
	return res
}

// keywordLocation is the keyword location of a failure at node n, whose
// strings sp places in all (a copy of buf).
func keywordLocation(n *node, sp *spans, all string) string {
	switch sp.kwLoc {
	case kwLocNode:
		return n.loc
	case kwLocInBuf:
		return all[sp.kwLocAt[0]:sp.kwLocAt[1]]
	}
	return n.kwLocs[sp.kwLoc].loc
}

// report returns the index of r's Report spans: the last ones when r reads
// like the failure that made them (an agent repeating one mistake down a
// list), else new ones formatted into buf.
func (e *evaluator) report(r *failure) int32 {
	if shareReports && sameReport(r, &e.last) {
		return int32(len(e.spans) - 1)
	}
	e.last = *r
	return e.formatFailure(r)
}

// shareReports is false only in TestSharedReportsMatchFresh, which
// formats every failure afresh to hold the shared Reports to.
var shareReports = true

// sameReport reports whether failures r and q read the same but for their
// paths: the same assertion failing the same way on an equal scalar value
// (an agent that repeats one mistake in every line of a list). The strings
// depend on nothing else when neither lists names.
func sameReport(r, q *failure) bool {
	if r.node != q.node || r.kw != q.kw || r.at != q.at || r.a != q.a || r.b != q.b || r.names != nil || q.names != nil {
		return false
	}
	// The decoder's numbers (the usual repeated mistake) are compared as
	// strings, without the runtime's interface equality.
	switch x := r.v.(type) {
	case json.Number:
		y, ok := q.v.(json.Number)
		return ok && x == y
	case nil, bool, string, float64, int, int64:
		return r.v == q.v // same dynamic type compared by value; never a map or slice
	}
	return false
}

// formatFailure appends the strings of failure r's report to buf and
// returns the index of their spans.
func (e *evaluator) formatFailure(r *failure) int32 {
	k := int32(len(e.spans))
	e.spans = append(e.spans, spans{kw: r.kw, node: r.node, kwLoc: kwLocNode})
	s := &e.spans[k]
	n := e.nodes[r.node]
	at := r.location()
	if at != kwSelf {
		s.kwLoc = kwLocInBuf
		for k := range n.kwLocs {
			if n.kwLocs[k].kw == at {
				s.kwLoc = int32(k)
				break
			}
		}
	}
	st := int32(len(e.buf))
	if s.kwLoc == kwLocInBuf {
		e.buf = append(append(append(e.buf, n.loc...), '/'), at.String()...)
		s.kwLocAt = [2]int32{st, int32(len(e.buf))}
		st = int32(len(e.buf))
	}
	w := wordingOf(r)
	e.buf = expand(e.buf, w.expected, r, n, s)
	s.exp = [2]int32{st, int32(len(e.buf))}
	st = int32(len(e.buf))
	e.buf = expand(e.buf, w.found, r, n, s)
	s.found = [2]int32{st, int32(len(e.buf))}
	st = int32(len(e.buf))
	e.buf = expand(e.buf, w.message, r, n, s)
	s.msg = [2]int32{st, int32(len(e.buf))}
	return k
}

// wording is what a failure of one keyword says: the templates of its
// Report's Expected, Found and Message, which expand fills in.
type wording struct{ expected, found, message string }

// wordings holds each keyword's wording. A false schema's failures (kwFalse)
// read as the keyword that reached it (failure.at), at kwSelf its own.
var wordings = [kwLast + 1]wording{
	kwType:             {"%T", "%D", "must be of type %T, but it is %F."},
	kwEnum:             {"one of %E", "%D", "must be one of %E, but it is %F."},
	kwConst:            {"equal to %C", "%D", "must equal %C, but it is %F."},
	kwMultipleOf:       {"multiple of %V", "%D", "must be a multiple of %V, but it is %F."},
	kwMinimum:          {">= %V", "%D", "must be at least %V, but it is %F."},
	kwMaximum:          {"<= %V", "%D", "must be at most %V, but it is %F."},
	kwExclusiveMinimum: {"> %V", "%D", "must be greater than %V, but it is %F."},
	kwExclusiveMaximum: {"< %V", "%D", "must be less than %V, but it is %F."},
	kwMinLength:        {"at least %L characters", "%D (%a characters)", "must be at least %L characters long, but it has %a."},
	kwMaxLength:        {"at most %L characters", "%D (%a characters)", "must be at most %L characters long, but it has %a."},
	kwPattern:          {"pattern %V", "%D", "must match the pattern %V, but it is %F."},
	kwFormat:           {"format %V", "%D", "must be a valid %V, but it is %F."},
	kwMinItems:         {"at least %L items", "array of %n items", "must have %X, but it has %n."},
	kwMaxItems:         {"at most %L items", "array of %n items", "must have %X, but it has %n."},
	kwUniqueItems:      {"unique items", "items %a and %b are equal", "must not contain duplicates, but %F."},
	kwContains:         {"at least %b items matching contains", "%a matching items", "must contain %X schema, but it has %a."},
	kwMinContains:      {"at least %b items matching contains", "%a matching items", "must contain %X schema, but it has %a."},
	kwMaxContains:      {"at most %L items matching contains", "%a matching items", "must contain %X schema, but it has %a."},
	kwMinProperties:    {"at least %L properties", "object with %n properties", "must have %X, but it has %n."},
	kwMaxProperties:    {"at most %L properties", "object with %n properties", "must have %X, but it has %n."},
	kwRequired:         {"required: %R", "missing: %N", "is missing the required property %N; add it with a valid value."},
	kwDependentRequired: {"the properties that present properties require", "missing: %N",
		"is missing %N; add them or drop the property that requires them."},
	kwDependencies: {"the properties that present properties require", "missing: %N",
		"is missing %N; add them or drop the property that requires them."},
	kwPropertyNames: {"property names valid against propertyNames", "invalid names: %Q",
		"has property names that propertyNames rejects: %Q; rename or remove them."},
	kwAnyOf: {"a match for at least one of %L alternatives", "%D", "matches none of the %L anyOf alternatives; make it fit one of them."},
	kwOneOf: {"a match for exactly one of %L alternatives", "alternatives %a and %b both match",
		"matches oneOf alternatives %a and %b; it must match exactly one."},
	kwNot:  {"no match for the schema under not", "%D", "must not match the schema under not, but it does."},
	kwSelf: {"no value here (the schema is false)", "%D", "is not allowed here (the schema is false); remove it."},
	kwAdditionalProperties: {"no properties beyond those declared", "extra: %N",
		"has properties the schema does not declare: %N; remove them."},
	kwUnevaluatedProperties: {"no properties that no subschema evaluated", "extra: %N",
		"has properties no subschema evaluated: %N; remove or declare them."},
	kwUnevaluatedItems: {"no items that no subschema evaluated", "unevaluated item at index %a",
		"has an item no subschema evaluated at index %a; remove it or describe it."},
	kwItems:           {"at most %a items", "array of %n items", "may hold at most %a items, but it has %n."},
	kwAdditionalItems: {"at most %a items", "array of %n items", "may hold at most %a items, but it has %n."},
}

// Wordings that depend on more than the keyword.
var (
	requiredMany = wording{"required: %R", "missing: %N", "is missing the required properties %N; add them with valid values."}
	oneOfNone    = wording{"a match for exactly one of %L alternatives", "no matching alternative",
		"matches none of the %L oneOf alternatives; make it fit exactly one of them."}
)

func wordingOf(r *failure) *wording {
	switch {
	case r.kw == kwFalse:
		return &wordings[r.at]
	case r.kw == kwRequired && len(r.names) != 1:
		return &requiredMany
	case r.kw == kwOneOf && r.a < 0:
		return &oneOfNone
	}
	return &wordings[r.kw]
}

// expand appends template t, each %x in it replaced by a figure of failure r
// at node n: %a, %b the failure's figures; %n the instance's length; %L and
// %V the keyword's limit and literal; %T, %E, %C the schema's types, enum and
// const; %D the instance described; %N, %Q the failure's names, plain and
// quoted; %R the required names; %X, %F the Expected and Found already
// appended (earlier parts of the buffer keep their offsets when append
// reallocates).
func expand(b []byte, t string, r *failure, n *node, s *spans) []byte {
	for {
		i := strings.IndexByte(t, '%')
		if i < 0 {
			return append(b, t...)
		}
		b = append(b, t[:i]...)
		switch t[i+1] {
		case 'a':
			b = strconv.AppendInt(b, int64(r.a), 10)
		case 'b':
			b = strconv.AppendInt(b, int64(r.b), 10)
		case 'n':
			b = strconv.AppendInt(b, int64(lenOf(r.v)), 10)
		case 'L':
			b = strconv.AppendInt(b, int64(limitOf(r.kw, n)), 10)
		case 'V':
			b = append(b, literalOf(r.kw, n)...)
		case 'T':
			b = appendTypes(b, n.types)
		case 'E':
			b = appendValues(b, n.enum.vals)
		case 'C':
			b = appendJSON(b, n.constVal, foundLimit)
		case 'D':
			b = appendDescribe(b, r.v)
		case 'N':
			b = append(b, strings.Join(r.names, ", ")...)
		case 'Q':
			b = appendQuotedList(b, r.names)
		case 'R':
			b = append(b, strings.Join(n.required, ", ")...)
		case 'X':
			b = append(b, b[s.exp[0]:s.exp[1]]...)
		case 'F':
			b = append(b, b[s.found[0]:s.found[1]]...)
		}
		t = t[i+2:]
	}
}

// lenOf is the length of an array or object instance.
func lenOf(v any) int {
	if m, ok := v.(map[string]any); ok {
		return len(m)
	}
	return len(v.([]any))
}

// limitOf is the count that keyword kw of n bounds, or its alternatives.
func limitOf(kw kwID, n *node) int {
	switch kw {
	case kwMinLength:
		return n.minLength
	case kwMaxLength:
		return n.maxLength
	case kwMinItems:
		return n.minItems
	case kwMaxItems:
		return n.maxItems
	case kwMaxContains:
		return n.maxContains
	case kwMinProperties:
		return n.minProps
	case kwMaxProperties:
		return n.maxProps
	case kwAnyOf:
		return len(n.anyOf)
	}
	return len(n.oneOf)
}

// literalOf is the schema literal of keyword kw of n, as written.
func literalOf(kw kwID, n *node) string {
	switch kw {
	case kwMultipleOf:
		return n.multipleOf.lit
	case kwMinimum:
		return n.minimum.lit
	case kwMaximum:
		return n.maximum.lit
	case kwExclusiveMinimum:
		return n.exclMin.lit
	case kwExclusiveMaximum:
		return n.exclMax.lit
	case kwPattern:
		return n.pattern.src
	}
	return n.format
}

func appendTypes(b []byte, types uint8) []byte {
	first := true
	for _, t := range typeNames {
		if types&t.bit == 0 {
			continue
		}
		if !first {
			b = append(b, " or "...)
		}
		first = false
		b = append(b, t.name...)
	}
	return b
}

func appendQuotedList(b []byte, names []string) []byte {
	for i, s := range names {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = ijson.AppendCanonicalString(b, s)
	}
	return b
}

func appendValues(b []byte, vals []any) []byte {
	st := len(b)
	for i, v := range vals {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendJSON(b, v, foundLimit)
		if len(b)-st > foundLimit {
			return truncate(b, st, foundLimit)
		}
	}
	return b
}

// appendDescribe appends a value as its JSON type and at most foundLimit
// characters of it, e.g. `string "abc"` or `number 5`.
func appendDescribe(b []byte, v any) []byte {
	t := typeOf(v)
	if t == typeNull {
		return append(b, "null"...)
	}
	b = append(b, typeName(t)...)
	b = append(b, ' ')
	return appendJSON(b, v, foundLimit)
}

// appendJSON appends compact JSON of v (sorted keys), cut to limit bytes
// with a trailing ellipsis.
func appendJSON(b []byte, v any, limit int) []byte {
	st := len(b)
	b = appendJSONRec(b, v, st+limit+1)
	if len(b)-st > limit {
		return truncate(b, st, limit)
	}
	return b
}

func truncate(b []byte, st, limit int) []byte {
	cut := st + limit - 1
	for cut > st && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return append(b[:cut], "…"...)
}

func appendJSONRec(b []byte, v any, stop int) []byte {
	if len(b) > stop {
		return b
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case string:
		if len(x) > 4*foundLimit {
			x = x[:4*foundLimit]
		}
		return ijson.AppendCanonicalString(b, x)
	case json.Number:
		return append(b, x...)
	case []any:
		b = append(b, '[')
		for i, c := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONRec(b, c, stop)
			if len(b) > stop {
				return b
			}
		}
		return append(b, ']')
	case map[string]any:
		b = append(b, '{')
		for i, k := range sortedKeys(x) {
			if i > 0 {
				b = append(b, ',')
			}
			b = ijson.AppendCanonicalString(b, k)
			b = append(b, ':')
			b = appendJSONRec(b, x[k], stop)
			if len(b) > stop {
				return b
			}
		}
		return append(b, '}')
	}
	var n number
	if numberOf(v, &n) {
		return append(b, n.String()...)
	}
	return append(b, '?')
}
