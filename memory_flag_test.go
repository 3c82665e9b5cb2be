package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
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
	// 2^18 schema applications: tens of milliseconds each, so that eight
	// calls sent at once overlap.
	var defs []string
	for i := range 18 {
		defs = append(defs, fmt.Sprintf(`"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i+1, i+1))
	}
	body := []byte(`{"task_id":"busy","expected_schema":{"$defs":{` + strings.Join(defs, ",") + `,"d18":{"type":"integer"}},"$ref":"#/$defs/d0"},"submitted_output":1}`)
	burst := func(srv *httpServer) map[int]int {
		statuses := map[int]int{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				resp, err := http.Post(srv.base+"/verify/schema", "application/json", bytes.NewReader(body))
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mu.Lock()
				statuses[resp.StatusCode]++
				mu.Unlock()
			})
		}
		wg.Wait()
		return statuses
	}
	alone := burst(startHTTP(t, "--max-concurrent", "8", "--max-memory", "1", "--max-queued", "0"))
	if alone[http.StatusOK] == 0 || alone[http.StatusServiceUnavailable] == 0 || alone[http.StatusOK]+alone[http.StatusServiceUnavailable] != 8 {
		t.Errorf("--max-memory 1 --max-queued 0, 8 calls at once: statuses %v, want some 200 and some 503, nothing else", alone)
	}
	if queued := burst(startHTTP(t, "--max-concurrent", "8", "--max-memory", "1", "--max-queued", "8", "--queue-wait", "2m")); queued[http.StatusOK] != 8 {
		t.Errorf("--max-memory 1 --max-queued 8, 8 calls at once: statuses %v, want 8 × 200 served in turn", queued)
	}
}
