package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/tools/contract"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// TestServeStdioAnswersBeforeEOF: a client that writes its requests and
// closes its end at once (a shell pipe) still gets every answer.
func TestServeStdioAnswersBeforeEOF(t *testing.T) {
	svc := testkit.NewTestService(t, false)
	call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 3, "method": "tools/call",
		"params": map[string]any{"name": contract.VerifySchema, "arguments": json.RawMessage(testkit.ReadTestdata(t, "invoice-pass.json"))}})
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		string(call),
	}, "\n") + "\n"
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := ServeStdio(ctx, svc, strings.NewReader(in), &out); err != nil {
		t.Fatalf("ServeStdio: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatal("ServeStdio returned only when the deadline passed")
	}
	ids := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var f struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Fatalf("stdout line is not JSON-RPC: %.80s", line)
		}
		ids[string(f.ID)] = true
	}
	for _, id := range []string{"1", "2", "3"} {
		if !ids[id] {
			t.Errorf("no answer to request %s; stdout:\n%.600s", id, out.String())
		}
	}
}
