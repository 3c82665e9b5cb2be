package schema

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestUndeclaredKeysChargeTheBudget checks that finding an object's
// undeclared keys, a lookup of every key in every subschema with properties
// applied there, is charged: 1,000 such subschemas over an object of
// 100,000 keys (10^8 lookups, seconds of work uncharged) run out of the
// step budget, and with the limit raised stop at the deadline.
func TestUndeclaredKeysChargeTheBudget(t *testing.T) {
	subs := make([]string, 1000)
	for i := range subs {
		subs[i] = fmt.Sprintf(`{"properties":{"p%d":{}}}`, i)
	}
	keys := make([]string, 100_000)
	for i := range keys {
		keys[i] = fmt.Sprintf(`"k%d":0`, i)
	}
	inst := mustDecode(t, `{`+strings.Join(keys, ",")+`}`)
	doc := mustDecode(t, `{"allOf":[`+strings.Join(subs, ",")+`]}`)
	s, err := Compile(doc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Evaluate(inst); !errors.Is(err, ErrTooComplex) {
		t.Errorf("Evaluate = %v, want ErrTooComplex", err)
	}
	roomy, err := Compile(doc, &Options{MaxSteps: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := roomy.EvaluateContext(ctx, inst); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("EvaluateContext = %v, want an error wrapping context.DeadlineExceeded", err)
	}
	if took := time.Since(start); took > hostileBound() {
		t.Errorf("stopped after %v, want soon after the 100ms deadline", took)
	}
}
