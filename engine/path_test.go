package engine

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/verifier-dev/verifier/engine/schema"
	"github.com/verifier-dev/verifier/internal/ijson"
)

func TestParsePath(t *testing.T) {
	tests := []struct {
		in, want string
		bad      bool
	}{
		{in: "total", want: "$.total"},
		{in: "$.total", want: "$.total"},
		{in: "customer.address.zip", want: "$.customer.address.zip"},
		{in: "line_items[].line_total", want: "$.line_items[].line_total"},
		{in: "matrix[][]", want: "$.matrix[][]"},
		{in: "items[2].price", want: "$.items[2].price"},
		{in: `meta["a.b"]`, want: `$.meta["a.b"]`},
		{in: `meta["a.b"].c`, want: `$.meta["a.b"].c`},
		{in: `["x[y]"]`, want: `$["x[y]"]`},
		{in: "$", want: "$"},
		{in: "", bad: true},
		{in: "a..b", bad: true},
		{in: "a.", bad: true},
		{in: "a[", bad: true},
		{in: "a[x]", bad: true},
		{in: "a[-1]", bad: true},
		{in: "a[-0]", bad: true},
		{in: "a[+1]", bad: true},
		{in: "a[007]", bad: true},
		{in: "a[00]", bad: true},
		{in: "a[0][10]", want: "$.a[0][10]"},
		{in: "a]b", bad: true},
		{in: `a["b]`, bad: true},
		{in: "a[1]b", bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			p, err := ParsePath(tt.in)
			if tt.bad {
				if err == nil {
					t.Errorf("ParsePath(%q) = %s, want an error", tt.in, p)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParsePath(%q): %v", tt.in, err)
			}
			if got := p.String(); got != tt.want {
				t.Errorf("ParsePath(%q).String() = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// resolve is every value p reaches in root, on a budget that never stops.
func resolve(p Path, root any) []Match {
	return p.appendMatches(nil, root, unlimited())
}

// unlimited returns a budget that never stops.
func unlimited() *schema.Budget {
	b := schema.NewBudget(context.Background(), int(^uint(0)>>1))
	return &b
}

func TestResolve(t *testing.T) {
	doc := mustDecode(t, `{"items":[{"p":1},{"p":2},{"q":3}],"m":[[1,2],[3]],"meta":{"a.b":7},"empty":[],"n":5}`)
	tests := []struct {
		path string
		want []string // locations
	}{
		{"items[].p", []string{"$.items[0].p", "$.items[1].p"}},
		{"items[1].p", []string{"$.items[1].p"}},
		{"items[9].p", nil},
		{"m[][]", []string{"$.m[0][0]", "$.m[0][1]", "$.m[1][0]"}},
		{`meta["a.b"]`, []string{`$.meta["a.b"]`}},
		{"missing", nil},
		{"empty[]", nil},
		{"n[]", nil},     // wrong type: fan-out over a number
		{"n.x", nil},     // wrong type: key on a number
		{"items.p", nil}, // wrong type: key on an array
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			p, err := ParsePath(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range resolve(p, doc) {
				got = append(got, m.Loc().String())
			}
			if len(got) != len(tt.want) {
				t.Fatalf("Resolve(%s) = %v, want %v", tt.path, got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("Resolve(%s)[%d] = %s, want %s", tt.path, i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestPointerLocation(t *testing.T) {
	doc := mustDecode(t, `{"items":[{"0":{"a/b":1}}]}`)
	if got, want := PointerLocation(doc, "/items/0/0/a~1b").String(), `$.items[0].0.a/b`; got != want {
		t.Errorf("PointerLocation = %s, want %s", got, want)
	}
	if got := PointerLocation(doc, "").String(); got != "$" {
		t.Errorf("PointerLocation(root) = %s, want $", got)
	}
}

func mustDecode(t *testing.T, s string) any {
	t.Helper()
	v, err := ijson.Decode([]byte(s), nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"a.b", "a[].b", `m["x.y"][2]`, "$.a[0]", "[", `["\"]`} {
		f.Add(s)
	}
	doc := map[string]any{"a": []any{map[string]any{"b": 1.0}}}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePath(s)
		if err != nil {
			return
		}
		// A parsed path renders to text that parses back to the same path,
		// unless the rendering ("$." and brackets added) outgrows the
		// length limit: then it is refused as too long, never misread.
		text := p.String()
		back, err := ParsePath(text)
		if len(text) > maxPathLen {
			var pe *PathError
			if !errors.As(err, &pe) {
				t.Fatalf("ParsePath(%d-byte rendering of %q) error = %v, want the length refusal", len(text), s, err)
			}
			return
		}
		if err != nil || back.String() != text {
			t.Fatalf("ParsePath(%q).String() = %q does not round-trip: %v", s, text, err)
		}
		resolve(p, doc)
	})
}

// resolveLevels is resolve as it was first written, level by level: the
// reference FuzzResolve holds the depth-first Resolve to.
func resolveLevels(p Path, root any) []Match {
	matches := []Match{{Value: root, steps: p.steps}}
	for depth, st := range p.steps {
		var next []Match
		for _, m := range matches {
			switch st.kind {
			case stepKey:
				if obj, ok := m.Value.(map[string]any); ok {
					if v, ok := obj[st.key]; ok {
						next = append(next, Match{Value: v, fan: m.fan})
					}
				}
			case stepIndex:
				if arr, ok := m.Value.([]any); ok && st.index < len(arr) {
					next = append(next, Match{Value: arr[st.index], fan: m.fan})
				}
			case stepAll:
				if arr, ok := m.Value.([]any); ok {
					for i, v := range arr {
						next = append(next, Match{Value: v, fan: append(slices.Clone(m.fan), i)})
					}
				}
			}
		}
		for i := range next {
			next[i].steps = p.steps[:depth+1]
		}
		matches = next
		if len(matches) == 0 {
			break
		}
	}
	return matches
}

// FuzzResolve: for any document and path, resolve reaches the values the
// level-by-level reference reaches, in the same order, at the same
// locations, and appended after other matches it leaves them as they were.
func FuzzResolve(f *testing.F) {
	doc := `{"items":[{"p":1,"q":[1,2]},{"p":2,"q":[]},{"q":[3,[4]]}],"m":[[1,2],[3],[]],"meta":{"a.b":{"c":[7]}},"n":5}`
	for _, path := range []string{"items[].p", "items[].q[]", "m[][]", "m[1][]", `meta["a.b"].c[]`, "n", "n[]", "$", "items[9]", "x[][][][][][][][][][]"} {
		f.Add([]byte(doc), path)
	}
	f.Add([]byte(`[[[[[[[[[[1,2]]]]]]]]]]`), "$[][][][][][][][][][]")
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		root, err := ijson.Decode(data, nil)
		if err != nil {
			return
		}
		p, err := ParsePath(text)
		if err != nil {
			return
		}
		want := resolveLevels(p, root)
		appended := p.appendMatches([]Match{{Value: "before"}}, root, unlimited())
		if appended[0].Value != "before" {
			t.Fatalf("appendMatches(%q) changed the match before it to %v", text, appended[0].Value)
		}
		for _, got := range [][]Match{resolve(p, root), appended[1:]} {
			if len(got) != len(want) {
				t.Fatalf("Resolve(%q) in %s: %d matches, want %d", text, data, len(got), len(want))
			}
			for i := range got {
				if !reflect.DeepEqual(got[i].Value, want[i].Value) || got[i].Loc().String() != want[i].Loc().String() {
					t.Fatalf("Resolve(%q) in %s: match %d is %v at %s, want %v at %s",
						text, data, i, got[i].Value, got[i].Loc(), want[i].Value, want[i].Loc())
				}
			}
		}
	})
}
