package rest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// nearLimit is a body size just under the default hard limit
// (DefaultMaxBodyBytes), leaving room for the rest of the request.
const nearLimit = DefaultMaxBodyBytes - 4096

// repeatTo repeats item, comma-separated, as many times as fit in n bytes.
func repeatTo(n int, item string) string {
	return testkit.JoinN(n/(len(item)+1), func(int) string { return item })
}

// hostileDocuments are outputs (and whole bodies) built to exhaust the
// decoder, the canonicalizer or the memory of one request.
func hostileDocuments() []hostileCase {
	return []hostileCase{
		{name: "100k-deep array", want: want422, field: "submitted_output",
			body: func() []byte { return testkit.VerifyBody(`{}`, nest(100_000, "[", "", "]")) }},
		{name: "100k-deep object", want: want422, field: "submitted_output",
			body: func() []byte { return testkit.VerifyBody(`{}`, nest(100_000, `{"a":`, "1", "}")) }},
		{name: "100k-deep unclosed array", want: want422,
			body: func() []byte { return testkit.VerifyBody(`{}`, strings.Repeat("[", 100_000)) }},
		{name: "100k-deep schema", want: want422, field: "expected_schema",
			body: func() []byte { return testkit.VerifyBody(nest(100_000, `{"not":`, "{}", "}"), `1`) }},
		{name: "128 levels: the depth limit", want: want422, field: "submitted_output",
			body: func() []byte { return testkit.VerifyBody(`{}`, nest(128, "[", "", "]")) }},
		{name: "126 levels: under the depth limit", want: wantVerdict,
			body: func() []byte { return testkit.VerifyBody(`{}`, nest(126, "[", "", "]")) }},
		{name: "10 MB string over the hard limit", want: want413,
			body: func() []byte { return testkit.VerifyBody(`{}`, `"`+strings.Repeat("x", 10_000_000)+`"`) }},
		{name: "string just under the hard limit", want: wantVerdict,
			body: func() []byte { return testkit.VerifyBody(`{"type":"string"}`, `"`+strings.Repeat("x", nearLimit)+`"`) }},
		{name: "string of escapes just under the hard limit", want: wantVerdict,
			body: func() []byte {
				return testkit.VerifyBody(`{"type":"string","minLength":1}`, `"`+strings.Repeat(`\u00e9\n`, nearLimit/8)+`"`)
			}},
		{name: "many small keys", want: wantVerdict,
			body: func() []byte {
				return testkit.VerifyBody(`{"type":"object"}`, "{"+testkit.JoinN(nearLimit/12, func(i int) string { return fmt.Sprintf(`"%06x":0`, i) })+"}")
			}},
		{name: "many small keys, described and strict", want: wantVerdict,
			body: func() []byte {
				return testkit.VerifyBody(`{"type":"object","properties":{"a":{"type":"integer"}},"additionalProperties":{"type":"integer"}}`,
					"{"+testkit.JoinN(nearLimit/12, func(i int) string { return fmt.Sprintf(`"%06x":0`, i) })+"}", "strict_content_check", "true")
			}},
		// An array of more items than the step limit (1,000,000) is a 422.
		{name: "many empty arrays", want: wantEither,
			body: func() []byte {
				return testkit.VerifyBody(`{"items":{"type":"array"}}`, "["+repeatTo(nearLimit, "[]")+"]")
			}},
		{name: "many small numbers", want: wantEither,
			body: func() []byte {
				return testkit.VerifyBody(`{"items":{"type":"integer"}}`, "["+repeatTo(nearLimit, "1")+"]")
			}},
		{name: "many subnormal numbers", want: wantVerdict,
			body: func() []byte {
				return testkit.VerifyBody(`{"items":{"type":"number"}}`, "["+repeatTo(nearLimit, "5e-324")+"]")
			}},
		{name: "many numbers near the largest double", want: wantVerdict,
			body: func() []byte {
				return testkit.VerifyBody(`{"items":{"type":"number"}}`, "["+repeatTo(nearLimit, "1.7976931348623157e308")+"]")
			}},
		{name: "one number of 3M digits", want: wantEither,
			body: func() []byte {
				return testkit.VerifyBody(`{"multipleOf":0.1,"minimum":1}`, "1."+strings.Repeat("0", 3<<20)+"1")
			}},
		{name: "multipleOf on a number of 3M digits", want: wantEither,
			body: func() []byte {
				return testkit.VerifyBody(`{"multipleOf":3}`, strings.Repeat("9", 15)+"."+strings.Repeat("7", 3<<20))
			}},
		{name: "2^53 is the largest integer", want: wantVerdict,
			body: func() []byte { return testkit.VerifyBody(`{"type":"integer"}`, `9007199254740992`) }},
		{name: "2^53+1 is not I-JSON", want: want422, field: "submitted_output",
			body: func() []byte { return testkit.VerifyBody(`{}`, `9007199254740993`) }},
		{name: "-2^53-1 is not I-JSON", want: want422, field: "submitted_output",
			body: func() []byte { return testkit.VerifyBody(`{}`, `-9007199254740993`) }},
		{name: "the largest double", want: wantVerdict,
			body: func() []byte {
				return testkit.VerifyBody(`{"type":"number"}`, `[1.7976931348623157e308,-1.7976931348623157e308]`)
			}},
		{name: "past the largest double", want: want422, field: "submitted_output",
			body: func() []byte { return testkit.VerifyBody(`{}`, `1.7976931348623159e308`) }},
		{name: "1e400", want: want422, field: "submitted_output",
			body: func() []byte { return testkit.VerifyBody(`{}`, `1e400`) }},
		{name: "the smallest subnormal", want: wantVerdict,
			body: func() []byte {
				return testkit.VerifyBody(`{"type":"number"}`, `[5e-324,4.9406564584124654e-324,-5e-324]`)
			}},
		{name: "underflow to zero", want: want422, field: "submitted_output",
			body: func() []byte { return testkit.VerifyBody(`{}`, `1e-400`) }},
		{name: "negative zero and zeros", want: wantVerdict,
			body: func() []byte { return testkit.VerifyBody(`{"type":"integer"}`, `[-0,0,0.0,-0.0,0e10,0E-10]`) }},
		{name: "huge exponent", want: want422, field: "submitted_output",
			body: func() []byte { return testkit.VerifyBody(`{}`, `1e99999999999999999999`) }},
		{name: "tiny exponent", want: want422, field: "submitted_output",
			body: func() []byte { return testkit.VerifyBody(`{}`, `1e-99999999999999999999`) }},
		{name: "zero with a huge exponent", want: wantVerdict,
			body: func() []byte { return testkit.VerifyBody(`{"const":0}`, `0e99999999999999999999`) }},
		{name: "integer with a fraction past 2^53", want: wantVerdict,
			body: func() []byte { return testkit.VerifyBody(`{"type":"number"}`, `9007199254740993.0`) }},
		{name: "number as a bound", want: wantVerdict,
			body: func() []byte {
				return testkit.VerifyBody(`{}`, `{"a":5e-324}`, "bounds", `{"a":{"min":-1.7976931348623157e308,"max":1.7976931348623157e308}}`)
			}},
		{name: "number past the largest double as a bound", want: want422, field: "bounds",
			body: func() []byte { return testkit.VerifyBody(`{}`, `{"a":1}`, "bounds", `{"a":{"max":1e400}}`) }},
		{name: "tolerance of a subnormal", want: wantVerdict,
			body: func() []byte {
				return testkit.VerifyBody(`{}`, `{"a":[1,2],"t":3}`, "rules", `[{"type":"sum_equals","field":"a[]","equals_field":"t","tolerance":5e-324}]`)
			}},
	}
}

// TestHostileDocuments sends every hostile document through the real HTTP
// handler: each must come back within hostileBound with a verdict, a 413 or
// a 422, never a 5xx.
func TestHostileDocuments(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	runHostile(t, f, hostileDocuments())
}
