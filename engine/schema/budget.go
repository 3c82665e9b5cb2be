package schema

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
)

// bytesPerStep is how many bytes of a string scanned by pattern, format,
// minLength or maxLength (or of a key matched by patternProperties) cost
// one evaluation step. A step is otherwise one schema application, a
// fraction of a microsecond; scanning a 3 MiB string costs milliseconds, so
// without this charge a schema applying a pattern to one long string half a
// million times (2^19 through nested allOf, within the step limit) ran for
// most of an hour.
const bytesPerStep = 64

// byteUnitsPerStep is how many bytes times units of program size cost one
// step when a pattern runs on a string (matchSteps). Go's regexp runs a
// long string through its NFA, whose work per byte grows with the
// program: up to about 4 ns per byte and unit (a 1 MiB string took 15 s
// of CPU against [a-z]{1,900}x, 4,514 units), so at this rate the default
// step limit bounds any pattern's matching to about half a second.
const byteUnitsPerStep = 128

// matchSteps is the steps of running a pattern of size units on n bytes.
func matchSteps(n, size int) int { return n * size / byteUnitsPerStep }

// pollSteps is how often, in steps, an evaluation checks its context.
const pollSteps = 1 << 12

// Budget is the evaluation steps one request may spend, and the context
// that may stop it sooner. The schema evaluation spends from it first
// (EvaluateWith); a caller's own checks over the same instance (rules,
// bounds, content checks) then spend the rest through Charge, so the step
// limit and the deadline bound the whole request, not the schema alone.
// The zero value has no steps; a Budget is not safe for concurrent use.
type Budget struct {
	steps, maxSteps int
	ctx             context.Context
	nextPoll        int   // the steps at which ctx is checked next
	ctxErr          error // ctx.Err() once it stopped the work
}

// NewBudget returns a budget of maxSteps steps that also stops once ctx is
// done (a nil ctx never is).
func NewBudget(ctx context.Context, maxSteps int) Budget {
	return Budget{maxSteps: maxSteps, ctx: ctx}
}

// Spent is the steps charged so far.
func (b *Budget) Spent() int { return b.steps }

// Charge spends n steps and reports whether the work may go on: false once
// the steps exceed the budget or (checked every few thousand steps) the
// context is done, and from then on. Charge the cost of work before doing
// it, in proportion to it, as the evaluator charges its steps.
func (b *Budget) Charge(n int) bool {
	b.steps += n
	return !b.over()
}

// over charges nothing and reports whether the budget is spent or (checked
// every pollSteps steps) its context is done.
func (b *Budget) over() bool {
	if b.steps >= b.nextPoll {
		b.poll()
	}
	return b.steps > b.maxSteps || b.ctxErr != nil
}

// poll checks the context and sets when to check it next.
func (b *Budget) poll() {
	b.nextPoll = b.steps + pollSteps
	if b.ctx != nil && b.ctxErr == nil && b.ctx.Err() != nil {
		b.ctxErr = b.ctx.Err()
	}
}

// Stopped reports whether the budget stopped the work (Err is not nil),
// without charging or checking the context.
func (b *Budget) Stopped() bool { return b.steps > b.maxSteps || b.ctxErr != nil }

// Err is why the budget stopped the work: an error wrapping the context's
// error (context.DeadlineExceeded or context.Canceled) when the context is
// done, ErrTooComplex when the steps ran out, nil while neither.
func (b *Budget) Err() error {
	if b.ctxErr != nil {
		return fmt.Errorf("evaluation stopped: %w", b.ctxErr)
	}
	if b.steps > b.maxSteps {
		return ErrTooComplex
	}
	return nil
}

// EvaluateContext is Evaluate that stops once ctx is done: it then returns
// an error wrapping ctx.Err() (context.DeadlineExceeded or
// context.Canceled). The context is checked every few thousand steps, so a
// request deadline bounds the evaluation's time even where the step limit
// does not bound the cost of a step.
func (s *Schema) EvaluateContext(ctx context.Context, instance any) (*Result, error) {
	b := NewBudget(ctx, s.maxSteps)
	return s.EvaluateWith(instance, &b, 0)
}

// EvaluateWith is Evaluate spending from b (whose limit, not the schema's
// MaxSteps, applies), which it leaves charged with the steps spent. keep,
// when positive, is how many failures are recorded in full: the first keep
// in Result.Failures, the others only counted (Result.Omitted), and
// likewise the described locations with undeclared keys
// (Result.Undeclared). A caller
// that reports at most keep of them so spends memory on those alone, while
// Passed, Total and Valid are the same as without the limit. When b stops
// the evaluation, the error is b.Err()'s.
func (s *Schema) EvaluateWith(instance any, b *Budget, keep int) (*Result, error) {
	e, _ := s.pool.Get().(*evaluator)
	if e == nil {
		e = &evaluator{}
	}
	e.reset(s)
	e.Budget = *b
	e.keep = keep
	if keep <= 0 {
		e.keep = math.MaxInt
	}
	res, err := e.run(s.root, instance)
	*b = e.Budget
	e.Budget = Budget{}
	e.release()
	s.pool.Put(e)
	return res, err
}

// MaxSteps is the step limit of one Evaluate call (Options.MaxSteps, or its
// default).
func (s *Schema) MaxSteps() int { return s.maxSteps }

// over charges nothing and reports whether the evaluation must stop: the
// step budget is spent, or (checked every pollSteps steps) the context is
// done. It sets abort when so.
func (e *evaluator) over() bool {
	if e.steps >= e.nextPoll || e.steps > e.maxSteps {
		e.checkBudget()
	}
	return e.abort
}

// checkBudget is over's work when the context is due for a check or the
// steps ran out.
func (e *evaluator) checkBudget() {
	if e.Budget.over() {
		e.abort = true
	}
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
		return stringSteps(n, x)
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
	if len(lit) < 8 && n.multipleOf == nil {
		return 0 // as every term below
	}
	return longNumSteps(n, lit)
}

// longNumSteps is numSteps past its quick case.
func longNumSteps(n *node, lit json.Number) int {
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
		w := (len(lit)+len(n.multipleOf.n.digits))/19 + 1
		steps += w * w / 64
	}
	return steps
}

// stringSteps is valueSteps for a string. Checking format "regex" compiles
// s, which costs about a step per byte (3 MiB: a third of a second); the
// other keywords scan s once or less.
func stringSteps(n *node, s string) int {
	steps := 0
	if n.anyStr && n.formatAssert && n.format == "regex" {
		steps = len(s)
	} else if n.anyStr {
		steps = len(s) / bytesPerStep
	}
	if n.hasConst || n.enum != nil {
		steps += len(s) / bytesPerStep
	}
	if n.pattern != nil {
		steps += matchSteps(len(s), n.pattern.size)
	}
	return steps
}

// abortErr is the error of an aborted evaluation.
func (e *evaluator) abortErr() error {
	if err := e.Budget.Err(); err != nil {
		return err
	}
	return ErrTooComplex // the depth limit
}
