package schema

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// bigIsMultiple is the reference: a/d is an integer, in exact rationals.
func bigIsMultiple(t *testing.T, a, d string) bool {
	t.Helper()
	ra, ok1 := new(big.Rat).SetString(a)
	rd, ok2 := new(big.Rat).SetString(d)
	if !ok1 || !ok2 {
		t.Fatalf("bad literal %q or %q", a, d)
	}
	return new(big.Rat).Quo(ra, rd).IsInt()
}

// TestLongIsMultiple compares isMultiple on numbers of more than 19
// significant digits by divisors of at most 19 (the linear path) with
// exact rational arithmetic, including divisors near 2^64 where a digit
// step overflows.
func TestLongIsMultiple(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	divisors := []string{"1", "2", "3", "7", "0.01", "0.5", "1.5", "2.5e-7", "12e3",
		"18446744073709551615", "18446744073709551557", "9999999999999999999", "1844674407370955161.5", "4611686018427387904"}
	for i := 0; i < 400; i++ {
		d := divisors[i%len(divisors)]
		var digits strings.Builder
		for j := 0; j < 20+r.IntN(60); j++ {
			digits.WriteByte(byte('0' + r.IntN(10)))
		}
		a := "1" + digits.String()
		switch i % 4 {
		case 1:
			a += "e" + fmt.Sprint(r.IntN(40))
		case 2:
			a = a[:5] + "." + a[5:]
		case 3:
			a = "-" + a + "0000"
		}
		if i%5 == 0 {
			// make it a multiple: a × d exactly
			prod := new(big.Rat).Mul(ratOf(t, a), ratOf(t, d))
			a = prod.FloatString(40)
			a = strings.TrimRight(strings.TrimRight(a, "0"), ".")
		}
		t.Run(a+" by "+d, func(t *testing.T) {
			if got, want := isMultiple(num(t, a), num(t, d)), bigIsMultiple(t, a, d); got != want {
				t.Errorf("isMultiple(%s, %s) = %v, want %v", a, d, got, want)
			}
		})
	}
}

func ratOf(t *testing.T, s string) *big.Rat {
	t.Helper()
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("bad literal %q", s)
	}
	return r
}

// TestLongNumbersAreCharged checks that a number of millions of digits is
// evaluated in linear time (multipleOf by a short divisor), and that
// applying keywords to it many times, or multipleOf by a divisor of many
// digits, spends the step budget instead of minutes.
func TestLongNumbersAreCharged(t *testing.T) {
	long := "1." + strings.Repeat("0", 3<<20) + "1"
	for _, tt := range []struct {
		name, schema, instance string
		tooComplex             bool
	}{
		{"multipleOf 0.1 once", `{"multipleOf":0.1}`, long, false},
		{"multipleOf by 25 digits on 3M digits", `{"multipleOf":1.000000000000000000000001}`, long, true},
		{"minimum 2^19 times", fanOut(19, `{"minimum":0}`), long, true},
		{"multipleOf 2^19 times on the recording path", fanOut(19, `{"multipleOf":7}`), long, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Compile(mustDecode(t, tt.schema), nil)
			if err != nil {
				t.Fatal(err)
			}
			inst := mustDecode(t, tt.instance)
			start := cpuNow() // CPU time: the machine is shared
			_, err = s.Evaluate(inst)
			if got := err == ErrTooComplex; got != tt.tooComplex {
				t.Errorf("Evaluate: err = %v, want ErrTooComplex %v", err, tt.tooComplex)
			}
			if took := time.Duration(cpuNow() - start); took > hostileBound() {
				t.Errorf("Evaluate took %v, want under %v", took, hostileBound())
			}
		})
	}
}
