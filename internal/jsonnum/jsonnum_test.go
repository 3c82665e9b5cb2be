package jsonnum

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// same checks ParseFloat(s) against strconv.ParseFloat(s, 64).
func same(t testing.TB, s string) {
	t.Helper()
	want, werr := strconv.ParseFloat(s, 64)
	got, gerr := ParseFloat(s)
	if math.Float64bits(got) != math.Float64bits(want) || (werr == nil) != (gerr == nil) {
		t.Errorf("ParseFloat(%q) = %v (%x), %v; strconv says %v (%x), %v",
			s, got, math.Float64bits(got), gerr, want, math.Float64bits(want), werr)
	}
}

// halfway is the exact decimal of (2k+1) × 2^-1075: a tie between two
// neighbouring subnormals (or zero and the smallest).
func halfway(k uint64) string {
	x := new(big.Int).Exp(big.NewInt(5), big.NewInt(1075), nil)
	x.Mul(x, new(big.Int).SetUint64(2*k+1))
	return x.String() + "e-1075"
}

func TestParseFloatEdges(t *testing.T) {
	cases := []string{
		"5e-324", "-5e-324", "4.9406564584124654e-324", "2.4703282292062327e-324", "2.4703282292062328e-324",
		"1e-324", "3e-324", "7.4e-324", "1e-323", "2.2250738585072009e-308", "2.2250738585072011e-308",
		"2.2250738585072014e-308", "2.225073858507201e-308", "1e-308", "1e-307", "1e-325", "9.99e-326",
		"0e-324", "-0e-324", "0.000e-320", "0.5e-323", "50e-325", ".5e-323", "5.e-324", "00005e-324",
		"5E-324", "5e-0324", "5e+-324", "5e", "e-324", "-", "", ".", "5e-324x", "0x1p-1074", "5_0e-325",
		"+5e-324", "Inf", "NaN", "5e-99999999999999999999", "1e-400", "1.7976931348623157e308", "1e309",
		"0." + strings.Repeat("0", 323) + "5", "4." + strings.Repeat("9", 799) + "e-324",
		"4." + strings.Repeat("9", 800) + "e-324", "1" + strings.Repeat("0", 900) + "e-1230",
	}
	for k := uint64(0); k < 50; k++ {
		cases = append(cases, halfway(k), halfway((1<<51)-1-k), halfway(1<<51+k))
	}
	for _, s := range cases {
		t.Run(s[:min(len(s), 40)], func(t *testing.T) { same(t, s) })
	}
}

// TestParseFloatRandom compares with strconv on random literals around and
// inside the subnormal range, in every notation.
func TestParseFloatRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 7))
	n := 100_000
	if testing.Short() {
		n = 10_000
	}
	for i := 0; i < n; i++ {
		nd := 1 + r.IntN(25)
		if i%50 == 0 {
			nd = 1 + r.IntN(900)
		}
		var b strings.Builder
		b.WriteByte(byte('1' + r.IntN(9)))
		for j := 1; j < nd; j++ {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
		m := b.String()
		e := -307 - nd - r.IntN(21)
		sign := []string{"", "-"}[r.IntN(2)]
		same(t, sign+m+"e"+strconv.Itoa(e))
		if len(m) > 2 {
			same(t, sign+m[:1]+"."+m[1:]+"E"+strconv.Itoa(e+len(m)-1))
		}
		if t.Failed() {
			return
		}
	}
	for k := 0; k < 2000; k++ {
		same(t, halfway(r.Uint64N(1<<52)))
	}
}

// TestParseFloatIsFast checks the point of the package: subnormal literals
// cost about a microsecond, not strconv's tens.
func TestParseFloatIsFast(t *testing.T) {
	lits := []string{"5e-324", "4.9406564584124654e-324", "1.2345e-310", "4." + strings.Repeat("9", 780) + "e-324"}
	start := time.Now()
	for i := 0; i < 10_000; i++ {
		if _, err := ParseFloat(lits[i%len(lits)]); err != nil {
			t.Fatal(err)
		}
	}
	if took := time.Since(start); took > speedBound {
		t.Errorf("10,000 subnormal literals took %v, want under %v", took, speedBound)
	}
}

func FuzzParseFloat(f *testing.F) {
	for _, s := range []string{"5e-324", "2.4703282292062327e-324", "1e-308", "-0.0000e-400", "1.5", "1e309", halfway(3)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { same(t, s) })
}

func BenchmarkParseFloat(b *testing.B) {
	for _, s := range []string{"5e-324", "4.9406564584124654e-324", "4." + strings.Repeat("9", 780) + "e-324", "123.456"} {
		b.Run(fmt.Sprintf("%d bytes", len(s)), func(b *testing.B) {
			for b.Loop() {
				_, _ = ParseFloat(s)
			}
		})
	}
}
