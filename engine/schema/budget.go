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

// valueSteps is the extra cost of applying n to v beyond the one step of
// the application: the string keywords on a string, parsing a number
// literal (which every application does) and multipleOf on it.
func valueSteps(n *node, v any) int {
	switch x := v.(type) {
	case string:
		if n.anyStr {
			return strSteps(n, x)
		}
	case json.Number:
		return numSteps(n, x)
	}
	return 0
}

// numSteps is the extra cost of applying n to the number literal lit: a
// step per bytesPerStep digits to parse and compare it, and, when
// multipleOf needs big integers (its own literal has more than 19
// significant digits), their quadratic cost: a step per 64 word
// operations.
func numSteps(n *node, lit json.Number) int {
	steps := len(lit) / bytesPerStep
	if n.multipleOf != nil && !n.multipleOf.n.small {
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
