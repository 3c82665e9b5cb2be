package schema

import (
	"cmp"
	"encoding/json"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"

	"github.com/verifier-dev/verifier/internal/jsonnum"
)

// maxExp bounds the decimal exponent read from a number literal (a larger
// one counts as ±maxExp). Literals such as 1e999999999999 stay exact in
// comparisons (the exponent only orders them) and never drive an allocation
// proportional to the exponent.
const maxExp = 1 << 40

// number is the exact value of a JSON number literal:
// (-1)^neg × coef × 10^exp when small, else digits × 10^exp with digits the
// significant decimal digits. Zero has coef 0 (small) and neg false.
type number struct {
	neg    bool
	small  bool   // coef holds every significant digit (at most 19)
	coef   uint64 // significant digits without trailing zeros, when small
	digits string // significant digits without leading/trailing zeros, when !small
	exp    int64  // decimal exponent of the last significant digit
}

var pow10 = [...]uint64{
	1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000,
	10000000000, 100000000000, 1000000000000, 10000000000000, 100000000000000,
	1000000000000000, 10000000000000000, 100000000000000000, 1000000000000000000,
	10000000000000000000,
}

// parseNumber sets *n to the exact value of the JSON number literal s and
// reports whether s is one. It allocates only for literals with more than
// 19 significant digits. Most literals have no exponent and at most 19
// characters, so that their digits make the coefficient: they are read
// here in one pass; the others, malformed ones included, go to parseAny.
func parseNumber(s string, n *number) bool {
	i := 0
	neg := false
	if len(s) > 0 && s[0] == '-' {
		neg = true
		i = 1
	}
	start := i
	if i >= len(s) || len(s) > 19 || (s[i] == '0' && i+1 < len(s) && s[i+1] != '.') {
		return parseAny(s, n)
	}
	var coef uint64
	frac := -1
	for ; i < len(s); i++ {
		c := s[i]
		if c >= '0' && c <= '9' {
			coef = coef*10 + uint64(c-'0')
			if frac >= 0 {
				frac++
			}
			continue
		}
		if c == '.' && frac < 0 && i > start && i+1 < len(s) {
			frac = 0
			continue
		}
		return parseAny(s, n)
	}
	if coef == 0 {
		*n = number{small: true}
		return true
	}
	exp := int64(0)
	if frac > 0 {
		exp = -int64(frac)
	}
	for coef%10 == 0 {
		coef /= 10
		exp++
	}
	*n = number{neg: neg, small: true, coef: coef, exp: exp}
	return true
}

// numberOf sets *n to a decoded instance value's number and reports
// whether v is a finite number.
func numberOf(v any, n *number) bool {
	switch x := v.(type) {
	case json.Number:
		return parseNumber(string(x), n)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
		return parseNumber(strconv.FormatFloat(x, 'g', -1, 64), n)
	}
	return false
}

func (n number) isZero() bool { return n.small && n.coef == 0 }

// isInt reports whether n has no fractional part (1.0 and 1e2 are integers).
func (n number) isInt() bool { return n.isZero() || n.exp >= 0 }

// digitString returns the significant digits (slow path only).
func (n number) digitString() string {
	if !n.small {
		return n.digits
	}
	return strconv.FormatUint(n.coef, 10)
}

func (n number) sign() int {
	switch {
	case n.isZero():
		return 0
	case n.neg:
		return -1
	}
	return 1
}

// equalNumber reports whether a and b are equal. Two small numbers are
// equal when their fields are: each has a single form (no trailing zeros
// in coef, zero never negative).
func equalNumber(a, b *number) bool {
	if a.small && b.small {
		return a.coef == b.coef && a.exp == b.exp && a.neg == b.neg
	}
	return cmpNumber(a, b) == 0
}

// cmpNumber compares a and b exactly: -1, 0 or +1.
func cmpNumber(a, b *number) int {
	if a.small && b.small && a.exp == b.exp && a.neg == b.neg {
		if a.neg {
			return cmp.Compare(b.coef, a.coef)
		}
		return cmp.Compare(a.coef, b.coef)
	}
	sa, sb := a.sign(), b.sign()
	if sa != sb || sa == 0 {
		return cmp.Compare(sa, sb)
	}
	return sa * cmpMagnitude(a, b)
}

// cmpMagnitude compares |a| and |b| for non-zero a and b.
func cmpMagnitude(a, b *number) int {
	if a.small && b.small { // the coefficient of the larger exponent scaled to the other's
		if a.exp < b.exp {
			return cmp.Compare(a.coef, scaleU(b.coef, b.exp-a.exp))
		}
		return cmp.Compare(scaleU(a.coef, a.exp-b.exp), b.coef)
	}
	// Compare the position of the leading digit, then the digits.
	da, db := a.digitString(), b.digitString()
	if c := cmp.Compare(a.exp+int64(len(da)), b.exp+int64(len(db))); c != 0 {
		return c
	}
	return strings.Compare(da, db) // same leading position: lexicographic order is numeric order
}

// scaleU returns c×10^k for k >= 0, or math.MaxUint64 past uint64: more
// than any coefficient (below 10^19).
func scaleU(c uint64, k int64) uint64 {
	if k >= int64(len(pow10)) || c > math.MaxUint64/pow10[k] {
		return math.MaxUint64
	}
	return c * pow10[k]
}

// isMultiple reports whether a is an integer multiple of d (d > 0) exactly:
// whether d's digits divide a's times 10^(a.exp-d.exp). Neither's digits end
// in a zero, so they never do for a negative power; a power of ten past 64
// (past 4 per digit for a longer d) adds nothing, every factor 2 and 5 of
// d's digits being covered.
func isMultiple(a, d *number) bool {
	k := a.exp - d.exp
	switch {
	case a.isZero():
		return true
	case k < 0:
		return false
	case !d.small: // big integers, bounded by the digit counts
		A, _ := new(big.Int).SetString(a.digitString(), 10)
		D, _ := new(big.Int).SetString(d.digits, 10)
		p := new(big.Int).Exp(big.NewInt(10), big.NewInt(min(k, 4*int64(len(d.digits))+4)), nil)
		return A.Rem(A.Mul(A, p), D).Sign() == 0
	}
	r := a.coef % d.coef
	if !a.small {
		r = digitsMod(a.digits, d.coef)
	}
	for k = min(k, 64); k > 0 && r != 0; k-- {
		r = mulmod10(r, d.coef)
	}
	return r == 0
}

// mulmod10 returns (r×10) mod m without overflow.
func mulmod10(r, m uint64) uint64 {
	if r <= math.MaxUint64/10 {
		return (r * 10) % m // one division, where Rem64 takes two
	}
	hi, lo := bits.Mul64(r, 10)
	return bits.Rem64(hi, lo, m)
}

// String renders n as a short decimal for messages.
func (n number) String() string {
	if n.isZero() {
		return "0"
	}
	sign, d := "", n.digitString()
	if n.neg {
		sign = "-"
	}
	point := int64(len(d)) + n.exp // digits before the decimal point
	switch {
	case n.exp >= 0 && n.exp <= 21:
		return sign + d + strings.Repeat("0", int(n.exp))
	case n.exp < 0 && point > 0:
		return sign + d[:point] + "." + d[point:]
	case n.exp < 0 && point >= -6:
		return sign + "0." + strings.Repeat("0", int(-point)) + d
	case len(d) > 1:
		d = d[:1] + "." + d[1:]
	}
	return sign + d + "e" + strconv.FormatInt(point-1, 10)
}

// toInt returns n as a non-negative int for length-like keywords, saturating
// at math.MaxInt. ok is false for negative or fractional values.
func (n number) toInt() (int, bool) {
	if !n.isInt() || n.neg {
		return 0, false
	}
	if !n.small {
		return math.MaxInt, true
	}
	return int(min(scaleU(n.coef, n.exp), math.MaxInt)), true
}

// digitsMod returns the value of the decimal digits modulo m, reducing one
// digit at a time: linear in their number, where big.Int's SetString is
// quadratic (three million digits took 15 s).
func digitsMod(digits string, m uint64) uint64 {
	var r uint64
	for i := 0; i < len(digits); i++ {
		x := mulmod10(r, m)
		s := x + uint64(digits[i]-'0')
		if s < x {
			// Wrapped past 2^64, so m > 2^64-10 and x+digit < 2m: one
			// subtraction of m (modulo 2^64) leaves the remainder.
			s -= m
		}
		r = s % m
	}
	return r
}

// parseAny is parseNumber for any literal, whose grammar jsonnum.Scan
// checks: the digits before and after the point make the coefficient, kept
// as a string past 19 significant ones.
func parseAny(s string, n *number) bool {
	if end, _, _, ok := jsonnum.Scan(s, 0); !ok || end != len(s) {
		return false
	}
	mant, e10 := strings.TrimPrefix(s, "-"), int64(0)
	if i := strings.IndexAny(mant, "eE"); i >= 0 {
		e, _ := strconv.ParseInt(mant[i+1:], 10, 64) // ±MaxInt64 past int64
		mant, e10 = mant[:i], max(-maxExp, min(e, maxExp))
	}
	whole, frac, _ := strings.Cut(mant, ".")
	all := strings.TrimLeft(whole+frac, "0")
	sig := strings.TrimRight(all, "0")
	exp := e10 - int64(len(frac)) + int64(len(all)-len(sig))
	switch {
	case sig == "":
		*n = number{small: true}
	case len(sig) > 19:
		*n = number{neg: s[0] == '-', digits: sig, exp: exp}
	default:
		coef, _ := strconv.ParseUint(sig, 10, 64)
		*n = number{neg: s[0] == '-', small: true, coef: coef, exp: exp}
	}
	return true
}
