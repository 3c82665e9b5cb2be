package jsonnum

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// same checks ParseFloat(s) against strconv.ParseFloat(s, 64), or against
// big.Rat's nearest float64 for a literal with more than 800 digits before
// its point, which strconv misreads (golang/go#42436).
func same(t testing.TB, s string) {
	t.Helper()
	want, werr := strconv.ParseFloat(s, 64)
	if longWhole(s) {
		want, werr = ratFloat(t, s)
	}
	got, gerr := ParseFloat(s)
	if math.Float64bits(got) != math.Float64bits(want) || (werr == nil) != (gerr == nil) {
		t.Errorf("ParseFloat(%q) = %v (%x), %v; want %v (%x), %v",
			s, got, math.Float64bits(got), gerr, want, math.Float64bits(want), werr)
	}
}

// longWhole reports whether s is a JSON number with more than 800 digits
// before its point and an exponent of at most 5 digits (big.Rat's size).
func longWhole(s string) bool {
	if end, _, _, ok := Scan(s, 0); !ok || end != len(s) {
		return false
	}
	digits := strings.TrimPrefix(s, "-")
	_, exp, _ := strings.Cut(strings.ToLower(digits), "e")
	return skipDigits(digits, 0) > 800 && len(strings.TrimLeft(exp, "+-")) <= 5
}

// ratFloat is the float64 nearest to s, a JSON number, ties to even, with
// strconv's range error past the largest double.
func ratFloat(t testing.TB, s string) (float64, error) {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("big.Rat cannot read %q", s)
	}
	f, _ := r.Float64()
	if math.IsInf(f, 0) {
		return f, strconv.ErrRange
	}
	if f == 0 && r.Sign() < 0 {
		f = math.Copysign(0, -1)
	}
	return f, nil
}

// TestParseFloatLongWhole holds literals with more than 800 digits before
// the point, which strconv.ParseFloat misreads by the digits past 800.
func TestParseFloatLongWhole(t *testing.T) {
	zeros := strings.Repeat("0", 900)
	for _, c := range []struct {
		lit  string
		want float64
	}{
		{"1" + zeros + "e-900", 1},
		{"1" + zeros[:801] + "e-801", 1},
		{"-12" + zeros + ".5e-901", -1.2},
		{"1" + zeros + ".000E-899", 10},
		{"1" + zeros, math.Inf(1)},
		{strings.Repeat("9", 1000) + "e-1000", 1},
		{"25" + zeros + "e-1231", 0}, // 2.5e-330: under the smallest subnormal
		{"1" + zeros + "e-1200", 1e-300},
	} {
		got, err := ParseFloat(c.lit)
		if got != c.want || (err == nil) != !math.IsInf(c.want, 0) {
			t.Errorf("ParseFloat(%.12s… (%d bytes)) = %v, %v; want %v", c.lit, len(c.lit), got, err, c.want)
		}
		same(t, c.lit)
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
	// Below 10^-325 every literal rounds to zero, with no conversion at all.
	for _, lit := range []string{"1e-327", "-9.99e-326"} {
		start := time.Now()
		for i := 0; i < 100_000; i++ {
			if _, err := ParseFloat(lit); err != nil {
				t.Fatal(err)
			}
		}
		if took := time.Since(start); took > speedBound {
			t.Errorf("100,000 × %s took %v, want under %v", lit, took, speedBound)
		}
	}
}

func FuzzParseFloat(f *testing.F) {
	for _, s := range []string{"5e-324", "2.4703282292062327e-324", "1e-308", "-0.0000e-400", "-1e-327", "9.99e-326", "1.5", "1e309", halfway(3)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { same(t, s) })
}

func BenchmarkParseFloat(b *testing.B) {
	for _, s := range []string{"5e-324", "4.9406564584124654e-324", "4." + strings.Repeat("9", 780) + "e-324", "1e-327", "123.456"} {
		b.Run(fmt.Sprintf("%d bytes", len(s)), func(b *testing.B) {
			for b.Loop() {
				_, _ = ParseFloat(s)
			}
		})
	}
}

// TestDecimal: significant digits without leading or trailing zeros, zero
// as no digits, and refusals outside the grammar and the bounds.
func TestDecimal(t *testing.T) {
	for _, tt := range []struct {
		lit    string
		neg    bool
		digits string
		exp    int
		ok     bool
	}{
		{"0", false, "", 0, true}, {"-0.000e-5", true, "", 0, true}, {"100", false, "1", 2, true},
		{"-10.50", true, "105", -1, true}, {"0.0500", false, "5", -2, true}, {"1.5E+3", false, "15", 2, true},
		{"1." + strings.Repeat("0", 900), false, "1", 0, true}, {"2e-1000000", false, "2", -1000000, true},
		{"2e1000001", false, "", 0, false}, {"1" + strings.Repeat("1", 800), false, "", 0, false},
		{"1.", false, "", 0, false}, {"+1", false, "", 0, false}, {"01", false, "", 0, false}, {"", false, "", 0, false},
	} {
		neg, digits, exp, ok := Decimal(tt.lit, nil)
		if ok != tt.ok || ok && (neg != tt.neg || string(digits) != tt.digits || exp != tt.exp) {
			t.Errorf("Decimal(%.40s) = %v, %q, %d, %v; want %v, %q, %d, %v",
				tt.lit, neg, digits, exp, ok, tt.neg, tt.digits, tt.exp, tt.ok)
		}
	}
}

// TestTinyIsZero holds TinyIsZero to ParseFloat: around 2^-1075 (the last
// literal that rounds to zero), across the subnormal range, with signs,
// fractions and trailing zeros, and undecided outside it.
func TestTinyIsZero(t *testing.T) {
	half := "2.4703282292062327208828439643411068618252990130716238221279284125033775363510437593264991818081799618989828234772285886546332835517796989819938739800539093906315035659515570226392290858392449105184435931802849936536152500319370457678249219365623669863658480757001585769269903706311928279558551332927834338409351978015531246597263579574622766465272827220056374006485499977096599470454020828166226237857393450736339007967761930577506740176324673600968951340535537458516661134223766678604162159680461914467291840300530057530849048765391711386591646239524912623653881879636239373280423891018672348497668235089863388587925628302755995657524455507255189313690836254779186948667994968324049705821028513185451396213837722826145437693412532098591327667236328125e-324"
	for _, tt := range []struct {
		lit     string
		decided bool
	}{
		{half, true},
		{strings.Replace(half, "125e-324", "1250000e-324", 1), true},
		{strings.Replace(half, "125e-324", "126e-324", 1), true},
		{strings.Replace(half, "125e-324", "124e-324", 1), true},
		{"-" + half, true},
		{"2.4703282292062327e-324", true}, {"2.4703282292062328e-324", true},
		{"5e-324", true}, {"4e-324", true}, {"3e-324", true}, {"2e-324", true}, {"1e-324", true},
		{"-5e-324", true}, {"1e-400", true}, {"0.000001e-318", true}, {"123.456e-320", true},
		{"2.2250738585072009e-308", true}, {"1e-308", true}, {"9.99e-308", true},
		{"1e-307", false}, {"1.5", false}, {"0", false}, {"0e-400", false}, {"-0.0", false}, {"100", false},
	} {
		zero, decided := TinyIsZero(tt.lit)
		if decided != tt.decided {
			t.Errorf("TinyIsZero(%.40s…) decided = %v, want %v", tt.lit, decided, tt.decided)
			continue
		}
		if !decided {
			continue
		}
		f, err := strconv.ParseFloat(tt.lit, 64)
		if err != nil && f != 0 {
			t.Fatalf("ParseFloat(%.40s…): %v", tt.lit, err)
		}
		if zero != (f == 0) {
			t.Errorf("TinyIsZero(%.40s…) = %v, but ParseFloat gives %v", tt.lit, zero, f)
		}
	}
}

// FuzzTinyIsZero: where TinyIsZero decides, ParseFloat agrees.
func FuzzTinyIsZero(f *testing.F) {
	for _, s := range []string{"5e-324", "2.4703282292062328e-324", "2.47e-324", "-1e-330", "9e-309", "0.0001e-320"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		zero, decided := TinyIsZero(s)
		if !decided {
			return
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			t.Fatalf("TinyIsZero(%q) decided on a literal ParseFloat refuses: %v", s, err)
		}
		if zero != (v == 0) {
			t.Fatalf("TinyIsZero(%q) = %v, ParseFloat = %v", s, zero, v)
		}
	})
}
