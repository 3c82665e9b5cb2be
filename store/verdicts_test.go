package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"
)

func TestPutVerdictReceiptRoundTrip(t *testing.T) {
	s := openTemp(t, nil)
	ctx := context.Background()
	local := time.FixedZone("UTC+2", 2*3600)
	v := testVerdict("a1b2c3d4-0000-4000-8000-000000000001", "seller-1", true, t0.In(local))
	// Whitespace and HTML characters must come back byte for byte: a JSON
	// re-encoding would change both.
	v.Receipt = json.RawMessage(`{"a": "<b>&</b>",  "n": 1.50}`)
	put(t, s, v)

	got, err := s.Receipt(ctx, v.VerificationID)
	if err != nil {
		t.Fatalf("Receipt() error = %v", err)
	}
	want := v
	want.VerifiedAt = t0 // returned in UTC
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Receipt() mismatch (-want +got):\n%s", diff)
	}
	if got.VerifiedAt.Location() != time.UTC {
		t.Errorf("Receipt().VerifiedAt location = %v, want UTC", got.VerifiedAt.Location())
	}
	if string(got.Receipt) != string(v.Receipt) {
		t.Errorf("Receipt().Receipt = %s, want %s", got.Receipt, v.Receipt)
	}
}

func TestReceiptNotFound(t *testing.T) {
	s := openTemp(t, nil)
	put(t, s, testVerdict("present", "seller", true, t0))
	for _, id := range []string{"missing", "", "presen", "present ", strings.Repeat("x", maxIDLen+1)} {
		if _, err := s.Receipt(context.Background(), id); !errors.Is(err, ErrNotFound) {
			t.Errorf("Receipt(%.20q) error = %v, want ErrNotFound", id, err)
		}
	}
}

func TestPutVerdictInvalid(t *testing.T) {
	good := testVerdict("id-1", "seller", true, t0)
	tests := []struct {
		name   string
		change func(*Verdict)
	}{
		{"empty id", func(v *Verdict) { v.VerificationID = "" }},
		{"id too long", func(v *Verdict) { v.VerificationID = strings.Repeat("x", maxIDLen+1) }},
		{"agent too long", func(v *Verdict) { v.AgentID = strings.Repeat("x", maxIDLen+1) }},
		{"unknown result", func(v *Verdict) { v.Result = "PASS" }},
		{"zero time", func(v *Verdict) { v.VerifiedAt = time.Time{} }},
		{"time too late", func(v *Verdict) { v.VerifiedAt = maxVerifiedAt }},
		{"no receipt", func(v *Verdict) { v.Receipt = nil }},
		{"receipt not JSON", func(v *Verdict) { v.Receipt = json.RawMessage(`{"a":`) }},
	}
	s := openTemp(t, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := good
			tt.change(&v)
			if err := s.PutVerdict(context.Background(), v); !errors.Is(err, ErrInvalidVerdict) {
				t.Errorf("PutVerdict() error = %v, want ErrInvalidVerdict", err)
			}
		})
	}
	if err := s.Verify(context.Background()); err != nil {
		t.Errorf("Verify() after rejected writes = %v", err)
	}
}

func TestPutVerdictDuplicate(t *testing.T) {
	s := openTemp(t, nil)
	ctx := context.Background()
	v := testVerdict("dup", "seller", true, t0)
	put(t, s, v)
	// The same verdict again (a retried write) changes nothing.
	put(t, s, v)
	other := v
	other.Result = ResultFail
	if err := s.PutVerdict(ctx, other); !errors.Is(err, ErrDuplicate) {
		t.Errorf("PutVerdict(changed verdict, same id) error = %v, want ErrDuplicate", err)
	}
	// Another time is another key of the verdicts bucket: still the same id.
	later := v
	later.VerifiedAt = t0.Add(time.Second)
	if err := s.PutVerdict(ctx, later); !errors.Is(err, ErrDuplicate) {
		t.Errorf("PutVerdict(same id, later verified_at) error = %v, want ErrDuplicate", err)
	}
	rep, err := s.Reputation(ctx, "seller", Page{})
	if err != nil {
		t.Fatalf("Reputation() error = %v", err)
	}
	if rep.Total != 1 || rep.Passed != 1 {
		t.Errorf("Reputation() Total, Passed = %d, %d, want 1, 1", rep.Total, rep.Passed)
	}
	if err := s.Verify(ctx); err != nil {
		t.Errorf("Verify() = %v", err)
	}
}

func TestCanceledContext(t *testing.T) {
	s := openTemp(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	v := testVerdict("c1", "seller", true, t0)
	if err := s.PutVerdict(ctx, v); !errors.Is(err, context.Canceled) {
		t.Errorf("PutVerdict(canceled) error = %v, want context.Canceled", err)
	}
	if _, err := s.Receipt(context.Background(), "c1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Receipt() after canceled put error = %v, want ErrNotFound", err)
	}
}

func FuzzDecodeStoredValues(f *testing.F) {
	v := testVerdict("f-1", "seller", true, t0)
	record, err := appendVerdict(nil, &v)
	if err != nil {
		f.Fatal(err)
	}
	var agg aggregate
	agg.add(t0.UnixNano(), true)
	f.Add(timeKey(t0.UnixNano(), "f-1"), encodeSummary(v), record, agg.encode())
	f.Add([]byte{}, []byte{'p'}, []byte{recordFormat, 0xff}, []byte{1})
	f.Fuzz(func(t *testing.T, key, summary, record, aggregate []byte) {
		// Damaged values are errors, never panics.
		if s, err := decodeSummary(key, summary); err == nil {
			back := encodeSummary(Verdict{Result: s.Result, Overall: s.Overall, TaskID: s.TaskID, OutputHash: s.OutputHash})
			if _, err := decodeSummary(key, back); err != nil {
				t.Errorf("re-encoded summary does not decode: %v", err)
			}
		}
		_, _ = decodeVerdict(record)
		_, _ = decodeAggregate(aggregate)
	})
}

func TestVerifyDetectsInconsistency(t *testing.T) {
	tests := []struct {
		name   string
		damage func(tx *bolt.Tx) error
	}{
		{"counter off by one", func(tx *bolt.Tx) error {
			agg, err := decodeAggregate(tx.Bucket(bucketAgents).Get([]byte("seller")))
			if err != nil {
				return err
			}
			agg.total++
			return tx.Bucket(bucketAgents).Put([]byte("seller"), agg.encode())
		}},
		{"weighted sum changed", func(tx *bolt.Tx) error {
			agg, err := decodeAggregate(tx.Bucket(bucketAgents).Get([]byte("seller")))
			if err != nil {
				return err
			}
			agg.wPass += 0.01
			return tx.Bucket(bucketAgents).Put([]byte("seller"), agg.encode())
		}},
		{"index entry missing", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketAgentTime).Delete(indexKey("seller", t0.UnixNano(), "v-1"))
		}},
		{"counters missing", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketAgents).Delete([]byte("seller"))
		}},
		{"verdict record damaged", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketVerdicts).Put(timeKey(t0.Add(time.Hour).UnixNano(), "v-2"), []byte{recordFormat, 50, '{'})
		}},
		{"id entry missing", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketVerdictIDs).Delete([]byte("v-2"))
		}},
		{"id entry of another time", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketVerdictIDs).Put([]byte("v-2"), appendTime(nil, t0.UnixNano()))
		}},
		{"id entry without its verdict", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketVerdictIDs).Put([]byte("v-3"), appendTime(nil, t0.UnixNano()))
		}},
		{"verdict and id entry under another time", func(tx *bolt.Tx) error {
			verdicts := tx.Bucket(bucketVerdicts)
			key := timeKey(t0.Add(time.Hour).UnixNano(), "v-2")
			moved := timeKey(t0.Add(2*time.Hour).UnixNano(), "v-2")
			if err := verdicts.Put(moved, bytes.Clone(verdicts.Get(key))); err != nil {
				return err
			}
			if err := verdicts.Delete(key); err != nil {
				return err
			}
			return tx.Bucket(bucketVerdictIDs).Put([]byte("v-2"), moved[:8])
		}},
		{"verdict under a short key", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketVerdicts).Put([]byte("v-2"), []byte{recordFormat, 2, '{', '}'})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTemp(t, nil)
			put(t, s, testVerdict("v-1", "seller", true, t0), testVerdict("v-2", "seller", false, t0.Add(time.Hour)))
			if err := s.Verify(context.Background()); err != nil {
				t.Fatalf("Verify() before damage = %v", err)
			}
			if err := s.db.Update(tt.damage); err != nil {
				t.Fatal(err)
			}
			if err := s.Verify(context.Background()); !errors.Is(err, ErrCorrupt) {
				t.Errorf("Verify() after damage = %v, want ErrCorrupt", err)
			}
		})
	}
}
