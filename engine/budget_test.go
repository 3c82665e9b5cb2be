package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/engine/schema"
)

// joinItems is n items, item(i) each, joined by commas.
func joinItems(n int, item func(i int) string) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(item(i))
	}
	return b.String()
}

func intItem(i int) string { return fmt.Sprint(i) }

// escapedPath spells the path `["abcdefg"][]` in one of 128 ways: the
// letters whose bit is set in mask as \u escapes. Bounds are an object,
// so many bounds over one array need different spellings of its path.
func escapedPath(mask int) string {
	var b strings.Builder
	b.WriteString(`[\"`)
	for i, c := range "abcdefg" {
		if mask&(1<<i) != 0 {
			fmt.Fprintf(&b, `\\u%04x`, c)
		} else {
			b.WriteRune(c)
		}
	}
	b.WriteString(`\"][]`)
	return b.String()
}

// stageCase is a request whose work after the schema evaluation (bounds,
// rules or content checks) is heavy, with the field its 422 names. (Finding
// undeclared keys is the schema evaluator's work, charged there:
// TestUndeclaredKeysChargeTheBudget; the engine words at most ListCap of
// them, TestUndeclaredFindingsChargeTheBudget.)
type stageCase struct {
	name, field string
	body        func() string
	// maxSteps is a step limit the schema evaluation fits in and the
	// stage does not.
	maxSteps int
}

func stageCases() []stageCase {
	ints := func(n int) string { return "[" + joinItems(n, intItem) + "]" }
	return []stageCase{
		{"unique rules over 300,000 integers", "rules", func() string {
			rules := joinItems(5, func(int) string { return `{"type":"unique","field":"abcdefg[]"}` })
			return `{"task_id":"t","expected_schema":{"type":"object"},"submitted_output":{"abcdefg":` + ints(300_000) + `},"rules":[` + rules + `]}`
		}, schema.DefaultMaxSteps},
		{"bounds over 300,000 integers", "bounds", func() string {
			bounds := joinItems(10, func(i int) string { return `"` + escapedPath(i) + `":{"min":0}` })
			return `{"task_id":"t","expected_schema":{"type":"object"},"submitted_output":{"abcdefg":` + ints(300_000) + `},"bounds":{` + bounds + `}}`
		}, schema.DefaultMaxSteps},
		{"300,000 placeholders", "submitted_output", func() string {
			return `{"task_id":"t","expected_schema":{"type":"object"},"strict_content_check":true,"submitted_output":{"a":[` +
				joinItems(300_000, func(int) string { return `"todo"` }) + `]}}`
		}, 10_000},
	}
}

// TestCheckStagesChargeTheBudget checks that bounds, rules and content
// checks spend the schema evaluation's step budget: each case fits the
// step limit for the schema alone and needs more for its stage, and is
// refused with the 422 of the step limit naming the stage's field. With the
// limit raised the same request gets a verdict.
func TestCheckStagesChargeTheBudget(t *testing.T) {
	for _, tc := range stageCases() {
		t.Run(tc.name, func(t *testing.T) {
			body := []byte(tc.body())
			v := New(&Options{Schema: schema.Options{MaxSteps: tc.maxSteps}})
			req, err := v.DecodeRequest(body)
			if err != nil {
				t.Fatal(err)
			}
			compiled, err := v.CompileRequest(req, "")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := compiled.Evaluate(req.SubmittedOutput); err != nil {
				t.Fatalf("the schema alone does not fit %d steps: %v", tc.maxSteps, err)
			}
			start := time.Now()
			_, err = v.CheckContext(context.Background(), req, "")
			var invalid *InvalidRequestError
			if !errors.As(err, &invalid) || len(invalid.Fields) != 1 || invalid.Fields[0].Field != tc.field ||
				!strings.Contains(invalid.Fields[0].Problem, "evaluation steps") {
				t.Fatalf("CheckContext = %v, want the step limit's 422 on %s", err, tc.field)
			}
			t.Logf("422 on %s after %v", tc.field, time.Since(start))

			roomy := New(&Options{Schema: schema.Options{MaxSteps: 1 << 40}})
			req, err = roomy.DecodeRequest(body)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := roomy.CheckContext(context.Background(), req, ""); err != nil {
				t.Errorf("with the limit raised: %v, want a verdict", err)
			}
		})
	}
}

// deadlineAfter is a context whose deadline passes at the (allowed+1)th
// call of Err: the work before that sees it live, the work after sees it
// done, whatever the time it takes. It stands in for a request deadline
// that passes during a given stage.
type deadlineAfter struct {
	context.Context
	allowed int64
	calls   atomic.Int64
}

func (c *deadlineAfter) Err() error {
	if c.calls.Add(1) > c.allowed {
		return context.DeadlineExceeded
	}
	return nil
}

// TestCheckStagesHonourTheDeadline checks that bounds, rules and content
// checks stop at the request deadline: the deadline passes after the schema
// evaluation (which checks it once for these schemas, at its start), and
// CheckContext returns an error wrapping context.DeadlineExceeded instead
// of a verdict. The step limit is raised out of the way.
func TestCheckStagesHonourTheDeadline(t *testing.T) {
	v := New(&Options{Schema: schema.Options{MaxSteps: 1 << 40}})
	for _, tc := range stageCases() {
		t.Run(tc.name, func(t *testing.T) {
			req, err := v.DecodeRequest([]byte(tc.body()))
			if err != nil {
				t.Fatal(err)
			}
			ctx := &deadlineAfter{Context: context.Background(), allowed: 1}
			_, err = v.CheckContext(ctx, req, "")
			var invalid *InvalidRequestError
			if !errors.Is(err, context.DeadlineExceeded) || errors.As(err, &invalid) {
				t.Errorf("CheckContext = %v, want an error wrapping context.DeadlineExceeded", err)
			}
		})
	}
}

// TestCheckRulesStopAtTheDeadline is the case with a real clock:
// 100 unique rules over 500,000 integers (44 s of work) under a 1 s
// deadline end with the deadline's error within a few seconds of it (a
// wall-clock margin wide enough for a loaded machine, far short of the
// work).
func TestCheckRulesStopAtTheDeadline(t *testing.T) {
	rules := joinItems(100, func(int) string { return `{"type":"unique","field":"xs[]"}` })
	body := `{"task_id":"t","expected_schema":{"type":"object"},"submitted_output":{"xs":[` + joinItems(500_000, intItem) + `]},"rules":[` + rules + `]}`
	v := New(&Options{Schema: schema.Options{MaxSteps: 1 << 40}})
	req, err := v.DecodeRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	const timeout, margin = time.Second, 5 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	_, err = v.CheckContext(ctx, req, "")
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("CheckContext = %v, want an error wrapping context.DeadlineExceeded", err)
	}
	if took > timeout+margin*raceSlowdown {
		t.Errorf("CheckContext returned after %v, want within %v of the %v deadline", took, margin*raceSlowdown, timeout)
	}
}
