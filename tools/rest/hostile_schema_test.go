package rest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// want is what a hostile case must come back as.
type want int

const (
	wantVerdict want = iota + 1 // 200 with a signed verdict
	want422                     // 422 invalid_request
	wantEither                  // a verdict or a 422
	want413                     // 413 payload_too_large
)

func (w want) String() string {
	return map[want]string{wantVerdict: "a verdict", want422: "a 422", wantEither: "a verdict or a 422", want413: "a 413"}[w]
}

// hostileCase is one request built to make the verifier hang, recurse,
// allocate or echo, with what it must answer.
type hostileCase struct {
	name  string
	body  func() []byte
	want  want
	field string // for a 422: the first field named
}

// nest wraps inner in depth levels of open…close.
func nest(depth int, open, inner, close string) string {
	return strings.Repeat(open, depth) + inner + strings.Repeat(close, depth)
}

// hostileSchemas are schemas built to exhaust the evaluator.
func hostileSchemas() []hostileCase {
	huge := strings.Repeat("a", 3<<20)
	return []hostileCase{
		{name: "$ref to itself", want: want422, field: "expected_schema",
			body: func() []byte { return testkit.VerifyBody(`{"$ref":"#"}`, `{}`) }},
		{name: "$ref loop through $defs", want: want422, field: "expected_schema",
			body: func() []byte {
				return testkit.VerifyBody(`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`, `1`)
			}},
		{name: "$ref loop through allOf and anyOf", want: want422, field: "expected_schema",
			body: func() []byte {
				return testkit.VerifyBody(`{"$defs":{"a":{"allOf":[{"$ref":"#/$defs/b"}]},"b":{"anyOf":[{"$ref":"#/$defs/a"},{"type":"null"}]}},"$ref":"#/$defs/a"}`, `null`)
			}},
		{name: "$dynamicRef loop", want: want422, field: "expected_schema",
			body: func() []byte {
				return testkit.VerifyBody(`{"$id":"https://x.test/s","$dynamicAnchor":"n","$dynamicRef":"#n"}`, `{}`)
			}},
		{name: "mutually recursive $defs on a deep output", want: wantVerdict,
			body: func() []byte {
				s := `{"$defs":{"a":{"type":"object","properties":{"x":{"$ref":"#/$defs/b"}}},"b":{"type":"array","items":{"$ref":"#/$defs/a"}}},"$ref":"#/$defs/a"}`
				return testkit.VerifyBody(s, nest(60, `{"x":[`, `{}`, `]}`))
			}},
		{name: "exponential fan-out of allOf $refs", want: want422, field: "expected_schema",
			body: func() []byte {
				defs := testkit.JoinN(40, func(i int) string {
					return fmt.Sprintf(`"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i+1, i+1)
				})
				return testkit.VerifyBody(`{"$defs":{`+defs+`,"d40":{"type":"integer"}},"$ref":"#/$defs/d0"}`, `1`)
			}},
		{name: "exponential fan-out of anyOf over an array", want: want422, field: "expected_schema",
			body: func() []byte {
				defs := testkit.JoinN(30, func(i int) string {
					return fmt.Sprintf(`"d%d":{"anyOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i+1, i+1)
				})
				out := "[" + testkit.JoinN(1000, func(int) string { return `"x"` }) + "]"
				return testkit.VerifyBody(`{"$defs":{`+defs+`,"d30":{"type":"integer"}},"items":{"$ref":"#/$defs/d0"}}`, out)
			}},
		{name: "50k-entry enum of strings over 200k items", want: wantVerdict,
			body: func() []byte {
				enum := "[" + testkit.JoinN(50_000, func(i int) string { return fmt.Sprintf(`"v%d"`, i) }) + "]"
				out := "[" + testkit.JoinN(200_000, func(int) string { return `"v49999"` }) + "]"
				return testkit.VerifyBody(`{"items":{"enum":`+enum+`}}`, out)
			}},
		{name: "50k-entry enum of numbers over 200k items", want: wantVerdict,
			body: func() []byte {
				enum := "[" + testkit.JoinN(50_000, func(i int) string { return fmt.Sprintf(`%d.5`, i) }) + "]"
				out := "[" + testkit.JoinN(200_000, func(int) string { return `49999.5` }) + "]"
				return testkit.VerifyBody(`{"items":{"enum":`+enum+`}}`, out)
			}},
		{name: "50k-entry enum of objects over 20k items", want: wantVerdict,
			body: func() []byte {
				enum := "[" + testkit.JoinN(50_000, func(i int) string { return fmt.Sprintf(`{"k":%d}`, i) }) + "]"
				out := "[" + testkit.JoinN(20_000, func(int) string { return `{"k":49999}` }) + "]"
				return testkit.VerifyBody(`{"items":{"enum":`+enum+`}}`, out)
			}},
		{name: "2k-deep nested schema", want: want422,
			body: func() []byte { return testkit.VerifyBody(nest(2000, `{"items":`, `true`, `}`), `[]`) }},
		{name: "2k-deep nested allOf", want: want422,
			body: func() []byte { return testkit.VerifyBody(nest(2000, `{"allOf":[`, `{}`, `]}`), `1`) }},
		{name: "127-deep schema on a 127-deep output", want: wantEither,
			body: func() []byte { return testkit.VerifyBody(nest(60, `{"items":`, `{}`, `}`), nest(120, `[`, ``, `]`)) }},
		{name: "pattern with look-ahead", want: want422, field: "expected_schema.pattern",
			body: func() []byte { return testkit.VerifyBody(`{"pattern":"(?=a)b"}`, `"ab"`) }},
		{name: "pattern with look-behind", want: want422, field: "expected_schema.pattern",
			body: func() []byte { return testkit.VerifyBody(`{"pattern":"(?<=a)b"}`, `"ab"`) }},
		{name: "pattern with a back-reference", want: want422, field: "expected_schema.pattern",
			body: func() []byte { return testkit.VerifyBody(`{"pattern":"(a)\\1"}`, `"aa"`) }},
		{name: "catastrophic (a+)+$ on 3 MiB", want: wantVerdict,
			body: func() []byte { return testkit.VerifyBody(`{"pattern":"^(a+)+$"}`, `"`+huge+`!"`) }},
		{name: "catastrophic (a|a)*$ and (x+x+)+y on 1 MiB", want: wantVerdict,
			body: func() []byte {
				return testkit.VerifyBody(`{"allOf":[{"pattern":"^(a|a)*$"},{"pattern":"(a+a+)+y"},{"pattern":"^(a|aa)+$"}]}`, `"`+huge[:1<<20]+`!"`)
			}},
		{name: "catastrophic patternProperties on a long key", want: wantVerdict,
			body: func() []byte {
				return testkit.VerifyBody(`{"patternProperties":{"^(a+)+$":{"type":"null"}},"propertyNames":{"pattern":"^(a*)*$"}}`, `{"`+huge[:1<<20]+`!":1}`)
			}},
		{name: "pattern whose repetitions multiply", want: want422, field: "expected_schema.pattern",
			body: func() []byte { return testkit.VerifyBody(`{"pattern":"((a{1000}){1000}){1000}"}`, `"a"`) }},
		{name: "pattern of 100k nested groups", want: want422,
			body: func() []byte { return testkit.VerifyBody(`{"pattern":"`+nest(100_000, `(`, `a`, `)`)+`"}`, `"a"`) }},
		{name: "uniqueItems over 100k distinct numbers", want: wantVerdict,
			body: func() []byte {
				return testkit.VerifyBody(`{"uniqueItems":true}`, "["+testkit.JoinN(100_000, func(i int) string { return fmt.Sprint(i) })+"]")
			}},
		{name: "uniqueItems over 100k equal-looking numbers", want: wantVerdict,
			body: func() []byte {
				return testkit.VerifyBody(`{"uniqueItems":true}`, "["+testkit.JoinN(100_000, func(i int) string { return fmt.Sprintf("1.%de-3", i) })+"]")
			}},
		{name: "uniqueItems over 200k equal items", want: wantVerdict,
			body: func() []byte { return testkit.VerifyBody(`{"uniqueItems":true}`, "["+repeatTo(1<<20, `"x"`)+"]") }},
		{name: "uniqueItems applied 2^19 times to 100k items", want: want422, field: "expected_schema",
			body: func() []byte {
				return testkit.VerifyBody(testkit.FanOutSchema(19, `{"uniqueItems":true}`), "["+repeatTo(600_000, "1")+"]")
			}},
		{name: "pattern applied 2^19 times to a 3 MiB string", want: want422, field: "expected_schema",
			body: func() []byte {
				return testkit.VerifyBody(testkit.FanOutSchema(19, `{"pattern":"^(a|b)*$"}`), `"`+huge+`"`)
			}},
		{name: "format regex on a 3 MiB string", want: want422, field: "expected_schema",
			body: func() []byte { return testkit.VerifyBody(`{"format":"regex"}`, `"`+huge+`"`) }},
		{name: "const of 2 MiB applied 2^19 times", want: want422, field: "expected_schema",
			body: func() []byte {
				return testkit.VerifyBody(testkit.FanOutSchema(19, `{"const":"`+huge[:1<<20]+`"}`), `"`+huge[:1<<20]+`"`)
			}},
		{name: "uniqueItems over 30k distinct objects", want: wantVerdict,
			body: func() []byte {
				return testkit.VerifyBody(`{"uniqueItems":true}`, "["+testkit.JoinN(30_000, func(i int) string { return fmt.Sprintf(`{"a":[%d,{"b":"%d"}]}`, i, i) })+"]")
			}},
		{name: "multipleOf 1e-300 on large numbers", want: wantVerdict,
			body: func() []byte {
				out := "[" + testkit.JoinN(50_000, func(i int) string { return fmt.Sprintf("1.%de308", i%8) }) + "]"
				return testkit.VerifyBody(`{"items":{"multipleOf":1e-300}}`, out)
			}},
		{name: "multipleOf 5e-324 on 1.7976931348623157e308", want: wantVerdict,
			body: func() []byte {
				out := "[" + testkit.JoinN(20_000, func(int) string { return "1.7976931348623157e308" }) + "]"
				return testkit.VerifyBody(`{"items":{"multipleOf":5e-324}}`, out)
			}},
		{name: "multipleOf 1.7976931348623157e308 on tiny numbers", want: wantVerdict,
			body: func() []byte {
				out := "[" + testkit.JoinN(50_000, func(i int) string { return fmt.Sprintf("4.9%de-324", i%10) }) + "]"
				return testkit.VerifyBody(`{"items":{"multipleOf":1.7976931348623157e308}}`, out)
			}},
		{name: "every format but regex on a 3 MiB string", want: wantVerdict,
			body: func() []byte {
				formats := []string{"date-time", "date", "time", "duration", "email", "idn-email", "hostname", "idn-hostname",
					"ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference", "uuid", "uri-template",
					"json-pointer", "relative-json-pointer"}
				all := testkit.JoinN(len(formats), func(i int) string { return fmt.Sprintf(`{"format":%q}`, formats[i]) })
				return testkit.VerifyBody(`{"allOf":[`+all+`]}`, `"`+strings.Repeat("a.", 3<<19)+`"`)
			}},
		// The worst case of the uri-template library: every byte inside an
		// expression.
		{name: "format uri-template on 3 MiB of expressions", want: wantVerdict,
			body: func() []byte {
				return testkit.VerifyBody(`{"format":"uri-template"}`, `"`+strings.Repeat("{a}", 1<<20)+`"`)
			}},
		{name: "format regex on a 512 KiB pattern of nested groups", want: wantVerdict,
			body: func() []byte { return testkit.VerifyBody(`{"format":"regex"}`, `"`+nest(1<<18, `(`, ``, `)`)+`"`) }},
		{name: "format idn-hostname on a 1 MiB punycode label", want: wantVerdict,
			body: func() []byte {
				return testkit.VerifyBody(`{"format":"idn-hostname"}`, `"xn--`+strings.Repeat("a", 1<<20)+`"`)
			}},
		{name: "format email on a 1 MiB quoted local part", want: wantVerdict,
			body: func() []byte {
				return testkit.VerifyBody(`{"format":"email"}`, `"\"`+strings.Repeat(`\\\\`, 1<<18)+`\"@x.test"`)
			}},
	}
}

// TestHostileSchemas sends every hostile schema through the real HTTP
// handler: each must come back within hostileBound with a verdict or a 422,
// never a 5xx.
func TestHostileSchemas(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	runHostile(t, f, hostileSchemas())
}

func runHostile(t *testing.T, f *httpFixture, cases []hostileCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.body()
			start, startCPU := time.Now(), testkit.CPUNow()
			rec := testkit.ServeRaw(f.h, http.MethodPost, "/verify/schema", "application/json", body)
			took, cpu := time.Since(start), testkit.CPUNow()-startCPU
			t.Logf("%d bytes: status %d in %v (CPU %v)", len(body), rec.Code, took, cpu)
			if cpu > testkit.HostileBound || took > testkit.HangBound {
				t.Errorf("took %v of CPU (%v of wall time), more than %v (%v)", cpu, took, testkit.HostileBound, testkit.HangBound)
			}
			o := testkit.Classify(t, rec.Code, rec.Header(), rec.Body.Bytes(), false)
			switch {
			case tc.want == wantVerdict && o.Status != http.StatusOK,
				tc.want == want422 && o.Status != http.StatusUnprocessableEntity,
				tc.want == want413 && o.Status != http.StatusRequestEntityTooLarge,
				tc.want == wantEither && o.Status != http.StatusOK && o.Status != http.StatusUnprocessableEntity:
				t.Errorf("status %d, want %s: %.400s", o.Status, tc.want, o.Body)
			}
			if tc.field != "" && o.Status == http.StatusUnprocessableEntity && (len(o.Fields) == 0 || !strings.HasPrefix(o.Fields[0], tc.field)) {
				t.Errorf("fields = %v, want the first to start with %q", o.Fields, tc.field)
			}
		})
	}
}
