package store

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"
)

// TestPaymentUseRoundTrip: what UsePayment and SettlePayment record is what
// LookupPayment and a replayed UsePayment read back, answer bytes verbatim.
func TestPaymentUseRoundTrip(t *testing.T) {
	s := openTemp(t, nil)
	ctx := context.Background()
	exp := t0.Add(5 * time.Minute)
	if _, found, err := s.LookupPayment(ctx, "0xabc"); err != nil || found {
		t.Fatalf("LookupPayment(unused) = found %v, %v", found, err)
	}
	pending := PaymentUse{State: PaymentPending, RequestKey: "req-1", Since: t0}
	first, got, err := s.UsePayment(ctx, "0xabc", exp, pending)
	if err != nil || !first || !cmp.Equal(got, pending) {
		t.Fatalf("UsePayment = %v, %+v, %v", first, got, err)
	}
	kept := PaymentUse{State: PaymentSettled, RequestKey: "req-1", Since: t0.Add(time.Second),
		Settlement: []byte(`{"success":true}`), Text: "the text", Answer: []byte(`{"a":"<&>"}`)}
	if err := s.SettlePayment(ctx, "0xabc", kept, nil); err != nil {
		t.Fatal(err)
	}
	for name, read := range map[string]func() (PaymentUse, error){
		"LookupPayment": func() (PaymentUse, error) { u, _, err := s.LookupPayment(ctx, "0xabc"); return u, err },
		"UsePayment":    func() (PaymentUse, error) { _, u, err := s.UsePayment(ctx, "0xabc", exp, pending); return u, err },
	} {
		u, err := read()
		if err != nil || !cmp.Equal(u, kept) {
			t.Errorf("%s after SettlePayment = %+v, %v; want %+v", name, u, err, kept)
		}
	}
	if err := s.SettlePayment(ctx, "0xnever", kept, nil); err == nil {
		t.Error("SettlePayment of a payment never used succeeded")
	}
}

// TestSettlePaymentStoresVerdict: the verdict of a paid answer is stored,
// and counted in reputation, by the settlement's record, not before.
func TestSettlePaymentStoresVerdict(t *testing.T) {
	s := openTemp(t, nil)
	ctx := context.Background()
	v := testVerdict("v-paid", "seller-1", true, t0)
	if _, _, err := s.UsePayment(ctx, "0xabc", t0.Add(time.Hour), PaymentUse{State: PaymentPending, RequestKey: "k"}); err != nil {
		t.Fatal(err)
	}
	if rep, err := s.Reputation(ctx, "seller-1", Page{}); err != nil || rep.Total != 0 {
		t.Fatalf("reputation before settlement = %+v, %v", rep, err)
	}
	if err := s.SettlePayment(ctx, "0xabc", PaymentUse{State: PaymentUnknown, RequestKey: "k", Answer: v.Receipt}, &v); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Reputation(ctx, "seller-1", Page{})
	if err != nil || rep.Total != 1 || rep.Passed != 1 {
		t.Errorf("reputation after settlement = %+v, %v; want one pass", rep, err)
	}
	if got, err := s.Receipt(ctx, "v-paid"); err != nil || !bytes.Equal(got.Receipt, v.Receipt) {
		t.Errorf("Receipt = %s, %v", got.Receipt, err)
	}
}

// TestReleasePayment: a pending payment is forgotten (usable again); a
// settled one is not.
func TestReleasePayment(t *testing.T) {
	s := openTemp(t, nil)
	ctx := context.Background()
	exp := t0.Add(time.Hour)
	use := PaymentUse{State: PaymentPending, RequestKey: "k"}
	for _, id := range []string{"0xpending", "0xsettled"} {
		if _, _, err := s.UsePayment(ctx, id, exp, use); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SettlePayment(ctx, "0xsettled", PaymentUse{State: PaymentSettled, RequestKey: "k"}, nil); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"0xpending", "0xsettled", "0xnever"} {
		if err := s.ReleasePayment(ctx, id); err != nil {
			t.Errorf("ReleasePayment(%s) = %v", id, err)
		}
	}
	if first, _, err := s.UsePayment(ctx, "0xpending", exp, use); err != nil || !first {
		t.Errorf("released payment used again = %v, %v; want first", first, err)
	}
	if first, got, err := s.UsePayment(ctx, "0xsettled", exp, use); err != nil || first || got.State != PaymentSettled {
		t.Errorf("settled payment after release = %v, %+v, %v; want still settled", first, got, err)
	}
	if err := s.Verify(ctx); err != nil {
		t.Errorf("store check after release: %v", err)
	}
}

// TestPaymentUsedBeforeStates: a payment recorded by an earlier version (the
// deadline alone) reads as PaymentUsed.
func TestPaymentUsedBeforeStates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "verifier.db")
	s, err := OpenBolt(path, &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketPayments).Put([]byte("0xold"), appendTime(nil, t0.Add(time.Hour).UnixNano()))
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	use, found, err := s.LookupPayment(context.Background(), "0xold")
	if err != nil || !found || use.State != PaymentUsed {
		t.Errorf("LookupPayment(old record) = %+v, %v, %v; want PaymentUsed", use, found, err)
	}
}
