package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// marshalVerdict encodes a record as the version 1 stores the migration
// tests build hold it, written out here so that a change to appendVerdict
// cannot pass unnoticed by changing both.
func marshalVerdict(v Verdict) ([]byte, error) {
	receipt := v.Receipt
	v.Receipt = nil
	fields, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := []byte{recordFormat}
	out = binary.AppendUvarint(out, uint64(len(fields)))
	out = append(out, fields...)
	return append(out, receipt...), nil
}

// checkRecord fails t unless appendVerdict writes v's record as a version
// 1 store holds it (marshalVerdict), or refuses what JSON cannot hold (a
// NaN or infinite ratio, a year past 9999) as marshalVerdict does, and
// unless the record reads back as v.
func checkRecord(t *testing.T, v Verdict) {
	t.Helper()
	want, wantErr := marshalVerdict(v)
	got, err := appendVerdict([]byte("spare bytes"), &v)
	if wantErr != nil {
		if err == nil {
			t.Fatalf("appendVerdict() = %q, want an error like %v", got, wantErr)
		}
		return
	}
	if err != nil {
		t.Fatalf("appendVerdict() error = %v, want the record %q", err, want)
	}
	if got = bytes.TrimPrefix(got, []byte("spare bytes")); !bytes.Equal(got, want) {
		t.Fatalf("appendVerdict() =\n%q\nwant\n%q", got, want)
	}
	back, err := decodeVerdict(got)
	if err != nil {
		t.Fatalf("decodeVerdict(appendVerdict()) error = %v", err)
	}
	// RFC 3339 has no seconds in a zone offset, so such a time comes back
	// that many seconds off.
	_, offset := v.VerifiedAt.Zone()
	if !back.VerifiedAt.Equal(v.VerifiedAt.Add(time.Duration(offset%60)*time.Second)) ||
		back.Overall != v.Overall || !bytes.Equal(back.Receipt, v.Receipt) {
		t.Fatalf("decodeVerdict(appendVerdict()) = %+v, want %+v", back, v)
	}
}

// TestVerdictRecordBytes pins one record byte for byte: the escaping of
// <, >, & and U+2028, invalid UTF-8 written as U+FFFD, a ratio in exponent
// form, nanoseconds, "receipt":null and the receipt appended verbatim.
// Stored records and the version 1 migration depend on these bytes.
func TestVerdictRecordBytes(t *testing.T) {
	v := testVerdict("a1b2c3d4-0000-4000-8000-000000000001", "seller-1", true, t0.Add(123456789))
	v.TaskID = "<task> & \u2028 \xff"
	v.Overall.Ratio = 1e-7
	const want = "\x01\xc7\x05" + `{"verification_id":"a1b2c3d4-0000-4000-8000-000000000001",` +
		`"task_id":"\u003ctask\u003e \u0026 \u2028 \ufffd","agent_id":"seller-1","result":"pass",` +
		`"output_hash":"0000000000000000000000000000000000000000000000000000000000000024",` +
		`"schema_hash":"0000000000000000000000000000000000000000000000000000000000000002",` +
		`"rules_hash":"0000000000000000000000000000000000000000000000000000000000000003",` +
		`"request_hash":"0000000000000000000000000000000000000000000000000000000000000004",` +
		`"schema_compliance":{"ratio":1,"passed":1,"total":1},"integrity_checks":{"ratio":1,"passed":1,"total":1},` +
		`"overall":{"ratio":1e-7,"passed":2,"total":2},"verified_at":"2026-10-01T01:01:09.730449789Z",` +
		`"key_version":"v1-2026-11a","receipt":null}` +
		`{"result":"pass","verification_id":"a1b2c3d4-0000-4000-8000-000000000001"}`
	got, err := appendVerdict(nil, &v)
	if err != nil || string(got) != want {
		t.Fatalf("appendVerdict() = %q, %v\nwant %q", got, err, want)
	}
}

func TestAppendVerdict(t *testing.T) {
	base := testVerdict("a1b2c3d4-0000-4000-8000-000000000001", "seller-1", true, t0)
	tests := []struct {
		name   string
		change func(*Verdict)
	}{
		{"server shape", func(*Verdict) {}},
		{"no agent, fail", func(v *Verdict) { *v = testVerdict("id", "", false, t0) }},
		{"html characters", func(v *Verdict) { v.TaskID = `<script>a && b > c</script>` }},
		{"quotes and backslashes", func(v *Verdict) { v.AgentID = `say "hi" \ bye\` }},
		{"short escapes", func(v *Verdict) { v.KeyVersion = "\b\f\n\r\t" }},
		{"other control characters", func(v *Verdict) { v.OutputHash = "\x00\x01\x1f\x7f" }},
		{"invalid utf-8", func(v *Verdict) { v.SchemaHash = "a\xffb\xc3(\xed\xa0\x80z\xf0\x9f\x98" }},
		{"line and paragraph separators", func(v *Verdict) { v.RulesHash = "x\u2028y\u2029z\u202a" }},
		{"multi-byte runes", func(v *Verdict) { v.RequestHash = "héllo, 世界 😀 \ufffd" }},
		{"empty strings", func(v *Verdict) { *v = Verdict{VerifiedAt: t0, Receipt: v.Receipt} }},
		{"small and large ratios", func(v *Verdict) {
			v.SchemaCompliance.Ratio, v.IntegrityChecks.Ratio, v.Overall.Ratio = 1e-7, 1e21, 123456789e-15
		}},
		{"negative and exponent ratios", func(v *Verdict) {
			v.SchemaCompliance.Ratio, v.IntegrityChecks.Ratio, v.Overall.Ratio = math.Copysign(0, -1), -5e-324, math.MaxFloat64
		}},
		{"a third", func(v *Verdict) { v.Overall = Ratio{Ratio: 1.0 / 3, Passed: 1, Total: 3} }},
		{"extreme counts", func(v *Verdict) { v.Overall.Passed, v.Overall.Total = math.MinInt64, math.MaxInt64 }},
		{"NaN ratio", func(v *Verdict) { v.Overall.Ratio = math.NaN() }},
		{"infinite ratio", func(v *Verdict) { v.IntegrityChecks.Ratio = math.Inf(-1) }},
		{"nanoseconds", func(v *Verdict) { v.VerifiedAt = t0.Add(123456789) }},
		{"zone offset", func(v *Verdict) { v.VerifiedAt = t0.In(time.FixedZone("", -(9*3600 + 30*60))) }},
		{"zone offset of 24 hours", func(v *Verdict) { v.VerifiedAt = t0.In(time.FixedZone("", 24*3600)) }},
		{"year 10000", func(v *Verdict) { v.VerifiedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }},
		{"fields over 16 KB", func(v *Verdict) { v.TaskID = strings.Repeat("<task>", 3000) }},
		{"no receipt", func(v *Verdict) { v.Receipt = nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := base
			tt.change(&v)
			checkRecord(t, v)
		})
	}
}

// FuzzEncodeVerdict: every verdict's record is the version 1 encoding of
// it and reads back as it, or is refused as JSON refuses it.
func FuzzEncodeVerdict(f *testing.F) {
	v := testVerdict("a1b2c3d4-0000-4000-8000-000000000001", "seller-1", true, t0)
	f.Add(v.VerificationID, v.TaskID, v.AgentID, v.Result, v.OutputHash, v.KeyVersion,
		math.Float64bits(v.Overall.Ratio), int64(v.Overall.Passed), int64(v.Overall.Total),
		t0.UnixNano(), int32(0), []byte(v.Receipt))
	f.Add("<&>", "\u2028\u2029", "\xff\xfe", "\x00\x1f\x7f", `"\`, "\b\f\n\r\t",
		math.Float64bits(1e-7), int64(-1), int64(math.MaxInt64), int64(math.MinInt64), int32(-3600), []byte(nil))
	f.Add("", "", "", "", "", "", math.Float64bits(math.NaN()), int64(0), int64(0), int64(0), int32(86400), []byte{})
	f.Fuzz(func(t *testing.T, id, task, agent, result, hash, keyVersion string, ratioBits uint64,
		passed, total, nanos int64, offset int32, receipt []byte) {
		ratio := math.Float64frombits(ratioBits)
		v := Verdict{
			VerificationID: id, TaskID: task, AgentID: agent, Result: result,
			OutputHash: hash, SchemaHash: task + hash, RulesHash: agent + keyVersion, RequestHash: id + result,
			SchemaCompliance: Ratio{Ratio: -ratio, Passed: int(total), Total: int(passed)},
			IntegrityChecks:  Ratio{Ratio: ratio / 3, Passed: int(passed ^ total), Total: int(nanos)},
			Overall:          Ratio{Ratio: ratio, Passed: int(passed), Total: int(total)},
			VerifiedAt:       time.Unix(0, nanos).In(time.FixedZone("", int(offset))),
			KeyVersion:       keyVersion,
			Receipt:          receipt,
		}
		checkRecord(t, v)
	})
}
