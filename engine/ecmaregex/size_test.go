package ecmaregex

import (
	"errors"
	"math"
	"regexp"
	"regexp/syntax"
	"runtime"
	"strings"
	"testing"
)

// sizePatterns are patterns of every shape Size counts: literals,
// classes large and small, nested and open repeats, alternations.
var sizePatterns = []string{
	`^[A-Z]{3}-[0-9]{5}$`,
	`^[a-z]{1,1000}[0-9]{1,1000}$`,
	`^a{1,1000}$`,
	`^(?:a|bc|d){1,300}$`,
	`^(?:[a-z]{1,30}\.){1,30}[a-z]{2,10}$`,
	`^\p{L}{1,100}$`,
	strings.Repeat(`[\p{L}\p{N}]`, 50),
	`^.{0,255}$`,
	`(?i:[a-z]{2,200})x+y*z?`,
	`^[^\s]{5,}$`,
	`\w+@\w+\.\w{2,}`,
}

func TestProgramSizeCountsTheProgram(t *testing.T) {
	for _, p := range sizePatterns {
		t.Run(p[:min(len(p), 30)], func(t *testing.T) {
			prog, err := Prepare(p, math.MaxInt)
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			re, err := syntax.Parse(prog.src, syntax.Perl)
			if err != nil {
				t.Fatal(err)
			}
			compiled, err := syntax.Compile(re.Simplify())
			if err != nil {
				t.Fatal(err)
			}
			// every instruction and table, and not wildly more
			want := baseSize
			for _, inst := range compiled.Inst {
				want++
				switch inst.Op {
				case syntax.InstRune:
					want += len(inst.Rune) / runesPerUnit
				case syntax.InstAlt:
					want += altSize - 1
				}
			}
			if got := prog.Size(); got < want-3 || got > 4*want { // -3: the capture and match instructions
				t.Errorf("Size() = %d for a program of %d instructions and tables of %d units", got, len(compiled.Inst), want)
			}
		})
	}
}

// TestCompiledHeapWithinSize checks what InstBytes promises: a compiled
// pattern holds at most InstBytes of heap per unit of its Size.
func TestCompiledHeapWithinSize(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's shadow memory distorts heap figures")
	}
	for _, p := range sizePatterns {
		prog, err := Prepare(p, math.MaxInt)
		if err != nil {
			t.Fatalf("Prepare(%q): %v", p, err)
		}
		copies := min(max(200_000/prog.Size(), 10), 1000) // enough to see small ones
		keep := make([]*regexp.Regexp, 0, copies)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for range copies {
			re, err := prog.Compile()
			if err != nil {
				t.Fatal(err)
			}
			re.MatchString("abc") // a match may build what the pattern keeps
			keep = append(keep, re)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / int64(copies)
		runtime.KeepAlive(keep)
		t.Logf("%.30q: %d bytes held, Size %d × %d = %d", p, per, prog.Size(), InstBytes, InstBytes*prog.Size())
		if per > int64(InstBytes*prog.Size()) || per < int64(InstBytes*prog.Size()/8) {
			t.Errorf("%.40q: %d bytes held per compiled copy, not within %d units × %d and an eighth of it", p, per, prog.Size(), InstBytes)
		}
	}
}

func TestPrepareTooLarge(t *testing.T) {
	tests := []struct {
		name    string
		pattern string
		max     int
	}{
		{"nested counts multiplying past RE2's limit", `^(?:[a-z]{1,1000}){1,1000}$`, math.MaxInt},
		{"count above 1000", `a{1001}`, math.MaxInt},
		{"groups nested 1000 deep", strings.Repeat("(", 1000) + "a" + strings.Repeat(")", 1000), math.MaxInt},
		{"over the limit", `^[a-z]{1,1000}[0-9]{1,1000}$`, 3000},
		{"property tables over the limit before parsing", strings.Repeat(`\p{L}`, 100), 10_000},
		{"open repeat of a large body", `(?:[a-z]{1000}){2,}`, 1500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Prepare(tt.pattern, tt.max)
			if !errors.Is(err, ErrTooLarge) || !errors.Is(err, ErrUnsupported) {
				t.Fatalf("Prepare = %v, want ErrTooLarge and ErrUnsupported", err)
			}
			if strings.Contains(err.Error(), "[a-z]") {
				t.Errorf("the error quotes the pattern: %v", err)
			}
		})
	}
	if _, err := Prepare(`(a)\1`, math.MaxInt); errors.Is(err, ErrTooLarge) || !errors.Is(err, ErrUnsupported) {
		t.Errorf("a back-reference: %v, want ErrUnsupported alone", err)
	}
	prog, err := Prepare(`^[a-z]{1,1000}[0-9]{1,1000}$`, 20_000)
	if err != nil || prog.Size() < 4000 {
		t.Errorf("within the limit: %d, %v", prog.Size(), err)
	}
}
