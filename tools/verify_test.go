package tools

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/store"
)

// newTestService builds a Service on a temp key store and, when withStore,
// a temp bbolt store.
func newTestService(t testing.TB, withStore bool) *Service {
	t.Helper()
	keys, err := signing.OpenKeyStore(filepath.Join(t.TempDir(), "keys"), nil)
	if err != nil {
		t.Fatal(err)
	}
	svc := &Service{Engine: engine.New(nil), Keys: keys, Version: "test"}
	if withStore {
		st, err := store.OpenBolt(filepath.Join(t.TempDir(), "verifier.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		svc.Store = st
	}
	return svc
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func withDetail(t testing.TB, body []byte, detail string) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	m["detail"], _ = json.Marshal(detail)
	out, _ := json.Marshal(m)
	return out
}

func TestVerifyStoresCompactReceipt(t *testing.T) {
	svc := newTestService(t, true)
	res, err := svc.Verify(context.Background(), readTestdata(t, "invoice-fail.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := svc.Store.Receipt(context.Background(), res.Verdict.VerificationID)
	if err != nil {
		t.Fatalf("Receipt: %v", err)
	}
	var receipt map[string]any
	if err := json.Unmarshal(got.Receipt, &receipt); err != nil {
		t.Fatal(err)
	}
	if _, full := receipt["hints"]; full {
		t.Error("stored receipt has hints; want the compact shape")
	}
	report, err := signing.VerifyReceipt(got.Receipt, svc.Keys)
	if err != nil || !report.Valid {
		t.Errorf("stored receipt does not verify: %v %+v", err, report)
	}
	if got.Result != "fail" || got.AgentID != "seller-7" || got.OutputHash == "" {
		t.Errorf("stored verdict = %+v", got)
	}
	if bytes.Contains(got.Receipt, []byte("Review pass")) {
		t.Error("the stored receipt holds the submitted output")
	}
}

func TestVerifyInvalidRequest(t *testing.T) {
	svc := newTestService(t, false)
	_, err := svc.Verify(context.Background(), []byte(`{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":[{"type":"MARKER","field":"a"}]}`))
	e := AsError(err)
	if e.Code != CodeInvalidRequest || e.Status != 422 || e.Charged || e.Retryable {
		t.Fatalf("error = %+v, want a 422 invalid_request", e)
	}
	if len(e.Fields) != 1 || e.Fields[0].Field != "rules[0].type" || e.Fields[0].Fix == "" {
		t.Errorf("fields = %+v, want rules[0].type with a fix", e.Fields)
	}
	b, _ := json.Marshal(e)
	if bytes.Contains(b, []byte("MARKER")) {
		t.Errorf("error echoes the input: %s", b)
	}
}

// BenchmarkVerify measures the whole path from request bytes to a signed
// answer, beside one bare Ed25519 signature over the same answer (the floor).
func BenchmarkVerify(b *testing.B) {
	body := readTestdata(b, "invoice-pass.json")
	svc := newTestService(b, false)
	for _, detail := range []string{"full", "compact"} {
		req := withDetail(b, body, detail)
		b.Run(detail, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := svc.Verify(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	res, err := svc.Verify(context.Background(), body)
	if err != nil {
		b.Fatal(err)
	}
	priv := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	b.Run("ed25519-sign-floor", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ed25519.Sign(priv, res.Answer)
		}
	})
}
