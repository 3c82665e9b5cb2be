package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/contract"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

func TestMCPRecord(t *testing.T) {
	svc := testkit.QuietService(t, true)
	c := testkit.ConnectMCP(t, NewMCPServer(svc))
	ctx := context.Background()
	for _, name := range []string{"invoice-pass.json", "invoice-fail.json", "invoice-pass.json"} {
		if _, err := svc.Verify(ctx, testkit.ReadTestdata(t, name)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, agentID string
		history       bool
		total         float64
		wantText      string
	}{
		{"known agent", "seller-7", true, 3, "from 3 verdict(s), 2 passed"},
		{"unknown agent", "nobody-ever", false, 0, "No verdicts are recorded for this agent yet"},
		{"test agent", "test-seller", false, 0, "kept out of reputation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := c.Call(t, contract.Record, `{"agent_id":"`+tt.agentID+`"}`)
			if res.IsError {
				t.Fatalf("isError: %s", testkit.Text(res))
			}
			rec := testkit.Structured(t, res)
			inputs := rec["inputs"].(map[string]any)
			if rec["agent_id"] != tt.agentID || rec["has_history"] != tt.history || inputs["total"] != tt.total {
				t.Errorf("record agent %v has_history %v total %v, want %s %t %v", rec["agent_id"], rec["has_history"], inputs["total"], tt.agentID, tt.history, tt.total)
			}
			if got := len(rec["recent_verdicts"].([]any)); got != int(tt.total) {
				t.Errorf("recent_verdicts has %d entries, want %v", got, tt.total)
			}
			if !strings.Contains(testkit.Text(res), tt.wantText) {
				t.Errorf("text = %q, want it to contain %q", testkit.Text(res), tt.wantText)
			}
			report, err := signing.VerifyReceipt(testkit.StructuredJSON(t, res), svc.Keys)
			if err != nil || report.Context != signing.ContextTrustScore {
				t.Errorf("record does not verify under the trust-score context: %v (context %q)", err, report.Context)
			}
		})
	}
}

func TestMCPRecordInvalidArguments(t *testing.T) {
	c := testkit.ConnectMCP(t, NewMCPServer(testkit.QuietService(t, true)))
	tests := []struct{ name, args string }{
		{"no arguments", ``},
		{"empty agent_id", `{"agent_id":""}`},
		{"agent_id too long", `{"agent_id":"` + strings.Repeat("é", tools.MaxAgentIDChars+1) + `"}`},
		{"agent_id not a string", `{"agent_id":7}`},
		{"agent_id null", `{"agent_id":null}`},
		{"unknown argument", `{"agent_id":"a","limit":3}`},
		{"duplicate argument", `{"agent_id":"a","agent_id":"b"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := c.Call(t, contract.Record, tt.args)
			field := "agent_id"
			if strings.Contains(tt.name, "argument") && tt.name != "no arguments" {
				field = "arguments"
			}
			testkit.WantError(t, res, tools.CodeInvalidRequest, 422, field)
		})
	}
}

func TestMCPRecordWithoutStore(t *testing.T) {
	c := testkit.ConnectMCP(t, NewMCPServer(testkit.QuietService(t, false)))
	res := c.Call(t, contract.Record, `{"agent_id":"seller-7"}`)
	testkit.WantError(t, res, tools.CodeUnavailable, 503)
}
