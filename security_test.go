package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestNothingFetched: the server never fetches anything a request names
// (SPEC §1). A schema whose $ref, $schema, $id or $dynamicRef points at a
// listening server, a format "uri" value naming it, and a receipt whose
// public_key_url names it are all answered without one request reaching
// it, over REST, MCP and the CLI.
func TestNothingFetched(t *testing.T) {
	var hits atomic.Int32
	bait := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/schema+json")
		io.WriteString(w, `{"type":"integer"}`)
	}))
	defer bait.Close()
	u := bait.URL
	schemas := []struct {
		name, schema string
		status       int
	}{
		{"remote $ref", `{"$ref":"` + u + `/schema.json"}`, http.StatusUnprocessableEntity},
		{"remote $ref in $defs", `{"$defs":{"a":{"$ref":"` + u + `/a.json#/x"}},"$ref":"#/$defs/a"}`, http.StatusUnprocessableEntity},
		{"relative $ref against a remote $id", `{"$id":"` + u + `/root.json","$ref":"other.json"}`, http.StatusUnprocessableEntity},
		{"remote $schema", `{"$schema":"` + u + `/meta.json"}`, http.StatusUnprocessableEntity},
		{"remote $dynamicRef", `{"$dynamicRef":"` + u + `/d.json#node"}`, http.StatusUnprocessableEntity},
		{"format uri", `{"type":"string","format":"uri"}`, http.StatusOK},
	}
	srv := startHTTP(t)
	dataDir := t.TempDir()
	for _, tt := range schemas {
		t.Run(tt.name, func(t *testing.T) {
			output := `1`
			if tt.status == http.StatusOK {
				output = `"` + u + `/x"`
			}
			body := []byte(`{"task_id":"ssrf","expected_schema":` + tt.schema + `,"submitted_output":` + output + `}`)
			if resp, got := srv.post(t, "/verify/schema", body); resp.StatusCode != tt.status {
				t.Errorf("REST: status %d, want %d: %s", resp.StatusCode, tt.status, got)
			}
			mcpCall := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"verify_schema","arguments":` + string(body) + `}}`
			req, _ := http.NewRequest(http.MethodPost, srv.base+"/mcp", strings.NewReader(mcpCall))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if resp, err := http.DefaultClient.Do(req); err != nil {
				t.Errorf("MCP: %v", err)
			} else {
				resp.Body.Close()
			}
			_, line, code := runVerifyCLI(t, dataDir, body)
			if wantCode := map[int]int{http.StatusOK: 0, http.StatusUnprocessableEntity: 2}[tt.status]; code != wantCode {
				t.Errorf("CLI: exit %d, want %d: %.300s", code, wantCode, line)
			}
		})
	}
	// A receipt naming the bait as its key URL: checking it uses the
	// server's own keys, never the URL.
	_, answer := srv.post(t, "/verify/schema", []byte(`{"task_id":"ssrf","expected_schema":true,"submitted_output":1}`))
	var receipt map[string]any
	if err := json.Unmarshal(answer, &receipt); err != nil {
		t.Fatal(err)
	}
	receipt["verify"].(map[string]any)["public_key_url"] = u + "/.well-known/agent-card.json"
	args, _ := json.Marshal(map[string]any{"receipt": receipt})
	mcpCall := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"verify_receipt","arguments":` + string(args) + `}}`
	req, _ := http.NewRequest(http.MethodPost, srv.base+"/mcp", strings.NewReader(mcpCall))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n := hits.Load(); n != 0 {
		t.Errorf("the bait server was fetched %d times", n)
	}
}

// TestMaxConcurrentFlag: --max-concurrent bounds the verifications running
// at once (the excess gets 503 unavailable with Retry-After), 0 lifts the
// bound, and a negative value is refused.
func TestMaxConcurrentFlag(t *testing.T) {
	var stderr bytes.Buffer
	err := run(context.Background(), []string{"--data-dir", t.TempDir(), "--max-concurrent", "-1"}, strings.NewReader(""), io.Discard, &stderr, testEnv)
	if err == nil || !strings.Contains(err.Error(), "--max-concurrent") {
		t.Errorf("--max-concurrent -1: %v, want an error naming the flag", err)
	}
	one := burstOfBusyCalls(t, startHTTP(t, "--max-concurrent", "1", "--max-queued", "0"))
	if one[http.StatusOK] == 0 || one[http.StatusServiceUnavailable] == 0 || one[http.StatusOK]+one[http.StatusServiceUnavailable] != 8 {
		t.Errorf("--max-concurrent 1 --max-queued 0, 8 calls at once: statuses %v, want some 200 and some 503, nothing else", one)
	}
	if queued := burstOfBusyCalls(t, startHTTP(t, "--max-concurrent", "1", "--max-queued", "8", "--queue-wait", "2m")); queued[http.StatusOK] != 8 {
		t.Errorf("--max-concurrent 1 --max-queued 8, 8 calls at once: statuses %v, want 8 × 200 served in turn", queued)
	}
	if unbounded := burstOfBusyCalls(t, startHTTP(t, "--max-concurrent", "0")); unbounded[http.StatusOK] != 8 {
		t.Errorf("--max-concurrent 0, 8 calls at once: statuses %v, want 8 × 200", unbounded)
	}
}

// burstOfBusyCalls sends eight verifications of 2^18 schema applications
// each (tens of milliseconds, so that calls sent at once overlap) to srv at
// once and counts their statuses. A 503 must carry Retry-After.
func burstOfBusyCalls(t *testing.T, srv *httpServer) map[int]int {
	t.Helper()
	var defs []string
	for i := range 18 {
		defs = append(defs, fmt.Sprintf(`"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i+1, i+1))
	}
	body := []byte(`{"task_id":"busy","expected_schema":{"$defs":{` + strings.Join(defs, ",") + `,"d18":{"type":"integer"}},"$ref":"#/$defs/d0"},"submitted_output":1}`)
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
			if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") == "" {
				t.Error("503 without Retry-After")
			}
			mu.Lock()
			statuses[resp.StatusCode]++
			mu.Unlock()
		})
	}
	wg.Wait()
	return statuses
}
