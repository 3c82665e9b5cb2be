package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

func TestRecord(t *testing.T) {
	svc := testkit.QuietService(t, true)
	ctx := context.Background()
	day := 24 * time.Hour
	start := time.Date(2026, 10, 1, 1, 1, 9, 606993000, time.UTC)
	// Three verdicts a day apart, then read the record ten days later.
	for i, name := range []string{"invoice-fail.json", "invoice-pass.json", "invoice-pass.json"} {
		at := start.Add(time.Duration(i) * day)
		svc.Now = func() time.Time { return at }
		if _, err := svc.Verify(ctx, testkit.ReadTestdata(t, name)); err != nil {
			t.Fatal(err)
		}
	}
	now := start.Add(12 * day)
	svc.Now = func() time.Time { return now }
	signed, err := svc.Record(ctx, "seller-7")
	if err != nil {
		t.Fatal(err)
	}
	var rec tools.TrustRecord
	if err := json.Unmarshal(signed, &rec); err != nil {
		t.Fatal(err)
	}
	sc, err := svc.Store.Score(ctx, "seller-7", now)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Score != tools.RoundScore(sc.Score) || rec.Interval.Lower != tools.RoundScore(sc.Interval[0]) || rec.Interval.Upper != tools.RoundScore(sc.Interval[1]) {
		t.Errorf("record score %v interval %+v, want the store's %v %v", rec.Score, rec.Interval, sc.Score, sc.Interval)
	}
	if rec.Score <= 0 || rec.Score >= 100 || rec.Interval.Lower != rec.Score || rec.Interval.Upper <= rec.Score || rec.Interval.Confidence != store.Confidence {
		t.Errorf("record score %v interval %+v: want 0 < score = lower < upper, confidence 0.95", rec.Score, rec.Interval)
	}
	wantInputs := tools.RecordInputs{
		Total: 3, Passed: 2, Failed: 1, PassRate: tools.RoundScore(2.0 / 3),
		RecencyWeightedPassRate: tools.RoundScore(sc.Inputs.RecencyWeightedPassRate),
		WeightedPassed:          tools.RoundScore(sc.Inputs.WeightedPassed), WeightedFailed: tools.RoundScore(sc.Inputs.WeightedFailed),
		EffectiveN: tools.RoundScore(sc.Inputs.EffectiveN), HalfLifeDays: 30, Z: store.Z,
		FirstSeen: ptr("2026-10-01T01:01:09.606993+00:00"), LastSeen: ptr("2026-10-03T01:01:09.606993+00:00"),
		EvaluatedAt: "2026-10-13T01:01:09.606993+00:00",
	}
	if diff := cmp.Diff(wantInputs, rec.Inputs); diff != "" {
		t.Errorf("inputs (-want +got):\n%s", diff)
	}
	if rec.VerifiedAt != "2026-10-13T01:01:09.606993+00:00" || rec.Formula != store.Formula || rec.VerifierVersion != "test" {
		t.Errorf("verified_at %q formula %q version %q", rec.VerifiedAt, rec.Formula, rec.VerifierVersion)
	}
	if len(rec.RecentVerdicts) != 3 || rec.RecentVerdicts[0].Result != "pass" || rec.RecentVerdicts[2].Result != "fail" ||
		rec.RecentVerdicts[0].VerifiedAt != "2026-10-03T01:01:09.606993+00:00" {
		t.Errorf("recent verdicts = %+v, want 3, newest first", rec.RecentVerdicts)
	}
	if rec.Verify.KeyVersion != svc.Keys.Current().KeyVersion() || rec.Verify.Canonicalization != engine.Canonicalization {
		t.Errorf("verify block = %+v", rec.Verify)
	}
	report, err := signing.VerifyReceipt(signed, svc.Keys)
	if err != nil || report.Context != signing.ContextTrustScore {
		t.Fatalf("record does not verify under the trust-score context: %v", err)
	}
	// Changing any signed member breaks the signature.
	scoreText, _ := json.Marshal(rec.Score)
	for _, swap := range [][2]string{
		{`"agent_id":"seller-7"`, `"agent_id":"seller-8"`},
		{`"has_history":true`, `"has_history":false`},
		{`"score":` + string(scoreText), `"score":99`},
		{`"total":3`, `"total":4`},
		{`"result":"fail"`, `"result":"pass"`},
	} {
		tampered := strings.Replace(string(signed), swap[0], swap[1], 1)
		if tampered == string(signed) {
			t.Fatalf("record has no %s", swap[0])
		}
		if _, err := signing.VerifyReceipt([]byte(tampered), svc.Keys); !errors.Is(err, signing.ErrBadSignature) {
			t.Errorf("record with %s verifies: %v", swap[1], err)
		}
	}
}

func ptr(s string) *string { return &s }

func TestRecordNoHistory(t *testing.T) {
	svc := testkit.QuietService(t, true)
	signed, err := svc.Record(context.Background(), "never-seen")
	if err != nil {
		t.Fatal(err)
	}
	var rec tools.TrustRecord
	if err := json.Unmarshal(signed, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.HasHistory || rec.Score != 0 || rec.Interval.Lower != 0 || rec.Interval.Upper != 100 ||
		rec.Inputs.FirstSeen != nil || len(rec.RecentVerdicts) != 0 || !strings.Contains(rec.Message, "No verdicts") {
		t.Errorf("record of an unknown agent = %+v", rec)
	}
	// null first/last seen and an empty list, not missing members.
	for _, want := range []string{`"first_seen":null`, `"last_seen":null`, `"recent_verdicts":[]`} {
		if !strings.Contains(string(signed), want) {
			t.Errorf("record lacks %s: %s", want, signed)
		}
	}
	if _, err := signing.VerifyReceipt(signed, svc.Keys); err != nil {
		t.Errorf("record does not verify: %v", err)
	}
}

func TestRecordInvalidAgentID(t *testing.T) {
	svc := testkit.QuietService(t, true)
	tests := []struct{ name, id string }{
		{"empty", ""},
		{"too long", strings.Repeat("a", tools.MaxAgentIDChars+1)},
		{"invalid UTF-8", "a\xffb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := svc.Record(context.Background(), tt.id)
			var e *tools.Error
			if !errors.As(err, &e) || e.Status != 422 || len(e.Fields) != 1 || e.Fields[0].Field != "agent_id" {
				t.Fatalf("Record(%q) error = %v, want a 422 on agent_id", tt.id, err)
			}
		})
	}
	long := strings.Repeat("é", tools.MaxAgentIDChars) // 200 characters, 400 bytes
	if _, err := svc.Record(context.Background(), long); err != nil {
		t.Errorf("Record(200 characters) = %v, want a record", err)
	}
}
