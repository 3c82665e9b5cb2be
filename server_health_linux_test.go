package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/internal/diskfault"
)

// TestServeHTTPHealthFollowsWrites: with verifier.db refusing writes (as on
// a full disk), GET /health turns 503 — after a verification's failed write,
// and, with no verification at all, after the write probe
// (--store-probe-interval) — and back to 200 once writes succeed again.
func TestServeHTTPHealthFollowsWrites(t *testing.T) {
	srv := startHTTP(t, "--store-probe-interval", "20ms")
	db := filepath.Join(srv.dataDir, storeFile)
	invoice := mustRead(t, filepath.Join("testdata", "invoice-pass.json"))
	waitHealth := func(want int, why string) {
		t.Helper()
		start := time.Now()
		deadline := start.Add(10 * time.Second)
		for {
			resp, body := srv.get(t, "/health")
			if resp.StatusCode == want {
				t.Logf("GET /health = %d %s after %s", want, why, time.Since(start).Round(time.Millisecond))
				if strings.Contains(string(body), srv.dataDir) || strings.Contains(string(body), storeFile) {
					t.Errorf("GET /health names the store's path: %s", body)
				}
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("GET /health = %d %s for 10 s, want %d %s", resp.StatusCode, body, want, why)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	breakWrites := func() (restore func()) {
		t.Helper()
		undo, err := diskfault.BreakWrites(db)
		if err != nil {
			t.Fatal(err)
		}
		done := false
		restore = func() {
			if !done {
				done = true
				if err := undo(); err != nil {
					t.Fatal(err)
				}
			}
		}
		t.Cleanup(restore)
		return restore
	}

	waitHealth(http.StatusOK, "on a new store")

	// A failed verdict write: the client gets 503 and so does /health at once.
	restore := breakWrites()
	if resp, body := srv.post(t, "/verify/schema", invoice); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("POST /verify/schema with the store refusing writes = %d %s, want 503", resp.StatusCode, body)
	}
	if resp, body := srv.get(t, "/health"); resp.StatusCode != http.StatusServiceUnavailable ||
		!strings.Contains(string(body), "last write to its store failed") {
		t.Errorf("GET /health right after a failed verdict write = %d %s, want 503 naming the failed write", resp.StatusCode, body)
	}
	restore()
	waitHealth(http.StatusOK, "once the probe's write succeeds again")
	if resp, body := srv.post(t, "/verify/schema", invoice); resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /verify/schema after the fault = %d %s", resp.StatusCode, body)
	}

	// No verification at all: the probe finds the fault, then the recovery.
	restore = breakWrites()
	waitHealth(http.StatusServiceUnavailable, "from the write probe")
	restore()
	waitHealth(http.StatusOK, "once the probe's write succeeds again")

	if err := srv.stop(t); err != nil {
		t.Fatalf("run = %v after the faults\n%s", err, srv.stderr)
	}
}
