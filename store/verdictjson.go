package store

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"unicode/utf8"
)

// appendVerdictFields appends the JSON of v without its receipt — the bytes
// json.Marshal wrote for it before, "receipt":null included, so that stored
// records, the version 1 migration and the goldens stay as they are
// (FuzzEncodeVerdict compares the two). Like json.Marshal it escapes <, >
// and &, writes invalid UTF-8 as \ufffd and U+2028 and U+2029 as escapes,
// and refuses NaN and infinite ratios with a *json.UnsupportedValueError.
func appendVerdictFields(dst []byte, v *Verdict) ([]byte, error) {
	dst = append(dst, `{"verification_id":`...)
	dst = appendJSONString(dst, v.VerificationID)
	dst = append(dst, `,"task_id":`...)
	dst = appendJSONString(dst, v.TaskID)
	dst = append(dst, `,"agent_id":`...)
	dst = appendJSONString(dst, v.AgentID)
	dst = append(dst, `,"result":`...)
	dst = appendJSONString(dst, v.Result)
	dst = append(dst, `,"output_hash":`...)
	dst = appendJSONString(dst, v.OutputHash)
	dst = append(dst, `,"schema_hash":`...)
	dst = appendJSONString(dst, v.SchemaHash)
	dst = append(dst, `,"rules_hash":`...)
	dst = appendJSONString(dst, v.RulesHash)
	dst = append(dst, `,"request_hash":`...)
	dst = appendJSONString(dst, v.RequestHash)
	var err error
	dst = append(dst, `,"schema_compliance":`...)
	if dst, err = appendRatio(dst, v.SchemaCompliance); err != nil {
		return nil, err
	}
	dst = append(dst, `,"integrity_checks":`...)
	if dst, err = appendRatio(dst, v.IntegrityChecks); err != nil {
		return nil, err
	}
	dst = append(dst, `,"overall":`...)
	if dst, err = appendRatio(dst, v.Overall); err != nil {
		return nil, err
	}
	// time.Time's MarshalJSON is its AppendText (RFC 3339 with nanoseconds,
	// refusing years outside [0, 9999]) in quotes.
	dst = append(dst, `,"verified_at":"`...)
	if dst, err = v.VerifiedAt.AppendText(dst); err != nil {
		return nil, err
	}
	dst = append(dst, `","key_version":`...)
	dst = appendJSONString(dst, v.KeyVersion)
	return append(dst, `,"receipt":null}`...), nil
}

func appendRatio(dst []byte, r Ratio) ([]byte, error) {
	dst = append(dst, `{"ratio":`...)
	dst, err := appendJSONFloat(dst, r.Ratio)
	if err != nil {
		return nil, err
	}
	dst = append(dst, `,"passed":`...)
	dst = strconv.AppendInt(dst, int64(r.Passed), 10)
	dst = append(dst, `,"total":`...)
	dst = strconv.AppendInt(dst, int64(r.Total), 10)
	return append(dst, '}'), nil
}

// appendJSONFloat appends f as encoding/json writes a float64: the shortest
// decimal that reads back as f, in exponent form below 1e-6 and from 1e21
// on, with a one-digit negative exponent unpadded.
func appendJSONFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, &json.UnsupportedValueError{Value: reflect.ValueOf(f), Str: strconv.FormatFloat(f, 'g', -1, 64)}
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-07 becomes e-7
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, nil
}

// htmlSafe holds the ASCII bytes encoding/json writes as they are when it
// escapes HTML: the printable ones but '"', '\\', '<', '>' and '&'.
var htmlSafe = func() (t [utf8.RuneSelf]bool) {
	for c := byte(0x20); c < utf8.RuneSelf-1; c++ { // 0x7f is printable to JSON
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	t[utf8.RuneSelf-1] = true
	return t
}()

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string exactly as json.Marshal
// writes a Go string (HTML escaping on).
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if htmlSafe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default: // other control characters, '<', '>' and '&'
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
