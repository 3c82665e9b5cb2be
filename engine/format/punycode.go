package format

import (
	"math"
	"strings"
	"unicode"
)

// Punycode (RFC 3492) parameters.
const (
	punyBase        = 36
	punyTMin        = 1
	punyTMax        = 26
	punySkew        = 38
	punyDamp        = 700
	punyInitialBias = 72
	punyInitialN    = 128
	punyMaxInt      = math.MaxInt32
)

// punyDecode decodes the part of an A-label after "xn--". It fails on
// malformed input and on overflow, never panics.
func punyDecode(s string) ([]rune, bool) {
	var out []rune
	pos := 0
	if d := strings.LastIndexByte(s, '-'); d >= 0 {
		for i := 0; i < d; i++ {
			if s[i] >= 0x80 {
				return nil, false
			}
			out = append(out, rune(s[i]))
		}
		pos = d + 1
	}
	n, bias, i := punyInitialN, punyInitialBias, 0
	for pos < len(s) {
		oldi, w := i, 1
		for k := punyBase; ; k += punyBase {
			if pos >= len(s) {
				return nil, false
			}
			digit := punyDigitValue(s[pos])
			pos++
			if digit < 0 || digit > (punyMaxInt-i)/w {
				return nil, false
			}
			i += digit * w
			t := punyThreshold(k, bias)
			if digit < t {
				break
			}
			if w > punyMaxInt/(punyBase-t) {
				return nil, false
			}
			w *= punyBase - t
		}
		size := len(out) + 1
		bias = punyAdapt(i-oldi, size, oldi == 0)
		if i/size > punyMaxInt-n {
			return nil, false
		}
		n += i / size
		i %= size
		if n > unicode.MaxRune || n >= 0xd800 && n <= 0xdfff {
			return nil, false
		}
		out = append(out, 0)
		copy(out[i+1:], out[i:])
		out[i] = rune(n)
		i++
	}
	return out, true
}

// punyEncode encodes a label as Punycode, without the "xn--" prefix.
func punyEncode(input []rune) (string, bool) {
	var out []byte
	for _, r := range input {
		if r < 0x80 {
			out = append(out, byte(r))
		}
	}
	basic := len(out)
	handled := basic
	if basic > 0 {
		out = append(out, '-')
	}
	n, delta, bias := punyInitialN, 0, punyInitialBias
	for handled < len(input) {
		m := punyMaxInt
		for _, r := range input {
			if int(r) >= n && int(r) < m {
				m = int(r)
			}
		}
		if m-n > (punyMaxInt-delta)/(handled+1) {
			return "", false
		}
		delta += (m - n) * (handled + 1)
		n = m
		for _, r := range input {
			if int(r) < n {
				if delta++; delta == punyMaxInt {
					return "", false
				}
			}
			if int(r) != n {
				continue
			}
			q := delta
			for k := punyBase; ; k += punyBase {
				t := punyThreshold(k, bias)
				if q < t {
					break
				}
				out = append(out, punyDigit(t+(q-t)%(punyBase-t)))
				q = (q - t) / (punyBase - t)
			}
			out = append(out, punyDigit(q))
			bias = punyAdapt(delta, handled+1, handled == basic)
			delta = 0
			handled++
		}
		delta++
		n++
	}
	return string(out), true
}

func punyThreshold(k, bias int) int {
	return min(max(k-bias, punyTMin), punyTMax)
}

func punyAdapt(delta, numPoints int, first bool) int {
	if first {
		delta /= punyDamp
	} else {
		delta /= 2
	}
	delta += delta / numPoints
	k := 0
	for delta > ((punyBase-punyTMin)*punyTMax)/2 {
		delta /= punyBase - punyTMin
		k += punyBase
	}
	return k + (punyBase-punyTMin+1)*delta/(delta+punySkew)
}

func punyDigitValue(c byte) int {
	switch {
	case c >= 'a' && c <= 'z':
		return int(c - 'a')
	case c >= 'A' && c <= 'Z':
		return int(c - 'A')
	case c >= '0' && c <= '9':
		return int(c-'0') + 26
	}
	return -1
}

func punyDigit(d int) byte {
	if d < 26 {
		return byte('a' + d)
	}
	return byte('0' + d - 26)
}
