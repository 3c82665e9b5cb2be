package engine

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/verifier-dev/verifier/engine/schema"
)

// The stages after the schema evaluation (bounds, rules, content checks and
// the path resolution they do) spend from the request's schema.Budget, the
// one the evaluation spent from, in proportion to their work as the
// evaluator charges its own: a step per value a rule or bound checks, a
// step per valuesPerStep values visited in passing (fanned out to by a
// path's `[]`, or read once by the content checks), and a step per
// bytesPerStep bytes of a string read whole. So the step limit
// (--max-steps) bounds the whole request's work, and the budget's context
// (the request deadline) stops each stage within a few thousand steps.

// bytesPerStep is how many bytes of a string or number read whole (an
// equality key, a date to parse, a string to lower-case) cost one step, as
// the schema evaluator charges them.
const bytesPerStep = 64

// valuesPerStep is how many values visited in passing cost one step: a
// type switch and a look at a string's first byte, or a slot of a path's
// matches, each a small fraction of a schema application. Charged at a
// step each, the single pass of the content checks over a 4 MiB output of
// small values would spend more than the schema evaluation.
const valuesPerStep = 16

// passing charges a budget for values visited in passing: a step per
// valuesPerStep of them.
type passing struct {
	b *schema.Budget
	n int
}

// visit counts one value and reports whether the work may go on.
func (p *passing) visit() bool {
	if p.n++; p.n < valuesPerStep {
		return true
	}
	p.n = 0
	return p.b.Charge(1)
}

// readSteps is the steps reading scalar v costs: one, and one per
// bytesPerStep bytes of a string or number.
func readSteps(v any) int {
	switch x := v.(type) {
	case string:
		return 1 + len(x)/bytesPerStep
	case json.Number:
		return 1 + len(x)/bytesPerStep
	}
	return 1
}

// stageError turns the error of a budget that stopped a stage (what it
// was doing) into the request's error: past the step limit, an
// *InvalidRequestError naming the field whose checks needed the steps, with
// how to fix it; past the deadline, an error wrapping the context's.
func stageError(err error, what, field, fix string) error {
	if errors.Is(err, schema.ErrTooComplex) {
		return &InvalidRequestError{Fields: []FieldProblem{{
			Field:   field,
			Problem: "needs more evaluation steps than the limit allows for this output",
			Fix:     fix,
		}}}
	}
	return fmt.Errorf("%s: %w", what, err)
}

// The stages' fixes for a request past the step limit.
const (
	fixSchemaSteps  = "Simplify the schema (fewer nested combinators or references) or verify a smaller output."
	fixPatternSteps = "Use fewer or smaller patterns: repetition counts multiply a pattern's compiled size (x{1,1000} is a thousand copies of x)."
	fixBoundsSteps  = "Use fewer bounds over large arrays, or verify a smaller output."
	fixRulesSteps   = "Use fewer rules over large arrays, or verify a smaller output."
	fixContentSteps = "Verify a smaller output: the content checks read every value of it."
)

// Size is the bytes of the request's members as sent (a request built
// without decoding has none): about its body's size, by which a server
// can estimate the memory its verification needs.
func (r *Request) Size() int {
	n := 0
	for _, m := range r.raw {
		n += len(m)
	}
	return n
}
