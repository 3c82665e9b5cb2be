package store

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"

	"github.com/verifier-dev/verifier/internal/ijson"
)

// appendVerdictFields appends the JSON of v without its receipt — the bytes
// json.Marshal wrote for it before, "receipt":null included, so that stored
// records, the version 1 migration and the goldens stay as they are
// (FuzzEncodeVerdict compares the two). Like json.Marshal it escapes <, >
// and &, writes invalid UTF-8 as \ufffd and U+2028 and U+2029 as escapes,
// and refuses NaN and infinite ratios with a *json.UnsupportedValueError.
func appendVerdictFields(dst []byte, v *Verdict) ([]byte, error) {
	dst = append(dst, `{"verification_id":`...)
	dst = ijson.AppendMarshalString(dst, v.VerificationID)
	dst = append(dst, `,"task_id":`...)
	dst = ijson.AppendMarshalString(dst, v.TaskID)
	dst = append(dst, `,"agent_id":`...)
	dst = ijson.AppendMarshalString(dst, v.AgentID)
	dst = append(dst, `,"result":`...)
	dst = ijson.AppendMarshalString(dst, v.Result)
	dst = append(dst, `,"output_hash":`...)
	dst = ijson.AppendMarshalString(dst, v.OutputHash)
	dst = append(dst, `,"schema_hash":`...)
	dst = ijson.AppendMarshalString(dst, v.SchemaHash)
	dst = append(dst, `,"rules_hash":`...)
	dst = ijson.AppendMarshalString(dst, v.RulesHash)
	dst = append(dst, `,"request_hash":`...)
	dst = ijson.AppendMarshalString(dst, v.RequestHash)
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
	dst = ijson.AppendMarshalString(dst, v.KeyVersion)
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
