package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestMaxMemoryFlag: --max-memory is the memory budget of the running
// verifications. With a budget smaller than any request, each runs alone:
// without a waiting room the others of a burst get 503 unavailable, with
// one they are served in turn. A negative value is refused.
func TestMaxMemoryFlag(t *testing.T) {
	var stderr bytes.Buffer
	err := run(context.Background(), []string{"--data-dir", t.TempDir(), "--max-memory", "-1"}, strings.NewReader(""), io.Discard, &stderr, testEnv)
	if err == nil || !strings.Contains(err.Error(), "--max-memory") {
		t.Errorf("--max-memory -1: %v, want an error naming the flag", err)
	}
	alone := burstOfBusyCalls(t, startHTTP(t, "--max-concurrent", "8", "--max-memory", "1", "--max-queued", "0"))
	if alone[http.StatusOK] == 0 || alone[http.StatusServiceUnavailable] == 0 || alone[http.StatusOK]+alone[http.StatusServiceUnavailable] != 8 {
		t.Errorf("--max-memory 1 --max-queued 0, 8 calls at once: statuses %v, want some 200 and some 503, nothing else", alone)
	}
	if queued := burstOfBusyCalls(t, startHTTP(t, "--max-concurrent", "8", "--max-memory", "1", "--max-queued", "8", "--queue-wait", "2m")); queued[http.StatusOK] != 8 {
		t.Errorf("--max-memory 1 --max-queued 8, 8 calls at once: statuses %v, want 8 × 200 served in turn", queued)
	}
}
