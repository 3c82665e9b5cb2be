package schema

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEvaluateWithKeep checks that a limit on the failures recorded in full
// changes nothing but how many are: the counts and the verdict are those of
// an unlimited evaluation, the failures and undeclared locations kept are
// its first ones, and the rest are counted, with their keywords in the order
// they first failed. The cases include loops over an object's keys in map
// order (additionalProperties, patternProperties), whose failures are
// recorded in sorted key order whichever side of the limit they fall.
func TestEvaluateWithKeep(t *testing.T) {
	many := func(n int, item string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = strings.ReplaceAll(item, "#", fmt.Sprint(i))
		}
		return strings.Join(parts, ",")
	}
	cases := []struct{ name, schema, instance string }{
		{"required on every item", `{"items":{"required":["a","b","c"]}}`, `[` + many(200, `{}`) + `]`},
		{"mixed keywords past the limit", `{"items":{"required":["a"],"properties":{"n":{"minimum":1,"maximum":0}}}}`,
			`[` + many(10, `{"a":1}`) + `,` + many(5, `{"n":5}`) + `,{"n":"x"},{"a":1,"n":-1}]`},
		{"additionalProperties in map order", `{"additionalProperties":{"type":"string"}}`, `{` + many(100, `"k#":#`) + `}`},
		{"patternProperties in map order", `{"patternProperties":{"^k":{"maxLength":0}}}`, `{` + many(100, `"k#":"v#"`) + `}`},
		{"number leaves", `{"items":{"properties":{"q":{"minimum":1,"multipleOf":2}}}}`, `[` + many(60, `{"q":0.5}`) + `]`},
		{"undeclared keys", `{"items":{"properties":{"a":{}}}}`, `[` + many(80, `{"a":1,"b#":2}`) + `]`},
	}
	for _, tc := range cases {
		s, err := Compile(mustDecode(t, tc.schema), nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		inst := mustDecode(t, tc.instance)
		full, err := s.Evaluate(inst)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, keep := range []int{1, 3, 50, len(full.Failures), len(full.Failures) + 1} {
			if keep <= 0 {
				continue // no limit
			}
			t.Run(fmt.Sprintf("%s/keep %d", tc.name, keep), func(t *testing.T) {
				b := NewBudget(context.Background(), s.MaxSteps())
				got, err := s.EvaluateWith(inst, &b, keep)
				if err != nil {
					t.Fatal(err)
				}
				if got.Valid != full.Valid || got.Passed != full.Passed || got.Total != full.Total || got.Described != full.Described {
					t.Errorf("valid %v %d/%d described %d, want %v %d/%d described %d",
						got.Valid, got.Passed, got.Total, got.Described, full.Valid, full.Passed, full.Total, full.Described)
				}
				kept := min(keep, len(full.Failures))
				if diff := cmp.Diff(renderFailures(full.Failures[:kept]), renderFailures(got.Failures)); diff != "" {
					t.Errorf("failures kept differ from the first %d (-want +got):\n%s", kept, diff)
				}
				if want := len(full.Failures) - kept; omitted(got).Failures != want {
					t.Errorf("Omitted.Failures = %d, want %d", omitted(got).Failures, want)
				}
				var wantKw []string
				for _, f := range full.Failures[kept:] {
					if !slices.Contains(wantKw, f.Keyword) {
						wantKw = append(wantKw, f.Keyword)
					}
				}
				if !slices.Equal(omitted(got).Keywords, wantKw) {
					t.Errorf("Omitted.Keywords = %q, want %q", omitted(got).Keywords, wantKw)
				}
				keptU := min(keep, len(full.Undeclared))
				if diff := cmp.Diff(full.Undeclared[:keptU], got.Undeclared, cmp.Comparer(func(a, b []Described) bool {
					return len(a) == 0 && len(b) == 0 || slices.EqualFunc(a, b, func(x, y Described) bool {
						return x.InstancePath == y.InstancePath && slices.Equal(x.Undeclared, y.Undeclared)
					})
				})); diff != "" {
					t.Errorf("undeclared kept differ (-want +got):\n%s", diff)
				}
				if want := len(full.Undeclared) - keptU; omitted(got).Undeclared != want {
					t.Errorf("Omitted.Undeclared = %d, want %d", omitted(got).Undeclared, want)
				}
				if b.Spent() == 0 {
					t.Error("the budget was not charged")
				}
			})
		}
	}
}

func renderFailures(fs []Failure) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.InstancePath + " " + f.Keyword + " " + f.KeywordLocation + " " + f.Expected + " | " + f.Found + " | " + f.Message
	}
	return out
}

// TestBudgetShared checks that a Budget carries its spending from the
// evaluation to the caller's Charge, and that both stop at its limit and at
// its context.
func TestBudgetShared(t *testing.T) {
	s, err := Compile(mustDecode(t, `{"items":{"type":"integer"}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	inst := mustDecode(t, `[1,2,3,4,5,6,7,8,9,10]`)
	b := NewBudget(context.Background(), 100)
	if _, err := s.EvaluateWith(inst, &b, 0); err != nil {
		t.Fatal(err)
	}
	spent := b.Spent()
	if spent < 10 || spent > 100 {
		t.Fatalf("the evaluation spent %d steps, want between 10 and 100", spent)
	}
	if !b.Charge(100-spent) || b.Err() != nil {
		t.Errorf("charging up to the limit stopped: %v", b.Err())
	}
	if b.Charge(1) || !errors.Is(b.Err(), ErrTooComplex) {
		t.Errorf("charging past the limit: Err = %v, want ErrTooComplex", b.Err())
	}

	small := NewBudget(context.Background(), 5)
	if _, err := s.EvaluateWith(inst, &small, 0); !errors.Is(err, ErrTooComplex) {
		t.Errorf("evaluation over a 5-step budget: %v, want ErrTooComplex", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cb := NewBudget(ctx, 1<<40)
	if !cb.Charge(1) {
		t.Fatal("a live context stopped the budget")
	}
	cancel()
	stopped := false
	for range 2 * pollSteps {
		if !cb.Charge(1) {
			stopped = true
			break
		}
	}
	if !stopped || !errors.Is(cb.Err(), context.Canceled) {
		t.Errorf("after cancel: stopped %v, Err = %v, want context.Canceled within %d steps", stopped, cb.Err(), pollSteps)
	}
}

// omitted is res.Omitted, or nothing omitted when it is nil.
func omitted(res *Result) Omitted {
	if res.Omitted == nil {
		return Omitted{}
	}
	return *res.Omitted
}
