package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// marshalVerdict is how records were encoded before appendVerdict, with
// json.Marshal: the reference appendVerdict must match byte for byte, and
// the encoder of the version 1 stores the migration tests build.
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

// checkSameRecord fails t unless appendVerdict and marshalVerdict agree on
// v: the same bytes, or both an error (the same one for a ratio JSON
// cannot hold).
func checkSameRecord(t *testing.T, v Verdict) {
	t.Helper()
	want, wantErr := marshalVerdict(v)
	got, err := appendVerdict([]byte("spare bytes"), &v)
	if wantErr != nil {
		var want *json.UnsupportedValueError
		switch {
		case err == nil:
			t.Fatalf("appendVerdict() = %q, want an error like json.Marshal's %v", got, wantErr)
		case errors.As(wantErr, &want) && err.Error() != wantErr.Error():
			t.Fatalf("appendVerdict() error = %v, want %v", err, wantErr)
		}
		return
	}
	if err != nil {
		t.Fatalf("appendVerdict() error = %v, json.Marshal's record is %q", err, want)
	}
	if got = bytes.TrimPrefix(got, []byte("spare bytes")); !bytes.Equal(got, want) {
		t.Fatalf("appendVerdict() =\n%q\nwant (json.Marshal)\n%q", got, want)
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
			checkSameRecord(t, v)
		})
	}
}

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
		checkSameRecord(t, v)
	})
}

// BenchmarkEncodeVerdict encodes the server's record (a receipt of about
// 1.2 KB) with appendVerdict into a reused buffer, as PutVerdict does, and
// with json.Marshal, as it did before.
func BenchmarkEncodeVerdict(b *testing.B) {
	v := testVerdict("c0a8012e-5f3b-4d7a-8e21-94b6d3f0a7c5", "seller-1", true, t0.Add(123456789))
	v.Receipt = json.RawMessage(`{"verification_id":"c0a8012e-5f3b-4d7a-8e21-94b6d3f0a7c5","signature":"` +
		strings.Repeat("x", 1200) + `"}`)
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			var err error
			if buf, err = appendVerdict(buf[:0], &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := marshalVerdict(v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
