package ecmaregex

import (
	"errors"
	"math"
	"regexp"
	"regexp/syntax"
	"strings"
)

// InstBytes bounds the heap one unit of [Program.Size] holds once
// compiled: an RE2 instruction is 40 bytes, and a compiled pattern keeps
// its program and, when it can be matched in one pass, a second copy with
// per-instruction tables.
const InstBytes = 64

// Character classes and alternations cost more than their one
// instruction: each copy of a class in a one-pass program keeps a table of
// its ranges, and each alternation (|, ?, *, +, and every optional copy of
// a counted repeat) a table merged from what follows it. A class counts
// classSize units and one more per runesPerUnit entries of its range table
// (two per range); an alternation counts altSize.
const (
	classSize    = 2
	runesPerUnit = 3
	altSize      = 3
)

// baseSize is what every compiled pattern counts besides its program: the
// regexp's own structures.
const baseSize = 16

// propertySize bounds the size units a \p{…} class RE2 names (Go's
// largest tables, folded or complemented) can add to a program, counted
// before the pattern is parsed: parsing builds each class's table.
const propertySize = 1024

// Program is an ECMA-262 pattern translated into RE2 syntax and measured,
// not yet compiled.
type Program struct {
	src  string
	size int
}

// Size is the program's size: its RE2 instructions as RE2's parser counts
// them before compiling (x{n,m} is m copies of x and m−n alternations
// more, so nested counts multiply), a character class counting two and
// one more for every three entries of its range table, an alternation
// three, and 16 for the compiled regexp's own structures. A compiled pattern holds at most
// InstBytes of heap per unit, and compiling it takes up to about a
// microsecond per unit.
func (p Program) Size() int { return p.size }

// Compile compiles the program with RE2.
func (p Program) Compile() (*regexp.Regexp, error) {
	re, err := regexp.Compile(p.src)
	if err != nil {
		// Prepare parsed it as regexp.Compile does: this is not expected.
		return nil, unsupportedf("%v", err)
	}
	return re, nil
}

// Prepare translates the ECMA-262 pattern p and measures its RE2 program
// without compiling it. The error wraps ErrSyntax when p is not valid
// ECMA-262, ErrTooLarge (and ErrUnsupported) when its program would be
// larger than maxSize units (Program.Size) or than RE2 allows, and
// ErrUnsupported when it has no RE2 form. Its own cost is linear in p and
// in the RE2 syntax it translates to: no program is built.
func Prepare(p string, maxSize int) (Program, error) {
	src, err := Translate(p)
	if err != nil {
		return Program{}, err
	}
	// Parsing builds the table of every class RE2 names: bound them first.
	props := strings.Count(src, `\p{`) + strings.Count(src, `\P{`)
	if props > maxSize/propertySize {
		return Program{}, tooLargef("more than %d units of program in Unicode property classes", maxSize)
	}
	re, err := syntax.Parse(src, syntax.Perl) // as regexp.Compile parses
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			switch se.Code {
			case syntax.ErrLarge, syntax.ErrInvalidRepeatSize, syntax.ErrNestingDepth:
				// a count past 1000, nested counts multiplying past 1000,
				// or a program past RE2's own bound
				return Program{}, tooLargef("over RE2's limits (%s)", se.Code)
			}
		}
		// The translation is well-formed, so RE2 can only object to size.
		return Program{}, unsupportedf("%v", err)
	}
	limit := int64(maxSize)
	if limit < math.MaxInt64 {
		limit++ // past maxSize
	}
	size := baseSize + progSize(re, limit)
	if size > int64(maxSize) {
		return Program{}, tooLargef("a program of more than %d units", maxSize)
	}
	return Program{src: src, size: int(size)}, nil
}

// progSize is the size of re's program (Program.Size without baseSize),
// computed as RE2's parser computes it (regexp/syntax's calcSize),
// character classes counting their tables; past limit it returns limit.
func progSize(re *syntax.Regexp, limit int64) int64 {
	var size int64
	switch re.Op {
	case syntax.OpLiteral:
		size = int64(len(re.Rune))
	case syntax.OpCharClass:
		size = classSize + int64(len(re.Rune)/runesPerUnit)
	case syntax.OpCapture:
		size = 2 + progSize(re.Sub[0], limit)
	case syntax.OpStar:
		size = 1 + altSize + progSize(re.Sub[0], limit) // x* may be one more than x+
	case syntax.OpPlus, syntax.OpQuest:
		size = altSize + progSize(re.Sub[0], limit)
	case syntax.OpConcat, syntax.OpAlternate:
		for _, sub := range re.Sub {
			if size += progSize(sub, limit); size >= limit {
				return limit
			}
		}
		if re.Op == syntax.OpAlternate && len(re.Sub) > 1 {
			size += altSize * (int64(len(re.Sub)) - 1)
		}
	case syntax.OpRepeat:
		sub := progSize(re.Sub[0], limit)
		n := int64(re.Max)
		if re.Max == -1 { // x{n,} is n copies and a loop
			n = int64(max(re.Min, 1))
		}
		if sub > 0 && n > limit/sub {
			return limit
		}
		size = n*sub + altSize*max(int64(re.Max-re.Min), 2)
	}
	return min(max(size, 1), limit)
}
