package ijson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
)

// fastSeeds reach every branch of the fast decoder.
var fastSeeds = []string{
	`{"a":[1,2.5,-0,1e2,{"b":null}],"c":"d\u00e9\n\/","e":true,"f":false}`, `"\ud83d\ude00"`, `"\ud800"`,
	`"\udc00"`, `"\ud800\u0041"`, `"\ud800\ud800"`, `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `[{"k":1,"k":1}]`,
	"\"\xff\"", "\"\xed\xa0\x80\"", "\"\xef\xbf\xbd\"", "\"\x01\"", "\"\x7f\"", ` 42 `, `-0`, `0.0`, `1e-400`,
	`0e5`, `9007199254740992`, `9007199254740993`, `-9007199254740993`, `123456789012345`, `1234567890123456`,
	`1e400`, `01`, `1.`, `.5`, `+1`, `1e`, `-`, `1true`, `[1true]`, `truex`, `nul`, `[true false]`, `[1,]`,
	`{"a":1,}`, `{"a" 1}`, `{a:1}`, `[1]]`, `{} {}`, ``, ` `, `[`, `{"a":`, `"abc`, "\xef\xbb\xbf{}",
	`{"a":"b""c":1}`, `{"":"",""`, "\"\xf2", `"\ud800`, `"\ud800\`, `"\ud800\u00`, `"\ud800x"`, `"\udc00`, "\"\\ud800\\uDC\x10", `[1"a"]`, `{"a":{}}}`, `[[[[[[[[]]]]]]]]`, `"\u00"`, `"\x"`, `{"":0}`, `[[],{}]`,
	"0." + strings.Repeat("0", 297) + "1", "0." + strings.Repeat("0", 298) + "1", "0." + strings.Repeat("0", 350) + "1",
	"1" + strings.Repeat("0", 320) + ".5", "-1" + strings.Repeat("0", 297) + ".5", `135.50`, `-0.0`, `1.5e3`,
}

// decodeJSONText is Decode by way of jsontext's tokens: the reference the
// scanner is held to, value for value and problem for problem.
func decodeJSONText(data []byte, maxDepth int) (any, error) {
	d := jsontextDecoder{dec: jsontext.NewDecoder(bytes.NewReader(data)), maxDepth: maxDepth}
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	if _, err := d.dec.ReadToken(); err != io.EOF {
		return nil, &Error{Kind: ErrTrailing, Offset: d.dec.InputOffset()}
	}
	return v, nil
}

type jsontextDecoder struct {
	dec      *jsontext.Decoder
	maxDepth int
}

func (d *jsontextDecoder) value(depth int) (any, error) {
	tok, err := d.dec.ReadToken()
	if err != nil {
		return nil, d.wrap(err)
	}
	switch tok.Kind() {
	case 'n':
		return nil, nil
	case 't':
		return true, nil
	case 'f':
		return false, nil
	case '"':
		return tok.String(), nil
	case '0':
		text := tok.String()
		if err := checkNumber(text); err != nil {
			return nil, &Error{Kind: ErrNumber, Offset: d.dec.InputOffset()}
		}
		return json.Number(text), nil
	case '{':
		if depth >= d.maxDepth {
			return nil, &Error{Kind: ErrDepth, Offset: d.dec.InputOffset(), Limit: d.maxDepth}
		}
		obj := make(map[string]any)
		for d.dec.PeekKind() != '}' {
			tok, err := d.dec.ReadToken()
			if err != nil {
				return nil, d.wrap(err)
			}
			name := tok.String() // tok is void after the next read
			v, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			obj[name] = v
		}
		if _, err := d.dec.ReadToken(); err != nil {
			return nil, d.wrap(err)
		}
		return obj, nil
	case '[':
		if depth >= d.maxDepth {
			return nil, &Error{Kind: ErrDepth, Offset: d.dec.InputOffset(), Limit: d.maxDepth}
		}
		arr := []any{}
		for d.dec.PeekKind() != ']' {
			v, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		if _, err := d.dec.ReadToken(); err != nil {
			return nil, d.wrap(err)
		}
		return arr, nil
	}
	return nil, &Error{Kind: ErrSyntax, Offset: d.dec.InputOffset()}
}

// wrap classifies a jsontext error as Decode does.
func (d *jsontextDecoder) wrap(err error) error {
	kind := ErrSyntax
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		switch {
		case errors.Is(se.Err, jsontext.ErrDuplicateName):
			kind = ErrDuplicate
		case strings.Contains(se.Err.Error(), "UTF-8"), strings.Contains(se.Err.Error(), "surrogate"):
			kind = ErrUTF8
		}
		return &Error{Kind: kind, Offset: se.ByteOffset}
	}
	return &Error{Kind: kind, Offset: d.dec.InputOffset()}
}

// checkFastAgainstJSONText fails unless Decode and the jsontext reference
// agree: the same value, or the same kind of problem.
func checkFastAgainstJSONText(t *testing.T, data []byte, maxDepth int) {
	t.Helper()
	want, wantErr := decodeJSONText(data, maxDepth)
	got, err := Decode(data, &Options{MaxDepth: maxDepth})
	if kindOf(err) != kindOf(wantErr) {
		t.Fatalf("Decode error %v, jsontext error %v, for %q", err, wantErr, data)
	}
	if err == nil && !cmp.Equal(got, want) {
		t.Fatalf("Decode(%q) differs from jsontext:\n%s", data, cmp.Diff(want, got))
	}
}

// kindOf is the Kind of an *Error, or nil.
func kindOf(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return err
}

// FuzzFastMatchesJSONText: on arbitrary bytes the fast decoder gives
// exactly the jsontext path's value, and gives up exactly where that path
// fails, at a small depth limit and at the default one.
func FuzzFastMatchesJSONText(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFastAgainstJSONText(t, data, 3)
		checkFastAgainstJSONText(t, data, DefaultMaxDepth)
	})
}

func TestFastSeeds(t *testing.T) {
	for _, s := range fastSeeds {
		t.Run(strconv.Quote(s), func(t *testing.T) {
			checkFastAgainstJSONText(t, []byte(s), 3)
			checkFastAgainstJSONText(t, []byte(s), DefaultMaxDepth)
		})
	}
}

// TestFastJSONTestSuite: the fast decoder agrees with the jsontext path on
// every file of JSONTestSuite.
func TestFastJSONTestSuite(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(parsingSuite, "*.json"))
	if err != nil || len(files) < 300 {
		t.Fatalf("JSONTestSuite not found under %s (%d files, %v)", parsingSuite, len(files), err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(name), func(t *testing.T) { checkFastAgainstJSONText(t, data, DefaultMaxDepth) })
	}
}

func TestFastDepthLimit(t *testing.T) {
	for _, depth := range []int{1, 2, 5} {
		for _, levels := range []int{depth - 1, depth, depth + 1} {
			doc := strings.Repeat(`[{"a":`, levels) + "1" + strings.Repeat("}]", levels)
			t.Run(strconv.Itoa(depth)+"/"+strconv.Itoa(levels), func(t *testing.T) {
				checkFastAgainstJSONText(t, []byte(doc), depth)
			})
		}
	}
	// No limit goes past MaxCanonicalDepth.
	deep := strings.Repeat("[", MaxCanonicalDepth+1) + strings.Repeat("]", MaxCanonicalDepth+1)
	if _, err := Decode([]byte(deep), &Options{MaxDepth: 2 * MaxCanonicalDepth}); !errors.Is(err, ErrDepth) {
		t.Errorf("Decode(%d levels) = %v, want ErrDepth", MaxCanonicalDepth+1, err)
	}
}

// splitJSONText is what DecodeMembers promises, computed with jsontext:
// the object's members by ReadValue, each decoded by decodeJSONText.
func splitJSONText(data []byte, maxDepth int) ([]Member, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	if tok.Kind() != '{' {
		return nil, errors.New("not an object")
	}
	members := []Member{}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		key := name.String()
		raw, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		raw = bytes.Clone(raw)
		v, err := decodeJSONText(raw, maxDepth)
		if err != nil {
			return nil, err
		}
		members = append(members, Member{Name: key, Raw: raw, Value: v})
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, errors.New("trailing data")
	}
	return members, nil
}

func checkMembers(t *testing.T, data []byte) {
	t.Helper()
	const maxDepth = 3
	want, err := splitJSONText(data, maxDepth)
	opts := &Options{MaxDepth: maxDepth}
	got, ok := DecodeMembers(nil, data, "", opts, nil)
	if ok != (err == nil) {
		t.Fatalf("DecodeMembers ok = %v, jsontext error %v, for %q", ok, err, data)
	}
	if ok && !cmp.Equal(got, want) {
		t.Fatalf("DecodeMembers(%q) differs from jsontext:\n%s", data, cmp.Diff(want, got))
	}
	// Appended after other members, with strings taken from the text, the
	// members are the same.
	before := []Member{{Name: "x", Raw: []byte("1")}}
	got, ok = DecodeMembers(before, data, string(data), opts, nil)
	if ok != (err == nil) {
		t.Fatalf("DecodeMembers with text ok = %v, jsontext error %v, for %q", ok, err, data)
	}
	if ok && !cmp.Equal(got, append(before, want...)) {
		t.Fatalf("DecodeMembers(%q) with text and a member before differs from jsontext:\n%s", data, cmp.Diff(append(before, want...), got))
	}
}

// TestDecodeMembersShares: given the text, DecodeMembers takes strings and
// numbers from it instead of copying each.
func TestDecodeMembersShares(t *testing.T) {
	data := []byte(`{"task_id":"t-1","output":{"name":"Data labelling","items":[{"qty":3,"price":25.0}],"note":"caf\u00e9"}}`)
	dst := make([]Member, 0, 4)
	copies := testing.AllocsPerRun(10, func() { DecodeMembers(dst, data, "", nil, nil) })
	text := string(data)
	shared := testing.AllocsPerRun(10, func() { DecodeMembers(dst, data, text, nil, nil) })
	// Seven names, two strings and the number 25.0 are taken from the text;
	// the escaped string is copied either way, and a one-byte string ("3")
	// costs no allocation either way.
	if copies-shared != 10 {
		t.Errorf("DecodeMembers allocates %v times with the text, %v without; want 10 fewer", shared, copies)
	}
}

// FuzzDecodeMembers: DecodeMembers succeeds exactly when splitting the
// object with jsontext and decoding each member does, with the same raw
// bytes and values.
func FuzzDecodeMembers(f *testing.F) {
	for _, s := range []string{
		` { "a" : [1, {"b": "\u00e9"}] , "c":null,"d" :"x" } `, `{}`, `{"a":1,"a":2}`, `{"a":[[[[1]]]]}`,
		`{"a":{"k":1,"k":2}}`, `[1]`, `{"a":1} x`, `{"a":1e400}`, "{\"a\":\"\xff\"}", `{"a":1,}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkMembers(t, data) })
}

func TestDecodeMembers(t *testing.T) {
	data := []byte(" {\"task_id\" : \"t-1\",\n \"expected_schema\":{\"type\": \"object\"} ,\"n\":[1, 2.50]}\n")
	checkMembers(t, data)
	got, ok := DecodeMembers(nil, data, "", nil, nil)
	if !ok {
		t.Fatal("DecodeMembers refused a well-formed object")
	}
	var raws []string
	for _, m := range got {
		raws = append(raws, m.Name+"="+string(m.Raw))
	}
	want := []string{`task_id="t-1"`, `expected_schema={"type": "object"}`, `n=[1, 2.50]`}
	if diff := cmp.Diff(want, raws); diff != "" {
		t.Errorf("DecodeMembers raw values (-want +got):\n%s", diff)
	}
}

func BenchmarkDecode(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "invoice-pass.json"))
	if err != nil {
		b.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		fn   func() error
	}{
		{"scanner", func() error { _, err := Decode(data, nil); return err }},
		{"jsontext", func() error { _, err := decodeJSONText(data, DefaultMaxDepth); return err }},
	} {
		b.Run(tt.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := tt.fn(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestDecodeMembersManyNames covers both duplicate checks of DecodeMembers:
// the linear scan of the first names and the set that takes over after.
func TestDecodeMembersManyNames(t *testing.T) {
	object := func(n, dupAt int) []byte {
		var b bytes.Buffer
		b.WriteString("{")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			name := i
			if i == dupAt {
				name = 1
			}
			fmt.Fprintf(&b, `"m%d":%d`, name, i)
		}
		b.WriteString("}")
		return b.Bytes()
	}
	for _, tt := range []struct {
		name     string
		n, dupAt int
	}{
		{"few, distinct", 5, -1}, {"few, duplicate", 5, 3},
		{"many, distinct", 100, -1}, {"many, duplicate in the scan", 100, 10}, {"many, duplicate in the set", 100, 60},
	} {
		t.Run(tt.name, func(t *testing.T) { checkMembers(t, object(tt.n, tt.dupAt)) })
	}
}

func TestSplitMembers(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string // each member's name=raw
		at       int
		kind     error // nil when it splits
	}{
		{"members as sent", ` {"a": {"x":1.50} , "b":"s"} `, []string{`a={"x":1.50}`, `b="s"`}, -1, nil},
		{"empty object", `{}`, nil, -1, nil},
		{"any number", `{"a":1e400}`, []string{`a=1e400`}, -1, nil},
		{"not an object", `[1]`, nil, -1, ErrSyntax},
		{"repeated name", `{"a":1,"\u0061":2}`, []string{`a=1`}, -1, ErrDuplicate},
		{"duplicate inside a value", `{"a":1,"b":{"x":1,"x":2}}`, []string{`a=1`, `b=`}, 1, ErrDuplicate},
		{"invalid UTF-8 in a value", "{\"a\":\"\xff\"}", []string{`a=`}, 0, ErrUTF8},
		{"lone surrogate in a value", `{"a":"\ud800"}`, []string{`a=`}, 0, ErrUTF8},
		{"malformed separator", `{"a":1 "b":2}`, []string{`a=1`}, -1, ErrSyntax},
		{"truncated value", `{"a":[1,`, []string{`a=`}, 0, ErrSyntax},
		{"data after the object", `{"a":1} 2`, []string{`a=1`}, -1, ErrTrailing},
		{"too deep", `{"a":` + strings.Repeat("[", MaxCanonicalDepth) + strings.Repeat("]", MaxCanonicalDepth) + `}`, []string{`a=`}, 0, ErrDepth},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			members, at, err := SplitMembers([]byte(tt.in), SplitLikeJSONText)
			var got []string
			for _, m := range members {
				if m.Value != nil {
					t.Errorf("member %s decoded: %v", m.Name, m.Value)
				}
				got = append(got, m.Name+"="+string(m.Raw))
			}
			if !slices.Equal(got, tt.want) || at != tt.at || !errors.Is(err, tt.kind) || (err == nil) != (tt.kind == nil) {
				t.Fatalf("SplitMembers(%.40q) = %q, %d, %v; want %q, %d, %v", tt.in, got, at, err, tt.want, tt.at, tt.kind)
			}
		})
	}
}

func TestSplitMembersGrammarOnly(t *testing.T) {
	tests := []struct {
		name, in string
		want     []Member // Name, NameEnd and End of each; Raw is in[NameEnd+1:End]
		at       int
		kind     error
	}{
		{"repeated names and nested duplicates", `{"a":{"x":1,"x":2},"a":1e400}`,
			[]Member{{Name: "a", NameEnd: 4, End: 18}, {Name: "a", NameEnd: 22, End: 28}}, -1, nil},
		{"invalid UTF-8 and lone surrogates read as U+FFFD", "{\"\xff\":\"\xfe\",\"\\ud800\":1}",
			[]Member{{Name: "\ufffd", NameEnd: 4, End: 8}, {Name: "\ufffd", NameEnd: 17, End: 19}}, -1, nil},
		{"a missing colon is the member's", `{"a" 1}`, []Member{{Name: "a", NameEnd: 4}}, 0, ErrSyntax},
		{"invalid escape", `{"a":"\x"}`, []Member{{Name: "a", NameEnd: 4}}, 0, ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			members, at, err := SplitMembers([]byte(tt.in), SplitGrammarOnly)
			for i := range members {
				if want := tt.want[min(i, len(tt.want)-1)]; want.End > 0 && string(members[i].Raw) != tt.in[want.NameEnd+1:want.End] {
					t.Errorf("member %d raw = %q, want %q", i, members[i].Raw, tt.in[want.NameEnd+1:want.End])
				}
				members[i].Raw = nil
			}
			if !slices.EqualFunc(members, tt.want, func(a, b Member) bool {
				return a.Name == b.Name && a.NameEnd == b.NameEnd && a.End == b.End && a.Value == nil
			}) || at != tt.at || !errors.Is(err, tt.kind) || (err == nil) != (tt.kind == nil) {
				t.Fatalf("SplitMembers(%q) = %+v, %d, %v; want %+v, %d, %v", tt.in, members, at, err, tt.want, tt.at, tt.kind)
			}
		})
	}
}
