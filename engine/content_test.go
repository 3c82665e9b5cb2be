package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/verifier-dev/verifier/engine/schema"
)

// TestUndeclaredFindingsChargeTheBudget checks that wording the undeclared
// keys of the described objects spends from the request's budget, a step
// per object and per valuesPerStep keys, and stops once it is spent or the
// deadline has passed.
func TestUndeclaredFindingsChargeTheBudget(t *testing.T) {
	keys := make([]string, 100_000)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
	}
	res := &schema.Result{Described: 3, Undeclared: []schema.Described{
		{InstancePath: "/a", Undeclared: keys}, {InstancePath: "/b", Undeclared: keys}, {InstancePath: "/c", Undeclared: keys},
	}}
	perObject := 1 + len(keys)/valuesPerStep
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range []struct {
		name     string
		ctx      context.Context
		maxSteps int
		want     error // nil: every finding worded
	}{
		{"within the budget", context.Background(), 3 * perObject, nil},
		{"past the budget", context.Background(), 2*perObject + 1, schema.ErrTooComplex},
		{"past the deadline", cancelled, 1 << 40, context.Canceled},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := schema.NewBudget(tt.ctx, tt.maxSteps)
			var integrity tally
			out := &Outcome{}
			checkUndeclared(nil, res, true, &integrity, out, &b)
			if tt.want == nil {
				if b.Stopped() || len(out.Findings) != 3 || b.Spent() != 3*perObject {
					t.Errorf("stopped %v, %d findings, %d steps; want 3 findings for %d steps", b.Stopped(), len(out.Findings), b.Spent(), 3*perObject)
				}
				return
			}
			if !errors.Is(b.Err(), tt.want) {
				t.Errorf("budget error %v, want %v", b.Err(), tt.want)
			}
		})
	}
}
