package engine

import (
	"math"
	"strings"
	"testing"
	"time"
)

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
		out.add(f)
	}
	meta := AnswerMeta{
		VerificationID: s2, VerifiedAt: time.Date(2026, 11, 30, 1, 2, 3, 4000, time.FixedZone("z", 3600)), Version: s1,
		Hashes: Hashes{Output: s1, Schema: s2, Rules: s1, Request: s2},
		Verify: VerifyBlock{PublicKeyURL: s1, PublicKey: s2, KeyVersion: s2, Service: s1, MCP: s2},
	}
	a := v.NewAnswer(req, out, meta)
	if n%4 == 0 {
		a.NextActions = append(a.NextActions, NextAction{Action: s1, Fields: []string{s2, s1}})
	}
	return a
}

// TestAnswerMarshal pins what the wire form does with awkward values: HTML
// characters and U+2028 as they are or escaped as encoding/json escapes
// them without HTML escaping, invalid UTF-8 as U+FFFD, verified_at in UTC
// with microseconds, and a ratio that is not finite refused.
func TestAnswerMarshal(t *testing.T) {
	tests := []struct {
		name   string
		answer *Answer
		want   []string // substrings of the encoding
		err    bool
	}{
		{"html", testAnswer("a<b>&c", "x", 1, 0.5, DetailFull, true), []string{`"task_id":"a<b>&c"`}, false},
		{"line separators", testAnswer("\u2028\u2029", "x", 1, 0.5, DetailFull, true), []string{`"task_id":"\u2028\u2029"`}, false},
		{"invalid UTF-8", testAnswer("\xff", "x", 1, 0.5, DetailFull, true), []string{`"task_id":"\ufffd"`}, false},
		{"controls", testAnswer("\x00\n\"\\", "x", 1, 0.5, DetailFull, true), []string{`"task_id":"\u0000\n\"\\"`}, false},
		{"verified_at", testAnswer("a", "x", 1, 0.5, DetailCompact, true), []string{`"verified_at":"2026-11-30T00:02:03.000004+00:00"`}, false},
		{"ratio", testAnswer("a", "x", 1, 1e-7, DetailFull, true), []string{`"integrity_checks":{"ratio":1e-7,"passed":1,"total":-1}`}, false},
		{"NaN", testAnswer("a", "x", 1, math.NaN(), DetailFull, true), nil, true},
		{"infinity", testAnswer("a", "x", 1, math.Inf(1), DetailFull, true), nil, true},
		{"NaN compact", testAnswer("a", "x", 1, math.NaN(), DetailCompact, true), []string{`"result":"pass"`}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.answer.Marshal()
			if (err != nil) != tt.err {
				t.Fatalf("Marshal = %s, %v; want error %v", got, err, tt.err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(got), w) {
					t.Errorf("Marshal = %s\nwant it to hold %s", got, w)
				}
			}
		})
	}
}
