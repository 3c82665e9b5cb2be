package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/tools"
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

// TestMaxMemorySetsGoMemoryLimit: while a server runs, --max-memory sets
// the Go runtime's memory limit to the budget plus memoryLimitBase (the
// garbage collector then keeps the process near the budget rather than at
// twice it); GOMEMLIMIT set by the operator, or --max-memory 0, leaves the
// limit alone. The limit is restored when the server ends.
func TestMaxMemorySetsGoMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	for _, tt := range []struct {
		name  string
		args  []string
		env   string // GOMEMLIMIT
		limit int64
	}{
		{"budget", []string{"--max-memory", "300000000"}, "", 300000000 + memoryLimitBase},
		{"default budget", nil, "", tools.DefaultMaxMemory + memoryLimitBase},
		{"no budget", []string{"--max-memory", "0"}, "", before},
		{"GOMEMLIMIT wins", []string{"--max-memory", "300000000"}, "2GiB", before},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := func(name string) string {
				if name == "GOMEMLIMIT" {
					return tt.env
				}
				return testEnv(name)
			}
			inR, inW := io.Pipe()
			var stderr lockedBuffer
			done := make(chan error, 1)
			go func() {
				done <- run(context.Background(), append([]string{"--data-dir", t.TempDir()}, tt.args...), inR, io.Discard, &stderr, env)
			}()
			// The limit is set before the server reads its first line.
			deadline := time.Now().Add(30 * time.Second)
			for !strings.Contains(stderr.String(), "store opened") && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			got := debug.SetMemoryLimit(-1)
			inW.Close()
			if err := <-done; err != nil {
				t.Fatalf("run = %v\n%s", err, stderr.String())
			}
			if got != tt.limit {
				t.Errorf("memory limit while serving = %d, want %d\n%s", got, tt.limit, stderr.String())
			}
			if after := debug.SetMemoryLimit(-1); after != before {
				t.Errorf("memory limit after the server ended = %d, want %d as before", after, before)
			}
		})
	}
}
