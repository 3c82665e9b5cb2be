package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/verifier-dev/verifier/internal/pgtest"
	"github.com/verifier-dev/verifier/store"
)

// TestServeHTTPPostgresStore serves with --store postgres://…: verdicts go
// to the database (no bbolt file is made), and receipts and reputation are
// read from it.
func TestServeHTTPPostgresStore(t *testing.T) {
	url := pgtest.NewDatabase(t)
	srv := startHTTP(t, "--store", url)
	resp, answer := srv.post(t, "/verify/schema", mustRead(t, filepath.Join("testdata", "invoice-pass.json")))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /verify/schema = %d %s", resp.StatusCode, answer)
	}
	var verdict struct {
		VerificationID string `json:"verification_id"`
	}
	if err := json.Unmarshal(answer, &verdict); err != nil || verdict.VerificationID == "" {
		t.Fatalf("answer without a verification id (%v): %s", err, answer)
	}
	if resp, body := srv.get(t, "/receipts/"+verdict.VerificationID); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /receipts/{id} = %d %s", resp.StatusCode, body)
	}
	_, body := srv.get(t, "/reputation/seller-7")
	var rep store.Reputation
	if err := json.Unmarshal(body, &rep); err != nil || rep.Total != 1 {
		t.Errorf("GET /reputation/seller-7 = %s (%v), want one verdict", body, err)
	}
	// The store metrics name the backend that served them (a loopback
	// listener serves /metrics by default).
	if resp, body := srv.get(t, "/metrics"); resp.StatusCode != http.StatusOK ||
		!bytes.Contains(body, []byte(`backend="postgres"`)) || bytes.Contains(body, []byte(`backend="bbolt"`)) {
		t.Errorf("GET /metrics = %d; want store operations labelled backend=\"postgres\" only", resp.StatusCode)
	}
	if _, err := os.Stat(filepath.Join(srv.dataDir, storeFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a bbolt file was made beside a postgres store: stat error = %v", err)
	}
	// Another process reading the database sees the verdict.
	st, err := store.OpenPostgres(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Receipt(context.Background(), verdict.VerificationID); err != nil {
		t.Errorf("the verdict is not in the database: %v", err)
	}
}

// TestStoreFlag checks VERIFIER_STORE as the default of --store, and that a
// URL of another kind is refused without echoing it (it may hold a
// password).
func TestStoreFlag(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	var f serverFlags
	f.register(fs, func(name string) string {
		if name == "VERIFIER_STORE" {
			return "postgres://db.internal/verifier"
		}
		return ""
	})
	if err := fs.Parse(nil); err != nil || f.storeURL != "postgres://db.internal/verifier" {
		t.Errorf("--store from VERIFIER_STORE = %q, %v", f.storeURL, err)
	}
	for _, bad := range []string{"mysql://user:s3cret@db/verifier", "/var/lib/verifier.db"} {
		err := run(context.Background(), []string{"--data-dir", t.TempDir(), "--store", bad}, strings.NewReader(""), io.Discard, io.Discard, testEnv)
		if err == nil || !strings.Contains(err.Error(), "--store") || strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), bad) {
			t.Errorf("run(--store %q) = %v, want a refusal naming --store and not the URL", bad, err)
		}
	}
}

// TestStoreCopyServesTheSameHistory serves on bbolt, copies the file into
// Postgres with `verifier store copy` (twice: idempotent), then serves on
// Postgres: the same reputation and receipts, byte for byte.
func TestStoreCopyServesTheSameHistory(t *testing.T) {
	const public = "http://verifier.example"
	first := startHTTP(t, "--public-url", public)
	pass := mustRead(t, filepath.Join("testdata", "invoice-pass.json"))
	fail := mustRead(t, filepath.Join("testdata", "invoice-fail.json"))
	var ids []string
	for _, body := range [][]byte{pass, fail, pass} {
		resp, answer := first.post(t, "/verify/schema", body)
		var v struct {
			VerificationID string `json:"verification_id"`
		}
		if err := json.Unmarshal(answer, &v); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("POST /verify/schema = %d %s", resp.StatusCode, answer)
		}
		ids = append(ids, v.VerificationID)
	}
	paths := []string{"/reputation/seller-7", "/reputation/seller-7?limit=1"}
	for _, id := range ids {
		paths = append(paths, "/receipts/"+id)
	}
	before := map[string]string{}
	for _, p := range paths {
		_, body := first.get(t, p)
		before[p] = string(body)
	}
	if err := first.stop(t); err != nil {
		t.Fatalf("stopping the bbolt server: %v", err)
	}

	url := pgtest.NewDatabase(t)
	for round := 1; round <= 2; round++ {
		var stdout, stderr strings.Builder
		err := run(context.Background(), []string{"store", "copy", "--from", filepath.Join(first.dataDir, storeFile), "--to", url},
			strings.NewReader(""), &stdout, &stderr, testEnv)
		if err != nil {
			t.Fatalf("store copy %d: %v\n%s", round, err, stderr.String())
		}
		var report store.CopyReport
		if err := json.Unmarshal([]byte(stdout.String()), &report); err != nil || report.Verdicts != 3 || report.Sampled < 2 {
			t.Errorf("store copy %d printed %s (%v), want 3 verdicts copied and a sample checked", round, stdout.String(), err)
		}
	}

	second := startHTTP(t, "--data-dir", first.dataDir, "--store", url, "--public-url", public)
	for _, p := range paths {
		resp, body := second.get(t, p)
		if resp.StatusCode != http.StatusOK || string(body) != before[p] {
			t.Errorf("GET %s on Postgres = %d\n%s\nwant what bbolt served:\n%s", p, resp.StatusCode, body, before[p])
		}
	}
}

// TestStoreCopyRefusals checks the command's usage errors.
func TestStoreCopyRefusals(t *testing.T) {
	for _, args := range [][]string{
		{"store"}, {"store", "move"}, {"store", "copy", "--to", "postgres://h/db"},
		{"store", "copy", "--from", "x.db", "--to", "mysql://u:s3cret@h/db"},
	} {
		err := run(context.Background(), args, strings.NewReader(""), io.Discard, io.Discard, testEnv)
		if err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("run(%q) = %v, want a refusal that does not echo the URL", args, err)
		}
	}
}
