package schema

import (
	"context"
	"encoding/json"
	"fmt"
)

// bytesPerStep is how many bytes of a string scanned by pattern, format,
// minLength or maxLength (or of a key matched by patternProperties) cost
// one evaluation step. A step is otherwise one schema application, a
// fraction of a microsecond; scanning a 3 MiB string costs milliseconds, so
// without this charge a schema applying a pattern to one long string half a
// million times (2^19 through nested allOf, within the step limit) ran for
// most of an hour.
const bytesPerStep = 64

// pollSteps is how often, in steps, an evaluation checks its context.
const pollSteps = 1 << 12

// EvaluateContext is Evaluate that stops once ctx is done: it then returns
// an error wrapping ctx.Err() (context.DeadlineExceeded or
// context.Canceled). The context is checked every few thousand steps, so a
// request deadline bounds the evaluation's time even where the step limit
// does not bound the cost of a step.
func (s *Schema) EvaluateContext(ctx context.Context, instance any) (*Result, error) {
	e, _ := s.pool.Get().(*evaluator)
	if e == nil {
		e = &evaluator{}
	}
	e.reset(s)
	e.ctx = ctx
	res, err := e.run(s.root, instance)
	e.ctx = nil
	e.release()
	s.pool.Put(e)
	return res, err
}

// over charges nothing and reports whether the evaluation must stop: the
// step budget is spent, or (checked every pollSteps steps) the context is
// done. It sets abort when so.
func (e *evaluator) over() bool {
	if e.steps > e.maxSteps {
		e.abort = true
	}
	if e.steps >= e.nextPoll {
		e.nextPoll = e.steps + pollSteps
		if e.ctx != nil && e.ctx.Err() != nil {
			e.ctxErr = e.ctx.Err()
			e.abort = true
		}
	}
	return e.abort
}

// nodesPerStep is how many values of an array or object compared with const
// or an enum (or hashed for an enum's index) cost one step.
const nodesPerStep = 2

// valueSteps is the extra cost of applying n to v beyond the one step of
// the application: the string keywords on a string, parsing a number
// literal (which every application does) and multipleOf on it, and
// comparing a string, array or object with const or an enum.
func valueSteps(n *node, v any) int {
	switch x := v.(type) {
	case string:
		steps := 0
		if n.anyStr {
			steps = strSteps(n, x)
		}
		if n.hasConst || n.enum != nil {
			steps += len(x) / bytesPerStep
		}
		return steps
	case json.Number:
		return numSteps(n, x)
	case map[string]any, []any:
		if n.hasConst || n.enum != nil {
			return countValues(v, maxCounted) / nodesPerStep
		}
	}
	return 0
}

// maxCounted is where countValues stops counting: far more than any budget
// lets through.
const maxCounted = 1 << 26

// countValues counts the values in v (v itself, and everything nested),
// up to limit.
func countValues(v any, limit int) int {
	switch x := v.(type) {
	case map[string]any:
		n := 1
		for _, c := range x {
			if n += countValues(c, limit-n); n >= limit {
				return limit
			}
		}
		return n
	case []any:
		n := 1
		for _, c := range x {
			if n += countValues(c, limit-n); n >= limit {
				return limit
			}
		}
		return n
	}
	return 1
}

// numSteps is the extra cost of applying n to the number literal lit: a
// step per bytesPerStep digits to parse and compare it (per 8 past 64
// digits); for multipleOf, a
// step per 8 digits (a 64-bit remainder per digit) or, when it needs big
// integers (its own literal has more than 19 significant digits), their
// quadratic cost: a step per 64 word operations.
func numSteps(n *node, lit json.Number) int {
	steps := len(lit) / bytesPerStep
	if len(lit) > 64 {
		// Past a double's precision a literal's digits are kept as a
		// string: parsing costs several ns a digit.
		steps += len(lit) / 8
	}
	switch {
	case n.multipleOf == nil:
	case n.multipleOf.n.small:
		steps += len(lit) / 8
	default:
		w := (len(lit)+int(n.multipleOf.n.ndigits()))/19 + 1
		steps += w * w / 64
	}
	return steps
}

// strSteps is the extra cost of the string keywords of n on s. Checking
// format "regex" compiles s, which costs about a step per byte (3 MiB: a
// third of a second); the other keywords scan s once or less.
func strSteps(n *node, s string) int {
	if n.formatAssert && n.format == "regex" {
		return len(s)
	}
	return len(s) / bytesPerStep
}

// abortErr is the error of an aborted evaluation.
func (e *evaluator) abortErr() error {
	if e.ctxErr != nil {
		return fmt.Errorf("schema evaluation stopped: %w", e.ctxErr)
	}
	return ErrTooComplex
}
