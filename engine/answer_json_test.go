package engine

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/signing"
)

// checkAnswerEncoding fails unless Marshal gives exactly encoding/json's
// bytes and MarshalCanonical exactly the RFC 8785 form of them.
func checkAnswerEncoding(t *testing.T, a *Answer) {
	t.Helper()
	want, wantErr := MarshalJSON(a)
	got, err := a.Marshal()
	if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
		t.Fatalf("Marshal = %s, %v\nencoding/json gives %s, %v", got, err, want, wantErr)
	}
	canonical, err := a.MarshalCanonical()
	if wantErr != nil {
		if err == nil {
			t.Fatalf("MarshalCanonical = %s, want an error as encoding/json gives (%v)", canonical, wantErr)
		}
		return
	}
	wantCanonical, err2 := signing.Canonicalize(want)
	if err != nil || err2 != nil || !bytes.Equal(canonical, wantCanonical) {
		t.Fatalf("MarshalCanonical = %s, %v\nwant %s, %v", canonical, err, wantCanonical, err2)
	}
}

// testAnswer builds an answer with every list and pointer filled or not,
// from a few strings and numbers.
func testAnswer(s1, s2 string, n int, ratio float64, detail string, pass bool) *Answer {
	v := New(nil)
	agent := s2
	req := &Request{TaskID: s1, AgentID: &agent, Detail: detail, EnforceRules: n%2 == 0, StrictContentCheck: n%3 == 0}
	if n%5 == 0 {
		req.AgentID = nil
	}
	out := &Outcome{Pass: pass, Schema: NewRatio(n%7, 7), Integrity: Ratio{Ratio: ratio, Passed: n, Total: -n}, Overall: NewRatio(0, 0)}
	for i := 0; i < n%60; i++ {
		f := Finding{Source: SourceSchema, Check: "schema:" + s1, Path: "$." + s2, Expected: s2, Found: s1, Message: s1 + s2, Gate: GateSchema, Blocking: i%2 == 0}
		if i%3 == 0 {
			f.Source, f.Gate = SourceIntegrity, GateContent
		}
		out.Findings = append(out.Findings, f)
	}
	meta := AnswerMeta{
		VerificationID: s2, VerifiedAt: time.Date(2026, 11, 30, 1, 2, 3, 4000, time.UTC), Version: s1,
		Hashes: Hashes{Output: s1, Schema: s2, Rules: s1, Request: s2},
		Verify: VerifyBlock{PublicKeyURL: s1, PublicKey: s2, KeyVersion: s2, Service: s1, MCP: s2},
	}
	a := v.NewAnswer(req, out, meta)
	if n%4 == 0 {
		a.NextActions = append(a.NextActions, NextAction{Action: s1, Fields: []string{s2, s1}})
	}
	return a
}

var answerStrings = []string{
	"", "plain", "é<>&", "\u2028\u2029", "\x00\x01\x1f\x7f", "\b\f\n\r\t\"\\/", "\xff\xfeinvalid\xc3", "\ud7ff\ue000\U0001F600",
	"\xed\xa0\x80", "\xef\xbf\xbd",
}

func TestAnswerEncoding(t *testing.T) {
	for _, s1 := range answerStrings {
		for i, s2 := range answerStrings {
			for _, detail := range []string{DetailFull, DetailCompact} {
				checkAnswerEncoding(t, testAnswer(s1, s2, i*7, float64(i)/3, detail, i%2 == 0))
			}
		}
	}
	for _, ratio := range []float64{0, math.Copysign(0, -1), 1, 0.966667, 1e-7, 1e21, 123456789.125, 5e-324, -2.5, math.NaN(), math.Inf(1)} {
		a := testAnswer("a", "b", 8, ratio, DetailFull, false)
		a.IntegrityChecks = &Ratio{Ratio: ratio}
		checkAnswerEncoding(t, a)
	}
	checkAnswerEncoding(t, &Answer{})
}

// FuzzAnswerEncoding: for any strings and numbers, Marshal is
// encoding/json's encoding and MarshalCanonical its RFC 8785 form.
func FuzzAnswerEncoding(f *testing.F) {
	for i, s := range answerStrings {
		f.Add(s, answerStrings[(i+3)%len(answerStrings)], i*11, float64(i)/7, i%2 == 0, i%3 == 0)
	}
	f.Fuzz(func(t *testing.T, s1, s2 string, n int, ratio float64, full, pass bool) {
		detail := DetailCompact
		if full {
			detail = DetailFull
		}
		if n < 0 {
			n = -n
		}
		checkAnswerEncoding(t, testAnswer(s1, s2, n%1000, ratio, detail, pass))
	})
}

// FuzzFormatVerifiedAt: formatVerifiedAt is time.Time.Format with
// VerifiedAtLayout, for any instant and zone.
func FuzzFormatVerifiedAt(f *testing.F) {
	for _, t := range []time.Time{
		time.Date(2026, 11, 30, 1, 2, 3, 4000, time.UTC), time.Date(2026, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 1, time.UTC), {},
	} {
		f.Add(t.Unix(), int64(t.Nanosecond()), 0)
	}
	f.Add(int64(1796000000), int64(123456789), 5*3600+1800)
	f.Fuzz(func(t *testing.T, sec, nsec int64, offset int) {
		at := time.Unix(sec, nsec).In(time.FixedZone("z", offset%(26*3600)))
		if got, want := formatVerifiedAt(at), at.UTC().Format(VerifiedAtLayout); got != want {
			t.Fatalf("formatVerifiedAt(%v) = %q, want %q", at, got, want)
		}
	})
}
