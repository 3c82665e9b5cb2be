package signing

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/verifier-dev/verifier/internal/jsonnum"
)

// checkExact walks raw, valid I-JSON, and refuses the two ways a signature
// over its JCS form could cover something other than what a reader sees:
//
//   - a number whose literal is not exactly the float64 JCS signs
//     (9007199254740993 signs as …992, 1e-400 as 0, 0.1000000000000000000001
//     as 0.1); 1.0 and 1e0 are exact and pass;
//   - an object with two keys equal under Unicode case folding ("to" and
//     "TO"), which encoding/json's case-insensitive matching would let a
//     reordering of the receipt choose between.
//
// raw has been canonicalized, so encoding/json reads it as sent: no
// duplicate names, no invalid UTF-8. Members are checked in name order, so
// the problem reported is the same every time.
func checkExact(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("reading receipt: %w", err)
	}
	return exactValue(v)
}

// exactValue is checkExact for a decoded value.
func exactValue(v any) error {
	switch v := v.(type) {
	case map[string]any:
		folded := make(map[string]bool, len(v))
		for _, k := range slices.Sorted(maps.Keys(v)) {
			f := foldKey(k)
			if folded[f] {
				return fmt.Errorf("an object has two keys equal under case folding, one of them %s", brief(k))
			}
			folded[f] = true
			if err := exactValue(v[k]); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range v {
			if err := exactValue(e); err != nil {
				return err
			}
		}
	case json.Number:
		if !exactNumber(string(v)) {
			return fmt.Errorf("number %s is not exactly representable as a float64, so the signature covers a different value", brief(string(v)))
		}
	}
	return nil
}

// foldKey maps s to a form equal for exactly the strings strings.EqualFold
// calls equal: each rune becomes the smallest rune of its case-folding orbit.
func foldKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		b.WriteRune(m)
	}
	return b.String()
}

// exactNumber reports whether the JSON number literal lit denotes exactly the
// float64 it parses to (its shortest round-trip text is the same decimal).
func exactNumber(lit string) bool {
	f, err := jsonnum.ParseFloat(lit)
	if err != nil {
		return false
	}
	neg, digits, exp, ok := jsonnum.Decimal(lit, nil)
	fneg, fdigits, fexp, fok := jsonnum.Decimal(strconv.FormatFloat(f, 'e', -1, 64), nil)
	return ok && fok && neg == fneg && bytes.Equal(digits, fdigits) && exp == fexp
}
