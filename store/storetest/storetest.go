// Package storetest is the conformance suite of [store.Store]: one set of
// tests that every backend must pass, so that an operation means the same on
// bbolt and on PostgreSQL. Each backend's tests call [Run] with a function
// that opens a new, empty store for a test:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return openEmpty(t) })
//	}
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/verifier-dev/verifier/store"
)

// Open returns a new, empty store for the test, closed when the test ends.
type Open func(t *testing.T) store.Store

// T0 is the start of every scripted history.
var T0 = time.Date(2026, 10, 1, 1, 1, 9, 606993000, time.UTC)

// Run runs the conformance suite against the stores open makes.
func Run(t *testing.T, open Open) {
	tests := []struct {
		name string
		fn   func(*testing.T, Open)
	}{
		{"VerdictsByID", testVerdictsByID},
		{"ReputationPages", testReputationPages},
		{"ReputationRefusals", testReputationRefusals},
		{"ScoreInputs", testScoreInputs},
		{"TestAgentsExcluded", testAgentsExcluded},
		{"Allowance", testAllowance},
		{"AllowanceHolds", testAllowanceHolds},
		{"AllowanceConcurrent", testAllowanceConcurrent},
		{"Payments", testPayments},
		{"PaymentsConcurrent", testPaymentsConcurrent},
		{"ConcurrentVerdictsOneAgent", testConcurrentVerdicts},
		{"Check", testCheck},
		{"LogEveryStoredVerdict", testLogEveryStoredVerdict},
		{"LogTilesAndEntries", testLogTilesAndEntries},
		{"LogReceipts", testLogReceipts},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open) })
	}
}

// Verdict builds a complete verdict whose receipt mentions its id.
func Verdict(id, agent string, pass bool, at time.Time) store.Verdict {
	result, overall := store.ResultFail, store.Ratio{Ratio: 0.5, Passed: 1, Total: 2}
	if pass {
		result, overall = store.ResultPass, store.Ratio{Ratio: 1, Passed: 2, Total: 2}
	}
	return store.Verdict{
		VerificationID:   id,
		TaskID:           "task-" + id,
		AgentID:          agent,
		Result:           result,
		OutputHash:       fmt.Sprintf("%064x", len(id)),
		SchemaHash:       fmt.Sprintf("%064x", 2),
		RulesHash:        fmt.Sprintf("%064x", 3),
		RequestHash:      fmt.Sprintf("%064x", 4),
		SchemaCompliance: store.Ratio{Ratio: 1, Passed: 1, Total: 1},
		IntegrityChecks:  store.Ratio{Ratio: overall.Ratio, Passed: overall.Passed - 1, Total: 1},
		Overall:          overall,
		VerifiedAt:       at,
		KeyVersion:       "v1-2026-11a",
		// Odd spacing and escapes: the receipt must come back byte for byte.
		Receipt: json.RawMessage(fmt.Sprintf(`{"result":%q,  "verification_id":%s,"note":"\u00e9<&>"}`, result, jsonString(id))),
	}
}

// jsonString is s as a JSON string (invalid UTF-8 replaced).
func jsonString(s string) []byte {
	b, _ := json.Marshal(s) // a string always marshals
	return b
}

// Put stores verdicts, failing the test on the first error.
func Put(t testing.TB, s store.Store, vs ...store.Verdict) {
	t.Helper()
	for _, v := range vs {
		if err := s.PutVerdict(context.Background(), v); err != nil {
			t.Fatalf("PutVerdict(%s) error = %v", v.VerificationID, err)
		}
	}
}

// Summary is what Reputation lists for v.
func Summary(v store.Verdict) store.VerdictSummary {
	return store.VerdictSummary{VerificationID: v.VerificationID, TaskID: v.TaskID, Result: v.Result,
		OutputHash: v.OutputHash, Overall: v.Overall, VerifiedAt: v.VerifiedAt.UTC()}
}

func testVerdictsByID(t *testing.T, open Open) {
	s, ctx := open(t), context.Background()
	v := Verdict("v1", "seller", true, T0.In(time.FixedZone("X", 3600)))
	odd := Verdict("id with \x00 nul and \u00e9", "agent \x00 odd", false, T0)
	Put(t, s, v, odd, v) // the same verdict again is a no-op
	for _, want := range []store.Verdict{v, odd} {
		got, err := s.Receipt(ctx, want.VerificationID)
		if err != nil {
			t.Fatalf("Receipt(%q) error = %v", want.VerificationID, err)
		}
		want.VerifiedAt = want.VerifiedAt.UTC()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Receipt(%q) mismatch (-want +got):\n%s", want.VerificationID, diff)
		}
		if string(got.Receipt) != string(want.Receipt) {
			t.Errorf("Receipt(%q).Receipt = %s, want the bytes stored %s", want.VerificationID, got.Receipt, want.Receipt)
		}
		if got.VerifiedAt.Location() != time.UTC {
			t.Errorf("VerifiedAt location = %v, want UTC", got.VerifiedAt.Location())
		}
	}
	changed := v
	changed.Result = store.ResultFail
	if err := s.PutVerdict(ctx, changed); !errors.Is(err, store.ErrDuplicate) {
		t.Errorf("PutVerdict(other content, same id) error = %v, want ErrDuplicate", err)
	}
	if got, _ := s.Receipt(ctx, v.VerificationID); got.Result != store.ResultPass {
		t.Errorf("after a refused duplicate, result = %q, want the first %q", got.Result, store.ResultPass)
	}
	for _, id := range []string{"missing", "", string(make([]byte, 2000))} {
		if _, err := s.Receipt(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Receipt(%.10q) error = %v, want ErrNotFound", id, err)
		}
	}
	bad := []store.Verdict{Verdict("", "a", true, T0), Verdict("r", "a", true, T0), Verdict("j", "a", true, T0),
		Verdict("t", "a", true, time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC))}
	bad[1].Result = "maybe"
	bad[2].Receipt = json.RawMessage(`{"x":`)
	for _, b := range bad {
		if err := s.PutVerdict(ctx, b); !errors.Is(err, store.ErrInvalidVerdict) {
			t.Errorf("PutVerdict(%s) error = %v, want ErrInvalidVerdict", b.VerificationID, err)
		}
	}
	rep, err := s.Reputation(ctx, "seller", store.Page{})
	if err != nil || rep.Total != 1 {
		t.Errorf("Reputation(seller) = %d verdicts, %v; want 1 (duplicates and refusals not counted)", rep.Total, err)
	}
	rep, err = s.Reputation(ctx, "agent \x00 odd", store.Page{})
	if err != nil || rep.Total != 1 || rep.Failed != 1 {
		t.Errorf("Reputation(odd agent) = %+v, %v; want 1 failed", rep, err)
	}
}

func testReputationPages(t *testing.T, open Open) {
	s, ctx := open(t), context.Background()
	var history []store.Verdict // oldest first
	for i := range 7 {
		at := T0.Add(time.Duration(i/2) * time.Minute) // pairs share a time: ties by id
		history = append(history, Verdict(fmt.Sprintf("r%d", i), "seller", i%3 != 0, at))
	}
	// Stored out of order, with other agents between.
	for _, i := range []int{3, 0, 6, 1, 5, 2, 4} {
		Put(t, s, history[i], Verdict(fmt.Sprintf("o%d", i), "other", true, T0.Add(time.Hour)))
	}
	// Newest first; r4 and r5 share a time, and so on: ties by id, descending.
	want := []store.VerdictSummary{Summary(history[6]), Summary(history[5]), Summary(history[4]), Summary(history[3]),
		Summary(history[2]), Summary(history[1]), Summary(history[0])}

	var got []store.VerdictSummary
	page := store.Page{Limit: 3}
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("paging did not end")
		}
		rep, err := s.Reputation(ctx, "seller", page)
		if err != nil {
			t.Fatalf("Reputation(%+v) error = %v", page, err)
		}
		if rep.Total != 7 || rep.Passed != 4 || rep.Failed != 3 || math.Abs(rep.PassRate-4.0/7) > 1e-12 {
			t.Errorf("counters = %d/%d/%d rate %v, want 7/4/3 rate 4/7", rep.Total, rep.Passed, rep.Failed, rep.PassRate)
		}
		if rep.FirstSeen == nil || !rep.FirstSeen.Equal(T0) || rep.LastSeen == nil || !rep.LastSeen.Equal(T0.Add(3*time.Minute)) {
			t.Errorf("first, last seen = %v, %v; want %v, %v", rep.FirstSeen, rep.LastSeen, T0, T0.Add(3*time.Minute))
		}
		got = append(got, rep.Recent...)
		if rep.NextCursor == "" {
			if len(rep.Recent) == 0 {
				t.Errorf("the last page is empty: a cursor was given for a page with nothing on it")
			}
			break
		}
		if len(rep.Recent) != 3 {
			t.Errorf("a page before the last has %d verdicts, want 3", len(rep.Recent))
		}
		page.Cursor = rep.NextCursor
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pages mismatch (-want +got):\n%s", diff)
	}
	rep, err := s.Reputation(ctx, "seller", store.Page{Limit: 7})
	if err != nil || len(rep.Recent) != 7 || rep.NextCursor != "" {
		t.Errorf("Reputation(limit 7) = %d verdicts, cursor %q, %v; want 7 and no cursor", len(rep.Recent), rep.NextCursor, err)
	}
	rep, err = s.Reputation(ctx, "seller", store.Page{Limit: 1000})
	if err != nil || len(rep.Recent) != 7 {
		t.Errorf("Reputation(limit 1000) = %d verdicts, %v; want 7", len(rep.Recent), err)
	}
	rep, err = s.Reputation(ctx, "nobody", store.Page{})
	want0 := store.Reputation{AgentID: "nobody", Recent: []store.VerdictSummary{}}
	if err != nil || !cmp.Equal(rep, want0) {
		t.Errorf("Reputation(unknown) = %+v, %v; want %+v", rep, err, want0)
	}
}

func testReputationRefusals(t *testing.T, open Open) {
	s, ctx := open(t), context.Background()
	Put(t, s, Verdict("a", "seller", true, T0))
	for _, q := range []store.Page{{Limit: -1}, {Cursor: "!!"}, {Cursor: "AAAA"}} {
		if _, err := s.Reputation(ctx, "seller", q); !errors.Is(err, store.ErrInvalidPage) {
			t.Errorf("Reputation(%+v) error = %v, want ErrInvalidPage", q, err)
		}
	}
	long := string(make([]byte, 2000))
	if _, err := s.Reputation(ctx, long, store.Page{}); !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("Reputation(long id) error = %v, want ErrInvalidArgument", err)
	}
	if _, err := s.Score(ctx, long, T0); !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("Score(long id) error = %v, want ErrInvalidArgument", err)
	}
}

// closeTo reports whether a and b agree to 1e-9, relative.
func closeTo(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b))
}

// testScoreInputs uses values computed by hand from the Wilson formula (the
// store package's TestScoreHandComputed has their derivation).
func testScoreInputs(t *testing.T, open Open) {
	halfLife := store.HalfLife
	tests := []struct {
		name         string
		history      []store.Verdict
		now          time.Time
		wPass, wFail float64
		lower, upper float64
		evaluatedAt  time.Time
	}{
		{"three passes now", []store.Verdict{Verdict("s1", "ag", true, T0), Verdict("s2", "ag", true, T0), Verdict("s3", "ag", true, T0)},
			T0, 3, 0, 0.4385029682449546, 1, T0},
		{"pass one half-life before a fail, stored newest first",
			[]store.Verdict{Verdict("s2", "ag", false, T0.Add(halfLife)), Verdict("s1", "ag", true, T0)},
			T0.Add(halfLife), 0.5, 1, 0.03584222409824955, 0.8705503894583921, T0.Add(halfLife)},
		{"two passes two fails evaluated two half-lives later",
			[]store.Verdict{Verdict("s1", "ag", true, T0), Verdict("s2", "ag", false, T0), Verdict("s3", "ag", true, T0), Verdict("s4", "ag", false, T0)},
			T0.Add(2 * halfLife), 0.5, 0.5, 0.05462075552885198, 0.945379244471148, T0.Add(2 * halfLife)},
		{"now before last seen evaluates at last seen", []store.Verdict{Verdict("s1", "ag", false, T0.Add(time.Hour))},
			T0, 0, 1, 0, 1 - 0.20654931437723745, T0.Add(time.Hour)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t)
			Put(t, s, tt.history...)
			sc, err := s.Score(context.Background(), "ag", tt.now)
			if err != nil {
				t.Fatal(err)
			}
			in := sc.Inputs
			if !sc.HasHistory || in.Total != len(tt.history) || !closeTo(in.WeightedPassed, tt.wPass) || !closeTo(in.WeightedFailed, tt.wFail) ||
				!closeTo(in.EffectiveN, tt.wPass+tt.wFail) || !in.EvaluatedAt.Equal(tt.evaluatedAt) {
				t.Errorf("inputs = %+v, want total %d, W+ %v, W- %v, evaluated at %v", in, len(tt.history), tt.wPass, tt.wFail, tt.evaluatedAt)
			}
			if !closeTo(sc.Score, 100*tt.lower) || !closeTo(sc.Interval[0], 100*tt.lower) || !closeTo(sc.Interval[1], 100*tt.upper) {
				t.Errorf("score %v interval %v, want %v [%v, %v]", sc.Score, sc.Interval, 100*tt.lower, 100*tt.lower, 100*tt.upper)
			}
			if sc.Formula != store.Formula || len(sc.Recent) != min(len(tt.history), store.DefaultPageLimit) {
				t.Errorf("formula or recent wrong: %d recent", len(sc.Recent))
			}
		})
	}
	t.Run("no history", func(t *testing.T) {
		s := open(t)
		sc, err := s.Score(context.Background(), "nobody", T0)
		if err != nil || sc.HasHistory || sc.Score != 0 || sc.Interval != [2]float64{0, 100} || sc.Recent == nil || len(sc.Recent) != 0 {
			t.Errorf("Score(unknown) = %+v, %v; want no history, 0, [0, 100], empty recent", sc, err)
		}
	})
}

func testAgentsExcluded(t *testing.T, open Open) {
	s, ctx := open(t), context.Background()
	Put(t, s, Verdict("t1", "test-bot", true, T0), Verdict("t2", "test-bot", false, T0), Verdict("n1", "", true, T0))
	for _, id := range []string{"t1", "t2", "n1"} {
		if _, err := s.Receipt(ctx, id); err != nil {
			t.Errorf("Receipt(%s) error = %v, want the stored verdict", id, err)
		}
	}
	for _, agent := range []string{"test-bot", ""} {
		rep, err := s.Reputation(ctx, agent, store.Page{})
		if err != nil || rep.Total != 0 || len(rep.Recent) != 0 {
			t.Errorf("Reputation(%q) = %+v, %v; want an empty record", agent, rep, err)
		}
		sc, err := s.Score(ctx, agent, T0)
		if err != nil || sc.HasHistory {
			t.Errorf("Score(%q).HasHistory = %v, %v; want false", agent, sc.HasHistory, err)
		}
	}
}

func testAllowance(t *testing.T, open Open) {
	s, ctx := open(t), context.Background()
	resets := time.Date(2026, 10, 2, 0, 0, 0, 0, time.UTC)
	for i, wantRemaining := range []int{2, 1, 0} {
		a, err := s.TakeAllowance(ctx, "client-a", T0, 3)
		want := store.Allowance{Granted: true, Remaining: wantRemaining, Limit: 3, Resets: resets}
		if err != nil || a != want {
			t.Fatalf("TakeAllowance #%d = %+v, %v; want %+v", i+1, a, err, want)
		}
	}
	a, err := s.TakeAllowance(ctx, "client-a", T0, 3)
	if want := (store.Allowance{Limit: 3, Resets: resets}); err != nil || a != want {
		t.Errorf("TakeAllowance past the limit = %+v, %v; want %+v", a, err, want)
	}
	if a, err := s.PeekAllowance(ctx, "client-a", T0, 3); err != nil || a.Granted || a.Remaining != 0 {
		t.Errorf("PeekAllowance(used up) = %+v, %v", a, err)
	}
	if a, err := s.PeekAllowance(ctx, "client-a", T0, 5); err != nil || !a.Granted || a.Remaining != 2 {
		t.Errorf("PeekAllowance(limit raised to 5) = %+v, %v; want 2 left", a, err)
	}
	if a, err := s.TakeAllowance(ctx, "client-b", T0, 3); err != nil || a.Remaining != 2 {
		t.Errorf("TakeAllowance(another client) = %+v, %v; want 2 left", a, err)
	}
	next := T0.Add(23 * time.Hour) // the next UTC day
	if a, err := s.TakeAllowance(ctx, "client-a", next, 3); err != nil || !a.Granted || a.Remaining != 2 {
		t.Errorf("TakeAllowance(next day) = %+v, %v; want granted, 2 left", a, err)
	}
	if a, err := s.TakeAllowance(ctx, "client-c", T0, 0); err != nil || a.Granted || a.Remaining != 0 {
		t.Errorf("TakeAllowance(limit 0) = %+v, %v; want not granted", a, err)
	}
	if a, err := s.PeekAllowance(ctx, "client-c", T0, 0); err != nil || a.Granted {
		t.Errorf("PeekAllowance(limit 0) = %+v, %v; want not granted", a, err)
	}
	for _, client := range []string{"", string(make([]byte, 2000))} {
		if _, err := s.TakeAllowance(ctx, client, T0, 3); !errors.Is(err, store.ErrInvalidArgument) {
			t.Errorf("TakeAllowance(%.8q) error = %v, want ErrInvalidArgument", client, err)
		}
		if _, err := s.PeekAllowance(ctx, client, T0, 3); !errors.Is(err, store.ErrInvalidArgument) {
			t.Errorf("PeekAllowance(%.8q) error = %v, want ErrInvalidArgument", client, err)
		}
	}
}

func testAllowanceHolds(t *testing.T, open Open) {
	s, ctx := open(t), context.Background()
	a, h, err := s.ReserveAllowance(ctx, "c", T0, 2)
	if err != nil || h == nil || !a.Granted || a.Remaining != 1 {
		t.Fatalf("ReserveAllowance = %+v, %v, %v; want a hold, 1 left", a, h, err)
	}
	if p, _ := s.PeekAllowance(ctx, "c", T0, 2); p.Remaining != 1 {
		t.Errorf("a held call does not count as used: %d left, want 1", p.Remaining)
	}
	h.Release()
	h.Release() // a second release gives nothing more back
	if p, _ := s.PeekAllowance(ctx, "c", T0, 2); p.Remaining != 2 {
		t.Errorf("after Release, %d left, want 2", p.Remaining)
	}
	if err := h.Commit(); err == nil {
		t.Errorf("Commit after Release error = nil, want an error")
	}
	_, h1, _ := s.ReserveAllowance(ctx, "c", T0, 2)
	_, h2, _ := s.ReserveAllowance(ctx, "c", T0, 2)
	a, h3, err := s.ReserveAllowance(ctx, "c", T0, 2)
	if err != nil || h3 != nil || a.Granted {
		t.Fatalf("a third hold of two = %+v, %v, %v; want refused", a, h3, err)
	}
	if h1 == nil || h2 == nil {
		t.Fatal("two holds of two were not both granted")
	}
	if err := h1.Commit(); err != nil {
		t.Errorf("Commit() error = %v", err)
	}
	h1.Release() // a no-op after Commit
	if err := h2.Commit(); err != nil {
		t.Errorf("Commit() error = %v", err)
	}
	if p, _ := s.PeekAllowance(ctx, "c", T0, 2); p.Remaining != 0 || p.Granted {
		t.Errorf("after two commits %+v, want none left", p)
	}
}

func testAllowanceConcurrent(t *testing.T, open Open) {
	s := open(t)
	const callers, limit = 50, 5
	var granted atomic.Int32
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			a, err := s.TakeAllowance(context.Background(), "racer", T0, limit)
			if err != nil {
				t.Errorf("TakeAllowance error = %v", err)
			}
			if a.Granted {
				granted.Add(1)
			}
		})
	}
	wg.Wait()
	if n := granted.Load(); n != limit {
		t.Errorf("%d concurrent callers were granted %d free calls, want exactly %d", callers, n, limit)
	}
	if a, _ := s.PeekAllowance(context.Background(), "racer", T0, limit); a.Remaining != 0 {
		t.Errorf("after the race %d left, want 0", a.Remaining)
	}
}

func testPayments(t *testing.T, open Open) {
	s, ctx := open(t), context.Background()
	expires := T0.Add(time.Hour)
	pending := store.PaymentUse{State: store.PaymentPending, RequestKey: "req-1", Since: T0}
	first, rec, err := s.UsePayment(ctx, "pay-1", expires, pending)
	if err != nil || !first || !cmp.Equal(rec, pending, cmpopts.EquateEmpty()) {
		t.Fatalf("UsePayment(new) = %v, %+v, %v; want first", first, rec, err)
	}
	first, rec, err = s.UsePayment(ctx, "pay-1", expires, store.PaymentUse{State: store.PaymentPending, RequestKey: "req-2", Since: T0})
	if err != nil || first || !cmp.Equal(rec, pending, cmpopts.EquateEmpty()) {
		t.Errorf("UsePayment(replay) = %v, %+v, %v; want not first, the first use recorded", first, rec, err)
	}
	if use, found, err := s.LookupPayment(ctx, "pay-1"); err != nil || !found || !cmp.Equal(use, pending, cmpopts.EquateEmpty()) {
		t.Errorf("LookupPayment = %+v, %v, %v", use, found, err)
	}
	if _, found, err := s.LookupPayment(ctx, "never"); err != nil || found {
		t.Errorf("LookupPayment(never used) found = %v, %v", found, err)
	}

	settled := store.PaymentUse{State: store.PaymentSettled, RequestKey: "req-1", Since: T0.Add(time.Second),
		Settlement: []byte(`{"success":true}`), Text: "kept text", Answer: []byte(`{"result":"pass"}` + "\x00\xff")}
	v := Verdict("paid-1", "seller", true, T0)
	if err := s.SettlePayment(ctx, "pay-1", settled, &v); err != nil {
		t.Fatalf("SettlePayment error = %v", err)
	}
	if use, _, _ := s.LookupPayment(ctx, "pay-1"); !cmp.Equal(use, settled, cmpopts.EquateEmpty()) {
		t.Errorf("after settlement, recorded %+v, want %+v", use, settled)
	}
	if rep, _ := s.Reputation(ctx, "seller", store.Page{}); rep.Total != 1 {
		t.Errorf("the settled payment's verdict is not counted: total %d, want 1", rep.Total)
	}
	if err := s.ReleasePayment(ctx, "pay-1"); err != nil {
		t.Errorf("ReleasePayment(settled) error = %v", err)
	}
	if _, found, _ := s.LookupPayment(ctx, "pay-1"); !found {
		t.Errorf("ReleasePayment forgot a settled payment")
	}
	if err := s.SettlePayment(ctx, "never", settled, nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SettlePayment(never used) error = %v, want ErrNotFound", err)
	}
	if _, err := s.Receipt(ctx, "paid-1"); err != nil {
		t.Errorf("Receipt(paid verdict) error = %v", err)
	}

	// A pending use released (its work failed) may be used again.
	if first, _, _ := s.UsePayment(ctx, "pay-2", expires, pending); !first {
		t.Fatal("UsePayment(pay-2) not first")
	}
	if err := s.ReleasePayment(ctx, "pay-2"); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := s.LookupPayment(ctx, "pay-2"); found {
		t.Errorf("a released pending payment is still recorded")
	}
	if first, _, err := s.UsePayment(ctx, "pay-2", expires, pending); err != nil || !first {
		t.Errorf("UsePayment(released) = %v, %v; want first again", first, err)
	}
	if err := s.ReleasePayment(ctx, "unknown"); err != nil {
		t.Errorf("ReleasePayment(unknown) error = %v, want nil", err)
	}
	// A settlement without a verdict (refused by the facilitator) and one
	// of unknown outcome.
	for i, state := range []store.PaymentState{store.PaymentFailed, store.PaymentUnknown} {
		id := fmt.Sprintf("pay-s%d", i)
		s.UsePayment(ctx, id, expires, pending)
		use := store.PaymentUse{State: state, RequestKey: "req-1", Since: T0}
		if err := s.SettlePayment(ctx, id, use, nil); err != nil {
			t.Fatalf("SettlePayment(%s) error = %v", state, err)
		}
		if got, _, _ := s.LookupPayment(ctx, id); !cmp.Equal(got, use, cmpopts.EquateEmpty()) {
			t.Errorf("recorded %+v, want %+v", got, use)
		}
	}
	for _, id := range []string{"", string(make([]byte, 2000))} {
		if _, _, err := s.UsePayment(ctx, id, expires, pending); !errors.Is(err, store.ErrInvalidArgument) {
			t.Errorf("UsePayment(%.8q) error = %v, want ErrInvalidArgument", id, err)
		}
	}
	if _, _, err := s.UsePayment(ctx, "pay-far", time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC), pending); !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("UsePayment(expiry in 2300) error = %v, want ErrInvalidArgument", err)
	}
}

func testPaymentsConcurrent(t *testing.T, open Open) {
	s := open(t)
	const callers = 50
	var firsts atomic.Int32
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			use := store.PaymentUse{State: store.PaymentPending, RequestKey: fmt.Sprintf("req-%d", i), Since: T0}
			first, _, err := s.UsePayment(context.Background(), "one-payment", T0.Add(time.Hour), use)
			if err != nil {
				t.Errorf("UsePayment error = %v", err)
			}
			if first {
				firsts.Add(1)
			}
		})
	}
	wg.Wait()
	if n := firsts.Load(); n != 1 {
		t.Errorf("%d concurrent uses of one payment id: %d were first, want exactly 1", callers, n)
	}
}

func testConcurrentVerdicts(t *testing.T, open Open) {
	s := open(t)
	const writers, each = 8, 10
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				v := Verdict(fmt.Sprintf("c%d-%d", g, i), "busy", (g+i)%2 == 0, T0.Add(time.Duration(i)*time.Second))
				if err := s.PutVerdict(context.Background(), v); err != nil {
					t.Errorf("PutVerdict error = %v", err)
				}
			}
		})
	}
	wg.Wait()
	rep, err := s.Reputation(context.Background(), "busy", store.Page{})
	if err != nil || rep.Total != writers*each || rep.Passed != writers*each/2 {
		t.Errorf("after %d concurrent writes: total %d, passed %d, %v", writers*each, rep.Total, rep.Passed, err)
	}
	sc, _ := s.Score(context.Background(), "busy", T0.Add(time.Minute))
	if sc.Inputs.Total != writers*each {
		t.Errorf("score total %d, want %d", sc.Inputs.Total, writers*each)
	}
}

func testCheck(t *testing.T, open Open) {
	s := open(t)
	if err := s.Check(context.Background()); err != nil {
		t.Errorf("Check() on a new store error = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Check(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Check(cancelled) error = %v, want context.Canceled", err)
	}
}
