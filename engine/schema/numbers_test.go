package schema

import (
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestParseNumber(t *testing.T) {
	tests := []struct {
		lit   string
		ok    bool
		isInt bool
		str   string
	}{
		{"0", true, true, "0"},
		{"-0", true, true, "0"},
		{"1.0", true, true, "1"},
		{"12.50", true, false, "12.5"},
		{"1e2", true, true, "100"},
		{"1.5e1", true, true, "15"},
		{"1e-1", true, false, "0.1"},
		{"0.0001", true, false, "0.0001"},
		{"1e308", true, true, "1e308"},
		{"-12345678910111213141516171819202122232425262728293031", true, true, "-12345678910111213141516171819202122232425262728293031"},
		{"972783798187987123879878123.18878137", true, false, "972783798187987123879878123.18878137"},
		{"1E+2", true, true, "100"},
		{"0.000", true, true, "0"},
		{"01", false, false, ""},
		{"1.", false, false, ""},
		{".5", false, false, ""},
		{"-", false, false, ""},
		{"", false, false, ""},
		{"1e", false, false, ""},
		{"1x", false, false, ""},
		{"NaN", false, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.lit, func(t *testing.T) {
			var n number
			ok := parseNumber(tt.lit, &n)
			if ok != tt.ok {
				t.Fatalf("parseNumber(%q) ok = %v, want %v", tt.lit, ok, tt.ok)
			}
			if !ok {
				return
			}
			if n.isInt() != tt.isInt {
				t.Errorf("parseNumber(%q).isInt() = %v, want %v", tt.lit, n.isInt(), tt.isInt)
			}
			if n.String() != tt.str {
				t.Errorf("parseNumber(%q).String() = %q, want %q", tt.lit, n.String(), tt.str)
			}
		})
	}
}

func num(t *testing.T, s string) *number {
	t.Helper()
	n := new(number)
	if !parseNumber(s, n) {
		t.Fatalf("parseNumber(%q) failed", s)
	}
	return n
}

func TestCmpNumber(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"1", "1.0", 0},
		{"0", "-0", 0},
		{"-1", "1", -1},
		{"0.1", "0.10000000000000001", -1},
		{"18446744073709551600", "18446744073709551615", -1},
		{"972783798187987123879878123.188781371", "972783798187987123879878123.18878137", 1},
		{"-972783798187987123879878123.188781371", "-972783798187987123879878123.18878137", -1},
		{"1e400", "1e399", 1},
		{"1e-400", "0", 1},
		{"20", "19", 1},
		{"3.5", "0", 1},
		{"100", "1e2", 0},
		{"123456789012345678901234567890", "1.2345678901234567890123456789e29", 0},
	}
	for _, tt := range tests {
		t.Run(tt.a+" vs "+tt.b, func(t *testing.T) {
			if got := cmpNumber(num(t, tt.a), num(t, tt.b)); got != tt.want {
				t.Errorf("cmpNumber(%s, %s) = %d, want %d", tt.a, tt.b, got, tt.want)
			}
			if got := cmpNumber(num(t, tt.b), num(t, tt.a)); got != -tt.want {
				t.Errorf("cmpNumber(%s, %s) = %d, want %d", tt.b, tt.a, got, -tt.want)
			}
		})
	}
}

func TestIsMultiple(t *testing.T) {
	tests := []struct {
		a, d string
		want bool
	}{
		{"10", "2", true},
		{"7", "2", false},
		{"0.0075", "0.0001", true},
		{"0.00751", "0.0001", false},
		{"19.99", "0.01", true},
		{"4.5", "1.5", true},
		{"35", "1.5", false},
		{"1e308", "0.5", true},
		{"0", "3", true},
		{"-6", "3", true},
		{"12345678901234567890123", "3", true},
		{"12345678901234567890124", "3", false},
		{"12345678901234567890124", "2", true},
		{"1e-400", "1", false},
		{"1e400", "7", false},
		{"7e400", "7", true},
		{"1.1e400", "1.1", true},
		{"18446744073709551615", "5", true},
		{"9999999999999999999", "9999999999999999999", true},
		{"0.3", "0.1", true},
	}
	for _, tt := range tests {
		t.Run(tt.a+" by "+tt.d, func(t *testing.T) {
			if got := isMultiple(num(t, tt.a), num(t, tt.d)); got != tt.want {
				t.Errorf("isMultiple(%s, %s) = %v, want %v", tt.a, tt.d, got, tt.want)
			}
		})
	}
}

// randomLiteral returns a JSON number literal of 1 to 25 significant digits
// drawn from few distinct ones (so that equal and near values are common),
// with a point or an exponent at times.
func randomLiteral(r *rand.Rand) string {
	var b strings.Builder
	if r.IntN(3) == 0 {
		b.WriteByte('-')
	}
	digits := 1 + r.IntN(25)
	b.WriteByte(byte('1' + r.IntN(3)))
	for range digits - 1 {
		b.WriteByte("0019"[r.IntN(4)])
	}
	s := b.String()
	switch r.IntN(3) {
	case 1:
		if p := len(s) - r.IntN(digits); p < len(s) && s[p-1] != '-' {
			s = s[:p] + "." + s[p:]
		}
	case 2:
		s += "e" + strconv.Itoa(r.IntN(41)-20)
	}
	return s
}

// TestCmpNumberAgainstRat compares cmpNumber with exact rational
// arithmetic on random literals, short and long, equal and near.
func TestCmpNumberAgainstRat(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 200_000 {
		a, b := randomLiteral(r), randomLiteral(r)
		if r.IntN(4) == 0 {
			b = a + "0" // equal to a when a has a point
		}
		want := ratOf(t, a).Cmp(ratOf(t, b))
		if got := cmpNumber(num(t, a), num(t, b)); got != want {
			t.Fatalf("cmpNumber(%s, %s) = %d, want %d", a, b, got, want)
		}
	}
}

// TestIsMultipleAgainstRat compares isMultiple with exact rational
// arithmetic on random positive divisors, short and long, and on random
// literals and multiples of them, and on powers of ten by divisors of many
// factors 2 and 5.
func TestIsMultipleAgainstRat(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	powers := []string{"1024", "0.0625", "3.2e-5", "48828125", "1180591620717411303424", "5.9604644775390625e-8",
		"7450580596923828125", "9223372036854775808", "88817841970012523233890533447265625", "4096e-10"}
	for range 50_000 {
		d := strings.TrimPrefix(randomLiteral(r), "-")
		a := randomLiteral(r)
		switch r.IntN(3) {
		case 0: // powers of ten against divisors made of many factors 2 and 5
			d = powers[r.IntN(len(powers))]
			a = "1e" + strconv.Itoa(r.IntN(120))
		case 1:
			m := new(big.Rat).SetInt64(r.Int64N(1e6) - 5e5)
			a = new(big.Rat).Mul(ratOf(t, d), m).FloatString(30)
			if strings.Contains(a, ".") {
				a = strings.TrimRight(strings.TrimRight(a, "0"), ".")
			}
		}
		if got, want := isMultiple(num(t, a), num(t, d)), bigIsMultiple(t, a, d); got != want {
			t.Fatalf("isMultiple(%s, %s) = %v, want %v", a, d, got, want)
		}
	}
}
