package schema

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// fanOut is a schema that applies leaf 2^k times to the same instance
// through nested allOf references: few nodes, exponential work.
func fanOut(k int, leaf string) string {
	var defs []string
	for i := range k {
		defs = append(defs, fmt.Sprintf(`"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i+1, i+1))
	}
	return fmt.Sprintf(`{"$defs":{%s,"d%d":%s},"$ref":"#/$defs/d0"}`, strings.Join(defs, ","), k, leaf)
}

// TestStepBudgetChargesLongValues checks that keywords whose cost grows
// with the value (pattern, format and length on a string, patternProperties
// on a key, uniqueItems on an array) spend the step budget in proportion,
// so that applying them many times to one large value ends in
// ErrTooComplex instead of running for minutes — and that applying them
// once still fits.
func TestStepBudgetChargesLongValues(t *testing.T) {
	long := `"` + strings.Repeat("a", 3<<20) + `"`
	array := "[" + strings.TrimSuffix(strings.Repeat("1,", 200_000), ",") + "]"
	distinct := make([]string, 200_000)
	for i := range distinct {
		distinct[i] = fmt.Sprint(i)
	}
	for _, tt := range []struct {
		name, schema, instance string
		tooComplex             bool
	}{
		{"pattern once", `{"pattern":"^(a|b)*$"}`, long, false},
		{"pattern 2^19 times", fanOut(19, `{"pattern":"^(a|b)*$"}`), long, true},
		{"minLength 2^19 times", fanOut(19, `{"minLength":1}`), long, true},
		{"format regex once", `{"format":"regex"}`, `"` + strings.Repeat("a", 500_000) + `"`, false},
		{"format regex once on 3 MiB", `{"format":"regex"}`, long, true},
		{"format 2^19 times", fanOut(19, `{"format":"uri-template"}`), long, true},
		{"format regex 2^19 times", fanOut(19, `{"format":"regex"}`), `"` + strings.Repeat("a", 100_000) + `"`, true},
		{"pattern 2^19 times on the recording path", fanOut(19, `{"pattern":"^b"}`), long, true},
		{"patternProperties 2^19 times on a long key", fanOut(19, `{"patternProperties":{"^(a|b)*$":true}}`), `{` + long + `:1}`, true},
		// Go's regexp works per byte in proportion to the program: these
		// two took 15 s of CPU each on 1 MiB before matching was charged so.
		{"costly pattern once on 1 MiB", `{"pattern":"[a-z]{1,900}x"}`, `"` + strings.Repeat("a", 1<<20) + `"`, true},
		{"costly patternProperties once on a 1 MiB key", `{"patternProperties":{"(?:a{1,30}){1,30}x":true}}`, `{"` + strings.Repeat("a", 1<<20) + `":1}`, true},
		{"uniqueItems once", `{"uniqueItems":true}`, array, false},
		{"uniqueItems once on distinct items", `{"uniqueItems":true}`, "[" + strings.Join(distinct, ",") + "]", false},
		{"uniqueItems 2^19 times", fanOut(19, `{"uniqueItems":true}`), array, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Compile(mustDecode(t, tt.schema), nil)
			if err != nil {
				t.Fatal(err)
			}
			inst := mustDecode(t, tt.instance)
			start := cpuNow() // CPU time: the machine is shared
			_, err = s.Evaluate(inst)
			took := time.Duration(cpuNow() - start)
			if got := errors.Is(err, ErrTooComplex); got != tt.tooComplex {
				t.Errorf("Evaluate: err = %v, want ErrTooComplex %v", err, tt.tooComplex)
			}
			if took > hostileBound() {
				t.Errorf("Evaluate took %v, want under %v", took, hostileBound())
			}
		})
	}
}

// TestEvaluateContext checks that a done context stops an evaluation the
// step limit alone would let run far longer.
func TestEvaluateContext(t *testing.T) {
	s, err := Compile(mustDecode(t, fanOut(26, `{"type":"integer"}`)), &Options{MaxSteps: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	inst := mustDecode(t, `1`)

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.EvaluateContext(cancelled, inst); !errors.Is(err, context.Canceled) {
		t.Errorf("EvaluateContext(cancelled) = %v, want context.Canceled", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = s.EvaluateContext(ctx, inst)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrTooComplex) {
		t.Errorf("EvaluateContext past its deadline = %v, want context.DeadlineExceeded", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("EvaluateContext returned %v after a 50ms deadline", took)
	}

	// The evaluator is pooled: the next evaluation must not see the old
	// context.
	small, err := Compile(mustDecode(t, fanOut(10, `{"type":"integer"}`)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := small.EvaluateContext(cancelled, inst); !errors.Is(err, context.Canceled) {
		t.Errorf("small schema, cancelled: %v, want context.Canceled", err)
	}
	if res, err := small.EvaluateContext(context.Background(), inst); err != nil || !res.Valid {
		t.Errorf("small schema after a cancelled evaluation: %v, %v; want valid", res, err)
	}
}

// TestStepBudgetChargesComparisons checks that const and enum comparisons
// with long strings and large arrays or objects spend the budget in
// proportion, so that repeating them through references ends.
func TestStepBudgetChargesComparisons(t *testing.T) {
	str := strings.Repeat("a", 1<<20)
	arr := "[" + strings.TrimSuffix(strings.Repeat(`{"k":[1,2]},`, 20_000), ",") + "]"
	members := make([]string, enumIndexMin)
	for i := range members {
		members[i] = fmt.Sprintf(`[%d]`, i)
	}
	bigEnum := `{"enum":[` + strings.Join(members, ",") + `,` + arr + `]}`
	for _, tt := range []struct {
		name, schema, instance string
		tooComplex             bool
	}{
		{"const string once", `{"const":"` + str + `"}`, `"` + str + `"`, false},
		{"const string 2^19 times", fanOut(19, `{"const":"`+str+`"}`), `"` + str + `"`, true},
		{"enum string 2^19 times", fanOut(19, `{"enum":["`+str+`","b"]}`), `"` + str + `"`, true},
		{"const array once", `{"const":` + arr + `}`, arr, false},
		{"const array 2^19 times", fanOut(19, `{"const":`+arr+`}`), arr, true},
		{"indexed enum of arrays once", bigEnum, arr, false},
		{"indexed enum of arrays 2^19 times", fanOut(19, bigEnum), arr, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Compile(mustDecode(t, tt.schema), nil)
			if err != nil {
				t.Fatal(err)
			}
			inst := mustDecode(t, tt.instance)
			start := cpuNow() // CPU time: the machine is shared
			res, err := s.Evaluate(inst)
			if got := errors.Is(err, ErrTooComplex); got != tt.tooComplex {
				t.Errorf("Evaluate: err = %v, want ErrTooComplex %v", err, tt.tooComplex)
			}
			if err == nil && !res.Valid {
				t.Errorf("Evaluate: not valid, want valid")
			}
			if took, bound := time.Duration(cpuNow()-start), hostileBound(); took > bound {
				t.Errorf("Evaluate took %v, want under %v", took, bound)
			}
		})
	}
}
