package ijson

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// checkAgrees holds the check-only scan to Decode on data: both
// accept it or both give up, at every depth limit tried, and DecodeMembers
// gives the same members with or without a check-only member.
func checkAgrees(t *testing.T, data []byte) {
	t.Helper()
	for _, maxDepth := range []int{1, 3, DefaultMaxDepth} {
		d := scanner{in: data, maxDepth: maxDepth, mode: modeCheck}
		_, checkErr := d.scanWhole()
		_, err := Decode(data, &Options{MaxDepth: maxDepth})
		if (checkErr == nil) != (err == nil) {
			t.Fatalf("maxDepth %d: check-only scan %v, Decode %v, for %q", maxDepth, checkErr, err, data)
		}
	}
	opts := &Options{MaxDepth: 3}
	want, wantOK := DecodeMembers(nil, data, "", opts, nil)
	for _, m := range want {
		if !wantOK {
			continue
		}
		got, ok := DecodeMembers(nil, data, "", opts, allBut(m.Name))
		if !ok {
			t.Fatalf("DecodeMembers refused %q with %q check-only", data, m.Name)
		}
		for i := range got {
			w := want[i]
			if got[i].Name == m.Name {
				w.Value = nil
			}
			if !cmp.Equal(got[i], w) {
				t.Fatalf("member %d of %q differs with %q check-only:\n%s", i, data, m.Name, cmp.Diff(w, got[i]))
			}
		}
	}
	if !wantOK {
		for _, name := range []string{"a", "k", "expected_schema"} {
			if _, ok := DecodeMembers(nil, data, "", opts, allBut(name)); ok {
				t.Fatalf("DecodeMembers accepted %q with %q check-only, refused it without", data, name)
			}
		}
	}
}

// allBut decodes every member but the one named name.
func allBut(name string) func(string) bool {
	return func(n string) bool { return n != name }
}

func TestCheckValue(t *testing.T) {
	many := func(dupAt int) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range 40 {
			if i > 0 {
				b.WriteString(",")
			}
			name := string(rune('A' + i))
			if i == dupAt {
				name = "B"
			}
			b.WriteString(`"` + name + `":` + "1")
		}
		return b.String() + "}"
	}
	for _, tt := range []struct {
		name string
		doc  string
	}{
		{"scalars", `[1, -0.5e3, "x", true, false, null]`},
		{"nested", `{"a": {"b": [{"c": {}}, []]}, "k": "v"}`},
		{"array and literal members", `{"a": [1, 2], "k": true, "n": null}`},
		{"escaped name equal to a plain one", `{"a": 1, "\u0061": 2}`},
		{"escaped names distinct", `{"\u00e9": 1, "é2": 2}`},
		{"duplicate in nested object", `{"a": {"k": 1, "k": 2}}`},
		{"same name in sibling objects", `{"a": {"k": 1}, "b": {"k": 2}, "k": 3}`},
		{"many names", many(-1)},
		{"many names, duplicate past the linear part", many(30)},
		{"many names, duplicate in the linear part", many(5)},
		{"too deep", `{"a": [[[[[1]]]]]}`},
		{"big integer", `{"a": 9007199254740993}`},
		{"overflow", `{"a": 1e400}`},
		{"underflow", `{"a": 1e-400}`},
		{"lone surrogate", `{"a": "\ud800"}`},
		{"invalid utf-8", "{\"a\": \"\xff\"}"},
		{"trailing comma", `{"a": [1,]}`},
		{"number glued to a word", `{"a": 1x}`},
		{"control character", "{\"a\": \"\x01\"}"},
	} {
		t.Run(tt.name, func(t *testing.T) { checkAgrees(t, []byte(tt.doc)) })
	}
}

// FuzzCheckMatchesDecode: the check-only scan accepts exactly what Decode
// accepts.
func FuzzCheckMatchesDecode(f *testing.F) {
	for _, s := range []string{
		`{"a": {"b": [1, 2.5, "x"]}, "a2": null}`, `{"a":1,"a":2}`, `{"a":{"k":1,"\u006b":2}}`,
		`[[[[[1]]]]]`, `{"a":1e400}`, "{\"a\":\"\xff\"}", `{"a":"\ud800\udc00"}`, `{"a":1,}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkAgrees(t, data) })
}
