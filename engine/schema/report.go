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

// spans are one Report's strings, as offsets into the evaluator's buffer,
// and the failure that reads so first.
type spans struct {
	first                    int32 // the index of the first failure that reads so
	kwLoc                    int32 // kwLocNode, kwLocInBuf or an index into the node's kwLocs
	kwLocAt, exp, found, msg [2]int32
}

const (
	kwLocNode  = -1 // the keyword location is the node's own (a false schema)
	kwLocInBuf = -2 // the keyword location is kwLocAt
)

// result formats the recorded failures and the described objects with
// undeclared keys. The failures' strings are slices of one copy of the
// evaluator's buffer, made only when something failed; a failure that
// reads like the one before it (a list repeating one mistake) shares its
// Report.
func (e *evaluator) result(valid bool) *Result {
	res := &Result{Valid: valid, Passed: e.passed, Total: e.total, Described: len(e.described)}
	if e.omitted > 0 {
		res.Omitted = &Omitted{Failures: e.omitted}
		for _, kw := range e.omittedKw {
			res.Omitted.Keywords = append(res.Omitted.Keywords, kw.String())
		}
	}
	if len(e.fails) > 0 {
		e.spans = e.spans[:0]
		for i := range e.fails {
			r := &e.fails[i]
			if i > 0 && sameReport(r, &e.fails[i-1]) {
				r.report = e.fails[i-1].report
			} else {
				r.report = e.formatFailure(i)
			}
		}
		all := string(e.buf)
		rs := make([]Report, len(e.spans))
		for k := range e.spans {
			sp, rp := &e.spans[k], &rs[k]
			r := &e.fails[sp.first]
			rp.Keyword = r.kw.String()
			rp.KeywordLocation = keywordLocation(e.nodes[r.node], sp, all)
			rp.Expected = all[sp.exp[0]:sp.exp[1]]
			rp.Found = all[sp.found[0]:sp.found[1]]
			rp.Message = all[sp.msg[0]:sp.msg[1]]
		}
		res.Failures = make([]Failure, len(e.fails))
		for i := range e.fails {
			r, fl := &e.fails[i], &res.Failures[i]
			fl.InstancePath = all[r.p0:r.p1]
			fl.Report = &rs[r.report]
		}
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

// sameReport reports whether failures r and q read the same but for their
// paths: the same assertion failing the same way on an equal scalar value
// (an agent that repeats one mistake in every line of a list). The strings
// depend on nothing else when neither lists names.
func sameReport(r, q *failure) bool {
	if r.node != q.node || r.kw != q.kw || r.at != q.at || r.a != q.a || r.b != q.b || r.names != nil || q.names != nil {
		return false
	}
	switch r.v.(type) {
	case nil, bool, string, json.Number, float64, int, int64:
		return r.v == q.v // same dynamic type compared by value; never a map or slice
	}
	return false
}

// formatFailure appends the strings of failure i's report to buf and
// returns the index of their spans.
func (e *evaluator) formatFailure(i int) int32 {
	r := &e.fails[i]
	k := int32(len(e.spans))
	e.spans = append(e.spans, spans{first: int32(i), kwLoc: kwLocNode})
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
	e.appendExpected(r, n)
	s.exp = [2]int32{st, int32(len(e.buf))}
	st = int32(len(e.buf))
	e.appendFound(r)
	s.found = [2]int32{st, int32(len(e.buf))}
	st = int32(len(e.buf))
	e.appendMessage(r, n, s.exp, s.found)
	s.msg = [2]int32{st, int32(len(e.buf))}
	return k
}

func (e *evaluator) appendExpected(r *failure, n *node) {
	b := e.buf
	switch r.kw {
	case kwType:
		b = appendTypes(b, n.types)
	case kwEnum:
		b = append(b, "one of "...)
		b = appendValues(b, n.enum.vals)
	case kwConst:
		b = append(b, "equal to "...)
		b = appendJSON(b, n.constVal, foundLimit)
	case kwMultipleOf:
		b = append(b, "multiple of "...)
		b = append(b, n.multipleOf.lit...)
	case kwMinimum:
		b = append(append(b, ">= "...), n.minimum.lit...)
	case kwMaximum:
		b = append(append(b, "<= "...), n.maximum.lit...)
	case kwExclusiveMinimum:
		b = append(append(b, "> "...), n.exclMin.lit...)
	case kwExclusiveMaximum:
		b = append(append(b, "< "...), n.exclMax.lit...)
	case kwMinLength:
		b = append(strconv.AppendInt(append(b, "at least "...), int64(n.minLength), 10), " characters"...)
	case kwMaxLength:
		b = append(strconv.AppendInt(append(b, "at most "...), int64(n.maxLength), 10), " characters"...)
	case kwPattern:
		b = append(append(b, "pattern "...), n.pattern.src...)
	case kwFormat:
		b = append(append(b, "format "...), n.format...)
	case kwMinItems:
		b = append(strconv.AppendInt(append(b, "at least "...), int64(n.minItems), 10), " items"...)
	case kwMaxItems:
		b = append(strconv.AppendInt(append(b, "at most "...), int64(n.maxItems), 10), " items"...)
	case kwUniqueItems:
		b = append(b, "unique items"...)
	case kwContains, kwMinContains:
		b = append(strconv.AppendInt(append(b, "at least "...), int64(r.b), 10), " items matching contains"...)
	case kwMaxContains:
		b = append(strconv.AppendInt(append(b, "at most "...), int64(n.maxContains), 10), " items matching contains"...)
	case kwMinProperties:
		b = append(strconv.AppendInt(append(b, "at least "...), int64(n.minProps), 10), " properties"...)
	case kwMaxProperties:
		b = append(strconv.AppendInt(append(b, "at most "...), int64(n.maxProps), 10), " properties"...)
	case kwRequired:
		b = append(b, "required: "...)
		b = append(b, strings.Join(n.required, ", ")...)
	case kwDependentRequired, kwDependencies:
		b = append(b, "the properties that present properties require"...)
	case kwPropertyNames:
		b = append(b, "property names valid against propertyNames"...)
	case kwAnyOf:
		b = append(strconv.AppendInt(append(b, "a match for at least one of "...), int64(len(n.anyOf)), 10), " alternatives"...)
	case kwOneOf:
		b = append(strconv.AppendInt(append(b, "a match for exactly one of "...), int64(len(n.oneOf)), 10), " alternatives"...)
	case kwNot:
		b = append(b, "no match for the schema under not"...)
	case kwFalse:
		switch r.at {
		case kwSelf:
			b = append(b, "no value here (the schema is false)"...)
		case kwAdditionalProperties:
			b = append(b, "no properties beyond those declared"...)
		case kwUnevaluatedProperties:
			b = append(b, "no properties that no subschema evaluated"...)
		case kwUnevaluatedItems:
			b = append(b, "no items that no subschema evaluated"...)
		default:
			b = append(strconv.AppendInt(append(b, "at most "...), int64(r.a), 10), " items"...)
		}
	}
	e.buf = b
}

func (e *evaluator) appendFound(r *failure) {
	b := e.buf
	names := r.names
	switch r.kw {
	case kwMinLength, kwMaxLength:
		b = appendDescribe(b, r.v)
		b = append(strconv.AppendInt(append(b, " ("...), int64(r.a), 10), " characters)"...)
	case kwMinItems, kwMaxItems:
		b = append(strconv.AppendInt(append(b, "array of "...), int64(len(r.v.([]any))), 10), " items"...)
	case kwMinProperties, kwMaxProperties:
		b = append(strconv.AppendInt(append(b, "object with "...), int64(len(r.v.(map[string]any))), 10), " properties"...)
	case kwUniqueItems:
		b = append(strconv.AppendInt(append(b, "items "...), int64(r.a), 10), " and "...)
		b = append(strconv.AppendInt(b, int64(r.b), 10), " are equal"...)
	case kwContains, kwMinContains, kwMaxContains:
		b = append(strconv.AppendInt(b, int64(r.a), 10), " matching items"...)
	case kwRequired, kwDependentRequired, kwDependencies:
		b = append(b, "missing: "...)
		b = append(b, strings.Join(names, ", ")...)
	case kwPropertyNames:
		b = append(b, "invalid names: "...)
		b = appendQuotedList(b, names)
	case kwOneOf:
		if r.a < 0 {
			b = append(b, "no matching alternative"...)
		} else {
			b = append(strconv.AppendInt(append(b, "alternatives "...), int64(r.a), 10), " and "...)
			b = append(strconv.AppendInt(b, int64(r.b), 10), " both match"...)
		}
	case kwFalse:
		switch r.at {
		case kwSelf:
			b = appendDescribe(b, r.v)
		case kwAdditionalProperties, kwUnevaluatedProperties:
			b = append(b, "extra: "...)
			b = append(b, strings.Join(names, ", ")...)
		case kwUnevaluatedItems:
			b = strconv.AppendInt(append(b, "unevaluated item at index "...), int64(r.a), 10)
		default:
			b = append(strconv.AppendInt(append(b, "array of "...), int64(len(r.v.([]any))), 10), " items"...)
		}
	default:
		b = appendDescribe(b, r.v)
	}
	e.buf = b
}

// appendMessage appends the failure's predicate (Failure.Message).
func (e *evaluator) appendMessage(r *failure, n *node, exp, found [2]int32) {
	b := e.buf
	names := r.names
	// earlier parts of the buffer never move relative to its start, so
	// they can be appended again even when append reallocates
	but := func(b []byte) []byte {
		return append(append(append(b, ", but it is "...), b[found[0]:found[1]]...), '.')
	}
	switch r.kw {
	case kwType:
		b = but(appendTypes(append(b, "must be of type "...), n.types))
	case kwEnum:
		b = but(appendValues(append(b, "must be one of "...), n.enum.vals))
	case kwConst:
		b = but(appendJSON(append(b, "must equal "...), n.constVal, foundLimit))
	case kwMultipleOf:
		b = but(append(append(b, "must be a multiple of "...), n.multipleOf.lit...))
	case kwMinimum:
		b = but(append(append(b, "must be at least "...), n.minimum.lit...))
	case kwMaximum:
		b = but(append(append(b, "must be at most "...), n.maximum.lit...))
	case kwExclusiveMinimum:
		b = but(append(append(b, "must be greater than "...), n.exclMin.lit...))
	case kwExclusiveMaximum:
		b = but(append(append(b, "must be less than "...), n.exclMax.lit...))
	case kwMinLength:
		b = strconv.AppendInt(append(b, "must be at least "...), int64(n.minLength), 10)
		b = append(strconv.AppendInt(append(b, " characters long, but it has "...), int64(r.a), 10), '.')
	case kwMaxLength:
		b = strconv.AppendInt(append(b, "must be at most "...), int64(n.maxLength), 10)
		b = append(strconv.AppendInt(append(b, " characters long, but it has "...), int64(r.a), 10), '.')
	case kwPattern:
		b = but(append(append(b, "must match the pattern "...), n.pattern.src...))
	case kwFormat:
		b = but(append(append(b, "must be a valid "...), n.format...))
	case kwMinItems, kwMaxItems:
		b = append(append(append(b, "must have "...), b[exp[0]:exp[1]]...), ", but it has "...)
		b = append(strconv.AppendInt(b, int64(len(r.v.([]any))), 10), '.')
	case kwMinProperties, kwMaxProperties:
		b = append(append(append(b, "must have "...), b[exp[0]:exp[1]]...), ", but it has "...)
		b = append(strconv.AppendInt(b, int64(len(r.v.(map[string]any))), 10), '.')
	case kwUniqueItems:
		b = append(append(append(b, "must not contain duplicates, but "...), b[found[0]:found[1]]...), '.')
	case kwContains, kwMinContains, kwMaxContains:
		b = append(append(append(b, "must contain "...), b[exp[0]:exp[1]]...), " schema, but it has "...)
		b = append(strconv.AppendInt(b, int64(r.a), 10), '.')
	case kwRequired:
		b = append(b, "is missing the required "...)
		b = append(plural(b, len(names), "property ", "properties "), strings.Join(names, ", ")...)
		b = plural(b, len(names), "; add it with a valid value.", "; add them with valid values.")
	case kwDependentRequired, kwDependencies:
		b = append(append(append(b, "is missing "...), strings.Join(names, ", ")...), "; add them or drop the property that requires them."...)
	case kwPropertyNames:
		b = append(appendQuotedList(append(b, "has property names that propertyNames rejects: "...), names), "; rename or remove them."...)
	case kwAnyOf:
		b = strconv.AppendInt(append(b, "matches none of the "...), int64(len(n.anyOf)), 10)
		b = append(b, " anyOf alternatives; make it fit one of them."...)
	case kwOneOf:
		if r.a < 0 {
			b = strconv.AppendInt(append(b, "matches none of the "...), int64(len(n.oneOf)), 10)
			b = append(b, " oneOf alternatives; make it fit exactly one of them."...)
		} else {
			b = append(strconv.AppendInt(append(b, "matches oneOf alternatives "...), int64(r.a), 10), " and "...)
			b = append(strconv.AppendInt(b, int64(r.b), 10), "; it must match exactly one."...)
		}
	case kwNot:
		b = append(b, "must not match the schema under not, but it does."...)
	case kwFalse:
		switch r.at {
		case kwSelf:
			b = append(b, "is not allowed here (the schema is false); remove it."...)
		case kwAdditionalProperties:
			b = append(append(append(b, "has properties the schema does not declare: "...), strings.Join(names, ", ")...), "; remove them."...)
		case kwUnevaluatedProperties:
			b = append(append(append(b, "has properties no subschema evaluated: "...), strings.Join(names, ", ")...), "; remove or declare them."...)
		case kwUnevaluatedItems:
			b = append(strconv.AppendInt(append(b, "has an item no subschema evaluated at index "...), int64(r.a), 10), "; remove it or describe it."...)
		default:
			b = strconv.AppendInt(append(b, "may hold at most "...), int64(r.a), 10)
			b = append(strconv.AppendInt(append(b, " items, but it has "...), int64(len(r.v.([]any))), 10), '.')
		}
	}
	e.buf = b
}

func plural(b []byte, k int, one, many string) []byte {
	if k == 1 {
		return append(b, one...)
	}
	return append(b, many...)
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
