package tools

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/payment"
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
	if e.Code != CodeInvalidRequest || e.Status != 422 || e.Charged != payment.ChargeNone || e.Retryable {
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
// answer (decode, hashes, evaluation, answer, signature) for three request
// sizes, beside one bare Ed25519 signature over the 1 KB answer: the floor.
// Besides wall time it reports cpu-ns/op, the process's CPU time (every
// thread, the garbage collector's included) per verification, which a busy
// machine disturbs far less, and x-floor, that CPU time over the floor's
// measured in the same run. scripts/bench.sh runs it.
func BenchmarkVerify(b *testing.B) {
	svc := newTestService(b, false)
	invoice := readTestdata(b, "invoice-pass.json")
	requests := []struct {
		name     string
		body     []byte
		min, max int // size bounds, so the name stays true
	}{
		{"invoice-1KB/full", withDetail(b, invoice, "full"), 1000, 1500},
		{"invoice-1KB/compact", withDetail(b, invoice, "compact"), 1000, 1500},
		{"invoice-8KB", invoiceWithItems(b, invoice, 50), 7000, 9000},
		{"document-1MB", invoiceWithItems(b, invoice, 8200), 950_000, 1_100_000},
	}
	for _, r := range requests {
		if len(r.body) < r.min || len(r.body) > r.max {
			b.Fatalf("%s request is %d bytes, want %d to %d", r.name, len(r.body), r.min, r.max)
		}
		res, err := svc.Verify(context.Background(), r.body)
		if err != nil || res.Outcome.Result() != "pass" {
			b.Fatalf("%s does not pass: %v", r.name, err)
		}
	}
	res, err := svc.Verify(context.Background(), invoice)
	if err != nil {
		b.Fatal(err)
	}
	priv := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	var floor float64
	b.Run("ed25519-sign-floor", func(b *testing.B) {
		b.ReportAllocs()
		cpu := startCPU()
		for b.Loop() {
			ed25519.Sign(priv, res.Answer)
		}
		floor = cpu.report(b)
	})
	// The service as the server runs it: with a store, so each verdict is
	// committed and the compact receipt signed too (a second signature).
	// It runs from 32 goroutines, as from 32 connections, so that commits
	// are grouped as under load; one at a time, every verification would
	// wait for an fsync of its own.
	stored := newTestService(b, true)
	requests = append(requests, struct {
		name     string
		body     []byte
		min, max int
	}{"invoice-1KB/full-stored", requests[0].body, 0, 0})
	for _, r := range requests {
		s := svc
		if strings.HasSuffix(r.name, "-stored") {
			s = stored
		}
		b.Run(r.name, func(b *testing.B) {
			b.SetBytes(int64(len(r.body)))
			b.ReportAllocs()
			cpu := startCPU()
			if s == stored {
				b.SetParallelism(16)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := s.Verify(context.Background(), r.body); err != nil {
							b.Error(err)
							return
						}
					}
				})
			} else {
				for b.Loop() {
					if _, err := s.Verify(context.Background(), r.body); err != nil {
						b.Fatal(err)
					}
				}
			}
			if perOp := cpu.report(b); perOp > 0 && floor > 0 {
				b.ReportMetric(perOp/floor, "x-floor")
			}
		})
	}
}

// invoiceWithItems returns the invoice request with n generated line items
// (unique descriptions, totals that add up exactly in binary) and the
// matching total, so it still passes every check.
func invoiceWithItems(t testing.TB, invoice []byte, n int) []byte {
	t.Helper()
	var req map[string]any
	if err := json.Unmarshal(invoice, &req); err != nil {
		t.Fatal(err)
	}
	items := make([]any, n)
	var total float64
	for i := range items {
		qty := float64(1 + i%7)
		price := 2.5 + float64(i%4)
		total += qty * price
		items[i] = map[string]any{
			"description": fmt.Sprintf("Line item %05d: data labelling, batch %c, reviewed twice", i, 'A'+i%26),
			"quantity":    qty, "unit_price": price, "line_total": qty * price,
		}
	}
	out := req["submitted_output"].(map[string]any)
	out["line_items"], out["total"] = items, total
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// cpuClock is the process's CPU time at the start of a benchmark loop.
type cpuClock struct {
	start time.Duration
	ok    bool
}

func startCPU() cpuClock {
	d, ok := processCPU()
	return cpuClock{d, ok}
}

// report adds cpu-ns/op and returns it; 0 where there is no /proc.
func (c cpuClock) report(b *testing.B) float64 {
	end, ok := processCPU()
	if !c.ok || !ok || b.N == 0 {
		return 0
	}
	perOp := float64(end-c.start) / float64(b.N)
	b.ReportMetric(perOp, "cpu-ns/op")
	return perOp
}

// processCPU reads the user and system time of every thread of this
// process from /proc/self/stat (Linux; clock ticks of 1/100 s).
func processCPU() (time.Duration, bool) {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, false
	}
	// The fields after the command name, which is in parentheses and may
	// hold spaces: state is the first, utime the 12th, stime the 13th.
	_, rest, ok := bytes.Cut(stat, []byte(") "))
	fields := strings.Fields(string(rest))
	if !ok || len(fields) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	const tick = 10 * time.Millisecond // USER_HZ is 100 on every Linux port
	return time.Duration(utime+stime) * tick, true
}

// BenchmarkVerifyStages times each stage of Verify on the 1 KB invoice, so
// the pipeline's cost can be read stage by stage beside the floor.
func BenchmarkVerifyStages(b *testing.B) {
	svc := newTestService(b, false)
	body := readTestdata(b, "invoice-pass.json")
	req, err := svc.Engine.DecodeRequest(body)
	if err != nil {
		b.Fatal(err)
	}
	hashes, err := svc.Engine.Hashes(req, signing.AppendCanonical, signing.HashCanonical)
	if err != nil {
		b.Fatal(err)
	}
	out, err := svc.Engine.Check(req, hashes.Schema)
	if err != nil {
		b.Fatal(err)
	}
	meta := engine.AnswerMeta{VerificationID: "c0a8012e-5f3b-4d7a-8e21-94b6d3f0a7c5", VerifiedAt: time.Now(), Version: "bench", Hashes: hashes}
	answer := svc.Engine.NewAnswer(req, out, meta)
	answerBody, err := answer.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	signer := svc.Keys.Current()
	forgetful := engine.New(&engine.Options{CacheSize: -1}) // remembers no schema, rules or bounds
	for _, stage := range []struct {
		name string
		run  func() error
	}{
		// As Verify runs them: bounds and rules, sent before, are taken as
		// decoded then; the schema's and the rules' canonical forms and
		// hashes are remembered (hashes-unremembered: a first request).
		{"decode", func() error { _, err := svc.Engine.DecodeRequest(body); return err }},
		{"hashes", func() error {
			_, err := svc.Engine.Hashes(req, signing.AppendCanonical, signing.HashCanonical)
			return err
		}},
		{"hashes-unremembered", func() error {
			var canon signing.Canonicalizer
			_, err := forgetful.Hashes(req, canon.AppendCanonical, signing.HashCanonical)
			return err
		}},
		{"check", func() error { _, err := svc.Engine.Check(req, hashes.Schema); return err }},
		{"answer", func() error { _, err := svc.Engine.NewAnswer(req, out, meta).Marshal(); return err }},
		// The encoded answer canonicalized into the signed document, and signed.
		{"attest", func() error {
			_, err := signer.Attest(signing.ContextVerify, answerBody, answer.VerifiedAt)
			return err
		}},
	} {
		b.Run(stage.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := startCPU()
			for b.Loop() {
				if err := stage.run(); err != nil {
					b.Fatal(err)
				}
			}
			cpu.report(b)
		})
	}
}
