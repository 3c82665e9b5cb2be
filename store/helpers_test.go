package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// t0 is the start of every scripted history.
var t0 = time.Date(2026, 10, 1, 1, 1, 9, 606993000, time.UTC)

// writeModes are the commit strategies, named for subtests and benchmarks.
var writeModes = []struct {
	name string
	mode writeMode
}{
	{"group-commit", writeGroupCommit},
	{"tx-per-write", writeTxPerWrite},
	{"bbolt-batch", writeBoltBatch},
}

// openTemp opens a new store in a temporary directory and closes it when
// the test ends. Unless opts sets a clock, the store's clock stands at t0.
func openTemp(tb testing.TB, opts *Options) *Bolt {
	tb.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = func() time.Time { return t0 }
	}
	s, err := OpenBolt(filepath.Join(tb.TempDir(), "verifier.db"), &o)
	if err != nil {
		tb.Fatalf("OpenBolt() error = %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// testVerdict builds a complete verdict with a receipt that mentions its id.
func testVerdict(id, agent string, pass bool, at time.Time) Verdict {
	result, overall := ResultFail, Ratio{Ratio: 0.5, Passed: 1, Total: 2}
	if pass {
		result, overall = ResultPass, Ratio{Ratio: 1, Passed: 2, Total: 2}
	}
	return Verdict{
		VerificationID:   id,
		TaskID:           "task-" + id,
		AgentID:          agent,
		Result:           result,
		OutputHash:       fmt.Sprintf("%064x", len(id)),
		SchemaHash:       fmt.Sprintf("%064x", 2),
		RulesHash:        fmt.Sprintf("%064x", 3),
		RequestHash:      fmt.Sprintf("%064x", 4),
		SchemaCompliance: Ratio{Ratio: 1, Passed: 1, Total: 1},
		IntegrityChecks:  Ratio{Ratio: overall.Ratio, Passed: overall.Passed - 1, Total: 1},
		Overall:          overall,
		VerifiedAt:       at,
		KeyVersion:       "v1-2026-11a",
		Receipt:          json.RawMessage(fmt.Sprintf(`{"result":%q,"verification_id":%q}`, result, id)),
	}
}

// put stores verdicts, failing the test on the first error.
func put(tb testing.TB, s Store, vs ...Verdict) {
	tb.Helper()
	for _, v := range vs {
		if err := s.PutVerdict(context.Background(), v); err != nil {
			tb.Fatalf("PutVerdict(%s) error = %v", v.VerificationID, err)
		}
	}
}

// putAll stores verdicts in a few large transactions, for big setups.
func putAll(tb testing.TB, s *Bolt, vs []Verdict) {
	tb.Helper()
	const chunk = 5000
	for len(vs) > 0 {
		n := min(chunk, len(vs))
		err := s.db.Update(func(tx *bolt.Tx) error {
			for _, v := range vs[:n] {
				w, err := prepareVerdict(nil, v)
				if err != nil {
					return err
				}
				if err := w.apply(tx); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatalf("storing %d verdicts: %v", n, err)
		}
		vs = vs[n:]
	}
}

// summaryOf is what Reputation should list for v.
func summaryOf(v Verdict) VerdictSummary {
	return VerdictSummary{
		VerificationID: v.VerificationID,
		TaskID:         v.TaskID,
		Result:         v.Result,
		OutputHash:     v.OutputHash,
		Overall:        v.Overall,
		VerifiedAt:     v.VerifiedAt,
	}
}

// summaries returns the summaries of vs, in order.
func summaries(vs []Verdict) []VerdictSummary {
	out := make([]VerdictSummary, len(vs))
	for i, v := range vs {
		out[i] = summaryOf(v)
	}
	return out
}

// openRefused opens path expecting ErrCorrupt, checks that the refused open
// left the file byte for byte as it was, and returns the error.
func openRefused(t *testing.T, path string) error {
	t.Helper()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, openErr := OpenBolt(path, nil)
	if openErr == nil {
		s.Close()
		t.Fatalf("OpenBolt(%s) error = nil, want ErrCorrupt", filepath.Base(path))
	}
	if !errors.Is(openErr, ErrCorrupt) {
		t.Errorf("OpenBolt() error = %v, want ErrCorrupt", openErr)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Errorf("OpenBolt() changed the file it refused")
	}
	return openErr
}
