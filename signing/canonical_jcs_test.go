package signing

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gowebpki/jcs"

	"github.com/verifier-dev/verifier/internal/ijson"
)

// The tests below hold signing's canonicalization (internal/ijson's
// canonical writer) to gowebpki/jcs, the reference: byte for byte, refusal
// for refusal.

// ownCanonical is ijson's canonical writer on a fresh Canonicalizer.
func ownCanonical(in []byte) ([]byte, error) { return new(ijson.Canonicalizer).Append(nil, in, 0) }

// maxCanonicalDepth is the nesting limit, jcs's.
const maxCanonicalDepth = ijson.MaxCanonicalDepth

// signedDocumentJCS is SignedDocument by way of jcs.Transform over the
// assembled document: the reference SignedDocument is tested against.
func signedDocumentJCS(context, keyVersion, attestedAt string, response []byte) ([]byte, error) {
	for _, v := range []string{context, keyVersion, attestedAt} {
		if v == "" || !utf8.ValidString(v) {
			return nil, errors.New("an attestation field is empty or not UTF-8")
		}
	}
	// Response is spliced in as text, so it must be exactly one JSON value:
	// `1,"context":"x"` would otherwise inject a member.
	if !json.Valid(response) {
		return nil, errors.New("response is not a single JSON value")
	}
	str := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	doc := `{"context":` + str(context) + `,"algorithm":"` + Algorithm + `","key_version":` + str(keyVersion) +
		`,"attested_at":` + str(attestedAt) + `,"response":` + string(response) + `}`
	return jcs.Transform([]byte(doc))
}

// signedDocumentOK is appendSignedDocument, ok reporting success.
func signedDocumentOK(dst []byte, context, keyVersion, attestedAt string, response []byte) ([]byte, bool) {
	doc, err := appendSignedDocument(dst, context, keyVersion, attestedAt, response)
	return doc, err == nil
}

// checkAgainstJCS fails unless our canonicalizer and jcs.Transform give the
// same bytes, or both refuse in.
func checkAgainstJCS(t testing.TB, in []byte) {
	t.Helper()
	want, wantErr := jcs.Transform(in)
	got, err := ownCanonical(in)
	switch {
	case (err != nil) != (wantErr != nil):
		t.Fatalf("canonicalizer error %v, jcs error %v, for input %q", err, wantErr, in)
	case err == nil && !bytes.Equal(got, want):
		t.Fatalf("canonicalizer differs from jcs for input %q:\ngot  %q\nwant %q", in, got, want)
	}
	// A Canonicalizer whose working memory holds an earlier text gives
	// the same, and leaves the earlier result alone.
	var c ijson.Canonicalizer
	first, err := c.Append(nil, []byte(`{"z":[{"b":"\u00e9","a":1.50}],"y":{"\ud83d\ude00":0,"\ue000":1}}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	firstCopy := bytes.Clone(first)
	again, err := c.Append(nil, in, 0)
	if (err != nil) != (wantErr != nil) || (err == nil && !bytes.Equal(again, want)) {
		t.Fatalf("Canonicalizer.Append(%q) = %q, %v; want %q, %v", in, again, err, want, wantErr)
	}
	if !bytes.Equal(first, firstCopy) {
		t.Fatalf("canonicalizing %q changed an earlier result to %q", in, first)
	}
}

// canonicalSeeds are inputs that reach every branch of the canonicalizer.
var canonicalSeeds = []string{
	`{"b":[1.0,-0,1e21,"\u00e9"],"a":{}}`, `"\ud83d\ude00"`, `[1e-7, 5e-324]`, `{"a":1,"a":2}`,
	`{"z":{"y":[{"b":1,"a":2},{"d":{"f":0,"e":1}}],"x":"\t"},"a":[]}`,
	"{\"\ue000\":1,\"\U0001F600\":2,\"\u00ff\":3,\"a\":4}",
	`{"\u0061":1,"a":2}`, `{"b":1,"c":2,"\u0062":3}`, `{"a\\":1,"a\"":2,"a/":3,"a\/b":4}`,
	`"\u0000\u001F\u007f\u2028\b\f\n\r\t\"\\\/"`, `"\uDE00"`, `"\uD800\u0041"`, `"\uD800"`, `"\uD800\`,
	"\"\xff\"", "\"\xed\xa0\x80\"", "\"\xef\xbf\xbd\"", "\"\xc0\x80\"", "\"\x01\"", "\"\x7f\"",
	` 42 `, `-0`, `-0.0`, `0.1`, `[25.0,135.50,0.0000010,0.0000001,100.5000,123456789012345.5,-0.000]`, `1E+2`, `1e+09`, `123456789012345`, `1234567890123456789`, `9007199254740993`,
	`1e400`, `-1e400`, `1e-400`, `01`, `1.`, `.5`, `+1`, `1e`, `-`, `NaN`, `Infinity`, `0x10`, `1_000`,
	`true`, `false`, `null`, `tru`, `nul`, `True`, `[true false]`, `[1 2]`, `[1,]`, `[,1]`, `{"a":1,}`, `{,}`,
	`{"a" 1}`, `{"a":1 "b":2}`, `{a:1}`, `{'a':1}`, `[1]]`, `{} {}`, ``, ` `, "\t\n\r ", `[`, `{"a":`, `"abc`,
	"[1,\u00a02]", "\xef\xbb\xbf{}", `[1:2]`, `{"a":1:2}`, `["a"1]`, `[1"a"]`, `{"a":{}}}`,
	`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`,
}

// FuzzCanonicalMatchesJCS: on arbitrary bytes the canonicalizer gives
// exactly jcs.Transform's output, or refuses exactly when jcs does. Seeds
// are the inputs above, the JCS suite and the signing test answers.
func FuzzCanonicalMatchesJCS(f *testing.F) {
	for _, s := range canonicalSeeds {
		f.Add([]byte(s))
	}
	for _, pattern := range []string{
		filepath.Join(repoTestdata, "jcs", "input", "*.json"),
		filepath.Join("testdata", "answers", "*.json"),
	} {
		files, err := filepath.Glob(pattern)
		if err != nil || len(files) == 0 {
			f.Fatalf("no seeds match %s (err %v)", pattern, err)
		}
		for _, name := range files {
			f.Add(readFile(f, name))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkAgainstJCS(t, data)
	})
}

// FuzzCanonicalValidJSON builds a valid JSON document from the fuzz
// input (keys out of order, escapes, characters on both sides of the UTF-16
// ordering quirk, numbers in every spelling, whitespace) so that the
// comparison with jcs explores accepted documents, not only refusals.
func FuzzCanonicalValidJSON(f *testing.F) {
	for _, s := range []string{"", "\x00", "object of things", "\xff\xfe\xfd\xfc\xfb\xfa", strings.Repeat("\x05\x83", 40)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &jsonGen{src: data}
		doc := g.value(0)
		checkAgainstJCS(t, doc)
		if _, err := jcs.Transform(doc); err != nil && !bytes.Contains([]byte(err.Error()), []byte("Duplicate key")) {
			t.Fatalf("generator made a document jcs refuses (%v): %q", err, doc)
		}
	})
}

// jsonGen turns bytes into one valid JSON text (duplicate keys aside).
type jsonGen struct {
	src []byte
	pos int
}

func (g *jsonGen) next() byte {
	if g.pos >= len(g.src) {
		return 0
	}
	g.pos++
	return g.src[g.pos-1]
}

var genPieces = []string{
	"a", "b", "A", "é", "\u00ff", "\ue000", "\uffff", "\U0001F600", "\U0010FFFF", "\u2028",
	`\u0000`, `\n`, `\"`, `\\`, `\/`, `\u00e9`, `\uD83D\uDE00`, `\uE000`, `\u001f`, " ", "\x7f",
}

var genNumbers = []string{
	"0", "-0", "1", "-1", "1.0", "1e2", "1E-2", "0.000001", "1e-7", "123456789012345", "1234567890123456",
	"9007199254740993", "1e21", "1e+21", "999999999999999999999", "5e-324", "1.7976931348623157e308",
	"0.1", "-3.25e10", "1e-400", "4.35", "25.0", "135.50", "-0.0", "0.0000010", "0.0000001", "0.000001",
	"100.5000", "123456789012345.5", "99999999999999.9", "0.1000000000000001", "-0.000000", "1234567890123456.0",
	"0.30000000000000004", "9.999999999999999", "0.000009999999999999999",
}

func (g *jsonGen) space() string {
	return [...]string{"", "", " ", "\n\t", "\r "}[g.next()%5]
}

func (g *jsonGen) str() string {
	var b strings.Builder
	b.WriteByte('"')
	for n := int(g.next() % 5); n > 0; n-- {
		b.WriteString(genPieces[int(g.next())%len(genPieces)])
	}
	b.WriteByte('"')
	return b.String()
}

func (g *jsonGen) value(depth int) []byte {
	var b bytes.Buffer
	b.WriteString(g.space())
	kind := g.next() % 7
	if depth > 6 && kind < 2 {
		kind += 2
	}
	switch kind {
	case 0:
		b.WriteByte('{')
		for i, n := 0, int(g.next()%6); i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(g.space() + g.str() + g.space() + ":")
			b.Write(g.value(depth + 1))
		}
		b.WriteString(g.space() + "}")
	case 1:
		b.WriteByte('[')
		for i, n := 0, int(g.next()%5); i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(g.value(depth + 1))
		}
		b.WriteString(g.space() + "]")
	case 2, 3:
		b.WriteString(g.str())
	case 4:
		b.WriteString(genNumbers[int(g.next())%len(genNumbers)])
	default:
		b.WriteString([...]string{"true", "false", "null"}[g.next()%3])
	}
	b.WriteString(g.space())
	return b.Bytes()
}

func TestCanonicalSeeds(t *testing.T) {
	for _, s := range canonicalSeeds {
		t.Run(strconv.Quote(s), func(t *testing.T) { checkAgainstJCS(t, []byte(s)) })
	}
}

func TestCanonicalDepthLimit(t *testing.T) {
	deepest := strings.Repeat("[", maxCanonicalDepth) + strings.Repeat("]", maxCanonicalDepth)
	checkAgainstJCS(t, []byte(deepest))
	if _, err := ownCanonical([]byte(deepest)); err != nil {
		t.Errorf("ownCanonical(%d levels): %v, want the jcs limit to admit it", maxCanonicalDepth, err)
	}
	// Spliced one level down, as SignedDocument does, the same value is
	// one level too deep.
	if _, err := new(ijson.Canonicalizer).Append(nil, []byte(deepest), 1); err == nil {
		t.Errorf("Append at depth 1 admits %d more levels", maxCanonicalDepth)
	}
	objects := strings.Repeat(`{"b":1,"a":`, maxCanonicalDepth) + "0" + strings.Repeat("}", maxCanonicalDepth)
	checkAgainstJCS(t, []byte(objects))
}

// TestCanonicalDeepReorderIsLinear: members that must move at every one
// of many levels, around a large string, cost memory in proportion to the
// input, not to input times depth.
func TestCanonicalDeepReorderIsLinear(t *testing.T) {
	const depth = 2000
	big := strings.Repeat("x", 200_000)
	doc := []byte(strings.Repeat(`{"b":`, depth) + `"` + big + `"` + strings.Repeat(`,"a":1}`, depth))
	checkAgainstJCS(t, doc)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := ownCanonical(doc); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8*uint64(len(doc)) {
		t.Errorf("canonicalizing %d bytes allocated %d bytes, want under 8 times the input", len(doc), alloc)
	}
}

func TestSignedDocumentMatchesJCS(t *testing.T) {
	tests := []struct {
		name              string
		context, kv, at   string
		response          string
		wantRefused       bool
		wantSignedDocFail bool
	}{
		{name: "answer", context: ContextVerify, kv: "v1-2026-11a", at: "2026-11-01T00:00:00.000000+00:00",
			response: ` { "z": 1.0, "a": [0.966667, "\u00e9<>&"] } `},
		{name: "escapes in strings", context: ContextTrustScore, kv: "v\"1\\\x01\u2028", at: "t\n\u00e9", response: `null`},
		{name: "injection", context: ContextVerify, kv: "v1", at: "t", response: `1,"context":"x"`,
			wantRefused: true, wantSignedDocFail: true},
		{name: "invalid utf-8 key version", context: ContextVerify, kv: "v\xff", at: "t", response: `{}`,
			wantRefused: true, wantSignedDocFail: true},
		{name: "deepest response", context: ContextVerify, kv: "v1", at: "t",
			response: strings.Repeat("[", maxCanonicalDepth-1) + strings.Repeat("]", maxCanonicalDepth-1)},
		{name: "one level too deep inside the document", context: ContextVerify, kv: "v1", at: "t",
			response:    strings.Repeat("[", maxCanonicalDepth) + strings.Repeat("]", maxCanonicalDepth),
			wantRefused: true, wantSignedDocFail: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, wantErr := signedDocumentJCS(tt.context, tt.kv, tt.at, []byte(tt.response))
			if (wantErr != nil) != tt.wantSignedDocFail {
				t.Fatalf("signedDocumentJCS error = %v, want failure %v", wantErr, tt.wantSignedDocFail)
			}
			got, ok := signedDocumentOK(nil, tt.context, tt.kv, tt.at, []byte(tt.response))
			if ok == tt.wantRefused {
				t.Fatalf("signedDocumentOK ok = %v, want %v", ok, !tt.wantRefused)
			}
			if ok && !bytes.Equal(got, want) {
				t.Errorf("signedDocumentOK:\ngot  %s\nwant %s", got, want)
			}
		})
	}
}

// FuzzSignedDocumentMatchesJCS: the signed document is the jcs path's, and it
// refuses whenever the jcs path fails.
func FuzzSignedDocumentMatchesJCS(f *testing.F) {
	f.Add(ContextVerify, "v1-2026-11a", "2026-11-01T00:00:00.000000+00:00", []byte(`{"b":1,"a":[2]}`))
	f.Add(ContextTrustScore, "k\"\\", "\x1f", []byte(`1,"zzz":2`))
	f.Add("c", "v", "t", []byte("\"\xff\""))
	f.Fuzz(func(t *testing.T, context, kv, at string, response []byte) {
		want, wantErr := signedDocumentJCS(context, kv, at, response)
		got, ok := signedDocumentOK(nil, context, kv, at, response)
		if ok && (wantErr != nil || !bytes.Equal(got, want)) {
			t.Fatalf("signed document %q, jcs path %q, %v", got, want, wantErr)
		}
		if !ok && wantErr == nil {
			t.Fatalf("refused what the jcs path signs: %q", want)
		}
	})
}

func BenchmarkCanonicalize(b *testing.B) {
	answer := benchAnswer(b)
	for _, tt := range []struct {
		name string
		fn   func([]byte) ([]byte, error)
	}{{"ours", ownCanonical}, {"jcs", jcs.Transform}} {
		b.Run(tt.name, func(b *testing.B) {
			b.SetBytes(int64(len(answer)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tt.fn(answer); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCanonicalizeSmall(b *testing.B) {
	rules := []byte(`[{"type":"sum_equals","field":"line_items[].line_total","equals_field":"total","equals":null,"other_field":null,"value":null,"in_field":null,"values":null,"tolerance":0.01,"if_present":false},{"values":null,"type":"unique","field":"line_items[].description","equals_field":null,"equals":null,"other_field":null,"value":null,"in_field":null,"tolerance":1e-9,"if_present":false}]`)
	b.Run("ours", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ownCanonical(rules); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jcs", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jcs.Transform(rules); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// FuzzCanonicalNumbers compares number literals with jcs: the digits
// of n with a decimal point placed point digits from the right (padded
// with zeros), trailing zeros, a sign and an optional exponent, which
// drives the plain-decimal shortcut and the paths around it.
func FuzzCanonicalNumbers(f *testing.F) {
	f.Add(uint64(2500), uint8(2), uint8(1), false, int16(0))
	f.Add(uint64(966667), uint8(6), uint8(0), true, int16(0))
	f.Add(uint64(1), uint8(7), uint8(3), false, int16(0))
	f.Add(uint64(1234567890123456), uint8(1), uint8(0), false, int16(0))
	f.Add(uint64(5), uint8(0), uint8(0), false, int16(-324))
	f.Fuzz(func(t *testing.T, n uint64, point, zeros uint8, neg bool, exp int16) {
		digits := strconv.FormatUint(n, 10)
		if p := int(point % 30); p > 0 {
			if len(digits) <= p {
				digits = strings.Repeat("0", p-len(digits)+1) + digits
			}
			digits = digits[:len(digits)-p] + "." + digits[len(digits)-p:] + strings.Repeat("0", int(zeros%8))
		}
		if neg {
			digits = "-" + digits
		}
		if exp != 0 {
			digits += "e" + strconv.Itoa(int(exp))
		}
		checkAgainstJCS(t, []byte(digits))
		checkAgainstJCS(t, []byte("["+digits+"]"))
	})
}

func BenchmarkSignedDocument(b *testing.B) {
	answer := benchAnswer(b)
	b.SetBytes(int64(len(answer)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := SignedDocument(ContextVerify, "v1-2026-11a", "2026-11-02T23:59:59.000001+00:00", answer); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCanonicalizeSchema canonicalizes the invoice's expected_schema,
// a dense document of short names and small objects.
func BenchmarkCanonicalizeSchema(b *testing.B) {
	var req struct {
		ExpectedSchema json.RawMessage `json:"expected_schema"`
	}
	if err := json.Unmarshal(readFile(b, filepath.Join("..", "testdata", "invoice-pass.json")), &req); err != nil {
		b.Fatal(err)
	}
	var c ijson.Canonicalizer
	b.SetBytes(int64(len(req.ExpectedSchema)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Append(nil, req.ExpectedSchema, 0); err != nil {
			b.Fatal(err)
		}
	}
}
