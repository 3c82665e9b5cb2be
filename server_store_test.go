package main

import (
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
