package schema

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// heavyPatterns is a schema of n properties, each with a pattern whose
// program is about size units (distinct patterns, so that none is reused):
// the shape of a schema that compiles to gigabytes when nothing bounds it.
func heavyPatterns(n, count int, keyword string) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		p := fmt.Sprintf(`^[a-z]{1,%d}[0-9]{1,%d}x{%d}$`, count, count, i+1)
		if keyword == "patternProperties" {
			fmt.Fprintf(&b, `"p%d":{"patternProperties":{%q:true}}`, i, p)
		} else {
			fmt.Fprintf(&b, `"p%d":{"pattern":%q}`, i, p)
		}
	}
	b.WriteString(`}}`)
	return b.String()
}

// samePattern is a schema of n properties with the same pattern.
func samePattern(n int, pattern string) string {
	props := make([]string, n)
	for i := range props {
		props[i] = fmt.Sprintf(`"p%d":{"pattern":%q}`, i, pattern)
	}
	return `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`
}

// TestPatternTooLarge checks that a pattern whose program is too large, by
// itself or with the schema's other patterns, is refused before it
// compiles, with an error that says it is too large (with the limit), not
// that it needs backtracking.
func TestPatternTooLarge(t *testing.T) {
	for _, tt := range []struct {
		name, schema, pointer, want string
	}{
		{"nested counts", `{"pattern":"^(?:[a-z]{1,1000}){1,1000}$"}`, "/pattern", "it is too large"},
		{"count above 1000", `{"pattern":"a{1001}"}`, "/pattern", "it is too large"},
		{"over the per-pattern limit", `{"pattern":"^[a-z]{1,1000}[0-9]{1,1000}$"}`, "/pattern",
			fmt.Sprintf("it is too large (its compiled program would be over %d units", DefaultMaxPatternSize)},
		{"patternProperties over the per-pattern limit", `{"patternProperties":{"^[a-z]{1,1000}[0-9]{1,1000}$":true}}`,
			"/patternProperties/^[a-z]{1,1000}[0-9]{1,1000}$", "it is too large"},
		{"over the total limit", heavyPatterns(1000, 400, "pattern"), "",
			fmt.Sprintf("the schema's patterns are too large together (their compiled programs would be over %d units)", DefaultMaxPatternsSize)},
		{"patternProperties over the total limit", heavyPatterns(1000, 400, "patternProperties"), "",
			"the schema's patterns are too large together"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := mustDecode(t, tt.schema)
			for name, compile := range map[string]func() error{
				"Compile": func() error { _, err := Compile(doc, nil); return err },
				"Check":   func() error { return Check(doc, nil) },
			} {
				err := compile()
				var se *Error
				if !errors.As(err, &se) {
					t.Fatalf("%s: %v, want an *Error", name, err)
				}
				if !strings.Contains(se.Problem, tt.want) || strings.Contains(se.Problem, "backtracking") {
					t.Errorf("%s: problem %q, want it to say %q", name, se.Problem, tt.want)
				}
				if tt.pointer != "" && se.Pointer != tt.pointer {
					t.Errorf("%s: pointer %q, want %q", name, se.Pointer, tt.pointer)
				}
				if strings.Contains(se.Problem+se.Fix, "[a-z]") {
					t.Errorf("%s: the error quotes the pattern: %v", name, se)
				}
			}
		})
	}
	// look-around still says it needs backtracking
	_, err := Compile(mustDecode(t, `{"pattern":"a(?=b)"}`), nil)
	var se *Error
	if !errors.As(err, &se) || !strings.Contains(se.Problem, "backtracking") {
		t.Errorf("look-ahead: %v", err)
	}
}

// TestHeavyPatternSchemaBounded compiles the schemas of issue #36 — a
// thousand patterns of thousands of instructions each, as pattern and as
// patternProperties keys — and checks that compiling them (refused at the
// total limit) allocates a bounded heap, holds none of it, and takes
// little time. Unbounded, the first allocated over 250 MB and took
// seconds.
func TestHeavyPatternSchemaBounded(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector distorts allocation and time")
	}
	const maxAlloc = 64 << 20 // the patterns' total limit is 6.25 MiB of programs
	for _, tt := range []struct{ name, schema string }{
		{"pattern, the same one a thousand times", samePattern(1000, `^[a-z]{1,1000}[0-9]{1,1000}$`)},
		{"pattern, distinct", heavyPatterns(1000, 400, "pattern")},
		{"patternProperties, distinct", heavyPatterns(1000, 400, "patternProperties")},
		{"pattern, each within the limits", heavyPatterns(1000, 60, "pattern")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := mustDecode(t, tt.schema)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			b := NewBudget(ctx, DefaultMaxSteps)
			s, err := CompileWith(doc, nil, &b)
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > maxAlloc {
				t.Errorf("compiling allocated %d MiB, want at most %d", alloc>>20, maxAlloc>>20)
			}
			if took > hostileBound()/2 {
				t.Errorf("compiling took %v", took)
			}
			if err == nil {
				if s.Size() > DefaultMaxPatternsSize*64+int64(len(tt.schema))*64 {
					t.Errorf("the compiled schema holds %d bytes", s.Size())
				}
				if b.Spent() != s.CompileSteps() || s.CompileSteps() == 0 {
					t.Errorf("charged %d steps for %d units of patterns", b.Spent(), s.CompileSteps())
				}
			}
		})
	}
}

// TestCompileWithBudget checks that compiling patterns spends the budget:
// past its step limit compilation stops with ErrTooComplex, and past its
// context's deadline with the context's error, within a pattern of it.
func TestCompileWithBudget(t *testing.T) {
	doc := mustDecode(t, heavyPatterns(1000, 400, "pattern"))
	big := &Options{MaxPatternsSize: 1 << 40}
	b := NewBudget(context.Background(), 50_000)
	if _, err := CompileWith(doc, big, &b); !errors.Is(err, ErrTooComplex) {
		t.Errorf("past the step limit: %v, want ErrTooComplex", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	b = NewBudget(ctx, 1<<40)
	start := time.Now()
	_, err := CompileWith(doc, big, &b)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("past the deadline: %v, want context.DeadlineExceeded", err)
	}
	if took := time.Since(start); took > hostileBound()/4 {
		t.Errorf("stopped after %v", took)
	}
}

// TestCheckCompilesNoPattern checks that Check finds what Compile finds
// without compiling a pattern program, and that a schema repeating one
// pattern compiles it once.
func TestCheckCompilesNoPattern(t *testing.T) {
	doc := mustDecode(t, heavyPatterns(20, 100, "pattern"))
	if _, err := Compile(true, nil); err != nil { // the meta-schemas compile once, on first use
		t.Fatal(err)
	}
	before := CompiledPatternUnits()
	if err := Check(doc, nil); err != nil {
		t.Fatal(err)
	}
	if got := CompiledPatternUnits() - before; got != 0 {
		t.Errorf("Check compiled %d units of patterns", got)
	}
	if err := Check(mustDecode(t, `{"pattern":"("}`), nil); err == nil {
		t.Error("Check accepted an invalid pattern")
	}
	s, err := Compile(doc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := CompiledPatternUnits() - before; got != int64(s.CompileSteps()) || got == 0 {
		t.Errorf("Compile compiled %d units, CompileSteps %d", got, s.CompileSteps())
	}
	same := mustDecode(t, `{"properties":{"a":{"pattern":"^[a-z]{1,900}$"},"b":{"pattern":"^[a-z]{1,900}$"}}}`)
	one, _ := Compile(mustDecode(t, `{"pattern":"^[a-z]{1,900}$"}`), nil)
	two, err := Compile(same, nil)
	if err != nil || two.CompileSteps() != one.CompileSteps() {
		t.Errorf("a pattern used twice counts %d units, once %d (%v)", two.CompileSteps(), one.CompileSteps(), err)
	}
}
