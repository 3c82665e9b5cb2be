// Package jsonnum holds the module's one JSON number grammar (Scan) and
// converts JSON number literals to float64 exactly as strconv.ParseFloat
// does, but for results below 2^-1022 with one big-integer division (about
// 1 µs) instead of strconv's multiprecision decimal shifting (about 18 µs
// for "5e-324": a 4 MiB body of such numbers cost 20 s of CPU), and below
// 10^-325, where everything rounds to zero, with none.
//
//	f, err := jsonnum.ParseFloat("4.9406564584124654e-324") // 5e-324, nil
package jsonnum

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"sync"
)

// maxExactDigits bounds the significant digits the exact path takes: its
// cost grows with their square. Longer literals go to strconv, whose cost
// stays linear past 800 digits (it keeps 800 and remembers whether any
// non-zero digit was dropped).
const maxExactDigits = 800

// maxSubnormal is the largest significand of a result below 2^-1022, plus
// one: 2^52 itself is 2^-1022, the smallest normal number, which the same
// bits encode.
const maxSubnormal = 1 << 52

// ParseFloat returns strconv.ParseFloat(s, 64): the same bits and the same
// error (nil or not) for every s, except that it reads right a literal with
// more than 800 digits before its point or exponent, which strconv misreads
// (see pointFirst).
func ParseFloat(s string) (float64, error) {
	if f, ok := parseTiny(s); ok {
		return f, nil
	}
	return strconv.ParseFloat(pointFirst(s), 64)
}

// pointFirst returns s, or for an RFC 8259 number with more than 800 digits
// before its point or exponent, the same number with the point before its
// first digit: strconv's exact path keeps 800 digits and puts the point
// after the last one kept, so "1" followed by 900 zeros and "e-900" reads
// as 1e-101 (golang/go#42436).
func pointFirst(s string) string {
	if len(s) <= maxExactDigits+1 {
		return s
	}
	mantissa, exp, ok := mantissaExp(s)
	digits := strings.TrimPrefix(mantissa, "-")
	whole := skipDigits(digits, 0)
	if !ok || whole <= maxExactDigits {
		return s // also past ±maxExp, far outside the range: strconv's 0 or Inf is right
	}
	sign := mantissa[:len(mantissa)-len(digits)] // "-" or ""
	return sign + "0." + strings.Replace(digits, ".", "", 1) + "e" + strconv.Itoa(exp+whole)
}

// parseTiny converts a decimal literal -?D*(.D*)?([eE][+-]?D+)? whose value
// lies below 10^-307 exactly: the nearest multiple of 2^-1074, ties to even.
// ok is false for any other s, and for results of 2^-1022 or more (normal
// numbers, which strconv converts quickly).
func parseTiny(s string) (f float64, ok bool) {
	var buf [64]byte
	neg, digits, exp, ok := Decimal(s, buf[:0])
	if !ok || len(digits) == 0 {
		return 0, false // strconv decides
	}
	// The decimal exponent of the leading digit decides the range. Below
	// 10^-325 a literal is under half the smallest subnormal (2^-1075,
	// about 2.5e-324) and rounds to zero.
	switch lead := exp + len(digits) - 1; {
	case lead > -308:
		return 0, false
	case lead < -325 && neg:
		return math.Copysign(0, -1), true
	case lead < -325:
		return 0, true
	}
	// m = round(digits × 10^exp × 2^1074) = round(digits × 2^(1074+exp) / 5^-exp);
	// exp < 0 here.
	num, _ := new(big.Int).SetString(string(digits), 10)
	den := new(big.Int).Set(pow5()[-exp])
	if sh := 1074 + exp; sh >= 0 {
		num.Lsh(num, uint(sh))
	} else {
		den.Lsh(den, uint(-sh))
	}
	q, r := num.QuoRem(num, den, new(big.Int))
	r.Lsh(r, 1)
	if c := r.Cmp(den); c > 0 || (c == 0 && q.Bit(0) == 1) {
		q.Add(q, big.NewInt(1))
	}
	if !q.IsUint64() || q.Uint64() > maxSubnormal {
		return 0, false
	}
	bits := q.Uint64()
	if neg {
		bits |= 1 << 63
	}
	return math.Float64frombits(bits), true
}

// Scan steps over the RFC 8259 number at s[i:],
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, and returns where it ends
// and whether it has a fraction and an exponent; ok is false when s[i:]
// does not start with one. What may follow it is the caller's to check. It
// is the module's only number grammar.
func Scan[T string | []byte](s T, i int) (end int, fraction, exponent, ok bool) {
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = skipDigits(s, i)
	default:
		return i, false, false, false
	}
	if i < len(s) && s[i] == '.' {
		if i = skipDigits(s, i+1); s[i-1] == '.' {
			return i, false, false, false
		}
		fraction = true
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		if i = skipDigits(s, i); i == start {
			return i, false, false, false
		}
		exponent = true
	}
	return i, fraction, exponent, true
}

// skipDigits returns the end of the run of decimal digits at s[i:].
func skipDigits[T string | []byte](s T, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// maxExp bounds the exponent mantissaExp takes: past it a literal shorter than
// a megabyte is zero or out of range, which strconv decides quickly.
const maxExp = 1_000_000

// mantissaExp splits s, an RFC 8259 number (Scan), at its exponent: the
// mantissa as written and the exponent, 0 when there is none. ok is false
// when s is not such a number or its exponent lies beyond ±maxExp.
func mantissaExp(s string) (mantissa string, exp int, ok bool) {
	if end, _, _, valid := Scan(s, 0); !valid || end != len(s) {
		return "", 0, false
	}
	e := strings.IndexByte(s, 'e')
	if e < 0 {
		e = strings.IndexByte(s, 'E')
	}
	if e < 0 {
		return s, 0, true
	}
	n, err := strconv.Atoi(s[e+1:])
	if err != nil || n < -maxExp || n > maxExp {
		return "", 0, false
	}
	return s[:e], n, true
}

// Decimal splits s, an RFC 8259 number (Scan), into its sign and value
// digits × 10^exp: digits are its significant digits without leading or
// trailing zeros, appended to buf; zero has none and exp 0. ok is false
// when s is not such a number, its exponent lies beyond ±10^6, or it has
// more than maxExactDigits significant digits.
func Decimal(s string, buf []byte) (neg bool, digits []byte, exp int, ok bool) {
	mantissa, exp, ok := mantissaExp(s)
	if !ok {
		return false, nil, 0, false
	}
	whole, frac, _ := strings.Cut(strings.TrimPrefix(mantissa, "-"), ".")
	if mantissa[len(mantissa)-1] == '0' { // trailing zeros; most literals have none
		if frac = strings.TrimRight(frac, "0"); frac == "" {
			t := strings.TrimRight(whole, "0")
			exp += len(whole) - len(t)
			whole = t
		}
	}
	exp -= len(frac)
	if whole = strings.TrimLeft(whole, "0"); whole == "" {
		frac = strings.TrimLeft(frac, "0")
	}
	switch n := len(whole) + len(frac); {
	case n == 0:
		return s[0] == '-', buf, 0, true
	case n > maxExactDigits:
		return false, nil, 0, false
	}
	return s[0] == '-', append(append(buf, whole...), frac...), exp, true
}

// TinyIsZero decides, without converting it, whether a JSON number literal
// of magnitude below 10^-307 (the subnormal range, where strconv is slow)
// rounds to zero as a float64: round to nearest, ties to even, so exactly
// when its magnitude is at most 2^-1075. decided is false for any other
// literal, for zero itself, and for those Decimal refuses; ParseFloat
// answers those.
func TinyIsZero(s string) (zero, decided bool) {
	var buf [64]byte
	_, digits, exp, ok := Decimal(s, buf[:0])
	if !ok || len(digits) == 0 {
		return false, false
	}
	halfLead, halfDigits := halfMinSubnormal()
	switch lead := exp + len(digits) - 1; {
	case lead > -308:
		return false, false
	case lead < halfLead:
		return true, true
	case lead > halfLead:
		return false, true
	}
	// Same leading exponent: compare the significant digits.
	return string(digits) <= halfDigits, true
}

// halfMinSubnormal is 2^-1075 = 5^1075 × 10^-1075, half the smallest
// subnormal, in decimal (it is exact in 1075 decimal places): the exponent
// of its leading digit and its significant digits, computed once.
var halfMinSubnormal = sync.OnceValues(func() (lead int, digits string) {
	d := new(big.Int).Exp(big.NewInt(5), big.NewInt(1075), nil).String()
	return len(d) - 1 - 1075, strings.TrimRight(d, "0")
})

// maxPow5 is the largest power of five parseTiny divides by: the exponent
// of a literal of maxExactDigits digits at the bottom of the range.
const maxPow5 = 325 + maxExactDigits

// pow5 is the table of 5^k for 0 <= k <= maxPow5 (about 200 KB), built on
// first use and never written again, so that no literal computes its power.
var pow5 = sync.OnceValue(func() []*big.Int {
	t := make([]*big.Int, maxPow5+1)
	t[0] = big.NewInt(1)
	five := big.NewInt(5)
	for k := 1; k <= maxPow5; k++ {
		t[k] = new(big.Int).Mul(t[k-1], five)
	}
	return t
})
