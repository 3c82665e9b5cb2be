package tools_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// BenchmarkVerify measures the whole path from request bytes to a signed
// answer (decode, hashes, evaluation, answer, signature) for three request
// sizes, beside one bare Ed25519 signature over the 1 KB answer: the floor.
// Besides wall time it reports cpu-ns/op, the process's CPU time (every
// thread, the garbage collector's included) per verification, which a busy
// machine disturbs far less, and x-floor, that CPU time over the floor's
// measured in the same run. scripts/bench.sh runs it.
func BenchmarkVerify(b *testing.B) {
	svc := testkit.NewTestService(b, false)
	invoice := testkit.ReadTestdata(b, "invoice-pass.json")
	requests := []struct {
		name     string
		body     []byte
		min, max int // size bounds, so the name stays true
	}{
		{"invoice-1KB/full", testkit.WithDetail(b, invoice, "full"), 1000, 1500},
		{"invoice-1KB/compact", testkit.WithDetail(b, invoice, "compact"), 1000, 1500},
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
		cpu := testkit.StartCPU()
		for b.Loop() {
			ed25519.Sign(priv, res.Answer)
		}
		floor = cpu.Report(b)
	})
	// The service as the server runs it: with a store, so each verdict is
	// committed and the compact receipt signed too (a second signature).
	// It runs from 32 goroutines, as from 32 connections, so that commits
	// are grouped as under load; one at a time, every verification would
	// wait for an fsync of its own.
	stored := testkit.NewTestService(b, true)
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
			cpu := testkit.StartCPU()
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
			if perOp := cpu.Report(b); perOp > 0 && floor > 0 {
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
