// Package ijson is the verifier's JSON toolkit: one scanner that decodes
// I-JSON (RFC 7493) strictly into plain Go values (Decode, DecodeMembers),
// splits an object into its members as sent (SplitMembers),
// only checks it, or writes a text's RFC 8785 canonical form
// (Canonicalizer); with the one string escaper (AppendCanonicalString) and
// the one encoder without HTML escaping (Marshal); numbers are read by
// jsonnum's grammar. gowebpki/jcs and jsontext are the
// references the tests hold it to.
//
// encoding/json accepts duplicate object names (the last wins), replaces
// invalid UTF-8 with U+FFFD and reads integers beyond 2^53 that a canonical
// form would round. Each of those lets two different documents share one
// signature, so this decoder rejects them all, and rejects nesting deeper than
// a limit before it recurses into it.
//
// Decoded values are map[string]any, []any, string, bool, nil and
// json.Number, the number's text exactly as sent.
//
//	v, err := ijson.Decode([]byte(`{"total": 135.5}`), nil)
package ijson

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/verifier-dev/verifier/internal/jsonnum"
)

// DefaultMaxDepth is the nesting limit used when Options.MaxDepth is zero.
const DefaultMaxDepth = 128

// maxSafeInteger is 2^53, past which float64 no longer holds every integer.
const maxSafeInteger = 1 << 53

// Options tunes Decode. The zero value means the documented defaults.
type Options struct {
	// MaxDepth is the deepest nesting of arrays and objects accepted;
	// DefaultMaxDepth when zero, and at most MaxCanonicalDepth.
	MaxDepth int
}

// Problem kinds reported by Error.
var (
	ErrSyntax    = errors.New("is not valid JSON")
	ErrDuplicate = errors.New("has a duplicate object key")
	ErrUTF8      = errors.New("contains invalid UTF-8 or a lone surrogate")
	ErrNumber    = errors.New("has a number outside the I-JSON range")
	ErrDepth     = errors.New("is nested too deeply")
	ErrTrailing  = errors.New("has data after the JSON value")
)

// Error is a decoding failure. It names where it happened by byte offset
// only: a JSON Pointer would quote the caller's keys.
type Error struct {
	Kind   error // one of the Err… values
	Offset int64 // byte offset in the input
	Limit  int   // the depth limit, for ErrDepth
}

func (e *Error) Error() string {
	where := fmt.Sprintf("at byte %d", e.Offset)
	if e.Kind == ErrDepth {
		return fmt.Sprintf("document %s %s: the limit is %d levels", e.Kind, where, e.Limit)
	}
	return fmt.Sprintf("document %s %s", e.Kind, where)
}

// Unwrap returns the problem kind.
func (e *Error) Unwrap() error { return e.Kind }

// Fix says in one sentence how a caller repairs the document.
func (e *Error) Fix() string {
	switch e.Kind {
	case ErrDuplicate:
		return "Send each object key once (I-JSON, RFC 7493)."
	case ErrUTF8:
		return "Send valid UTF-8; write characters outside the BMP as a surrogate pair, never a lone surrogate."
	case ErrNumber:
		return "Send finite numbers within IEEE-754 double range; send integers beyond ±2^53 (9007199254740992) as strings."
	case ErrDepth:
		return fmt.Sprintf("Nest arrays and objects at most %d levels deep.", e.Limit)
	case ErrTrailing:
		return "Send exactly one JSON value, with nothing after it."
	default:
		return "Send a single well-formed JSON value (RFC 8259)."
	}
}

// Decode parses data as one I-JSON value.
func Decode(data []byte, opts *Options) (any, error) {
	d := scanner{in: data, maxDepth: maxDepthOf(opts)}
	return d.scanWhole()
}

// Check reports the error Decode would return for data, without building
// its value.
func Check(data []byte, opts *Options) error {
	d := scanner{in: data, maxDepth: maxDepthOf(opts), mode: modeCheck}
	_, err := d.scanWhole()
	return err
}

// checkNumber enforces the I-JSON number profile: finite in IEEE-754 double,
// no non-zero literal that underflows to zero, and integer literals within
// ±2^53 so the canonical form cannot round them onto a neighbour.
func checkNumber(text string) error {
	// A literal in the subnormal range is finite and not an integer
	// literal; whether it underflows is decided on its digits, without the
	// multiprecision conversion such literals need.
	if zero, decided := jsonnum.TinyIsZero(text); decided {
		if zero && !isZeroLiteral(text) {
			return ErrNumber
		}
		return nil
	}
	f, err := jsonnum.ParseFloat(text)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return ErrNumber
	}
	if f == 0 && !isZeroLiteral(text) {
		return ErrNumber
	}
	if !strings.ContainsAny(text, ".eE") {
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil || n > maxSafeInteger || n < -maxSafeInteger {
			return ErrNumber
		}
	}
	return nil
}

// isZeroLiteral reports whether the mantissa of a JSON number is all zeros.
func isZeroLiteral(text string) bool {
	if e := strings.IndexAny(text, "eE"); e >= 0 {
		text = text[:e]
	}
	return strings.Trim(text, "-0.") == ""
}
