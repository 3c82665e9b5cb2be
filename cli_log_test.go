package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/verifier-dev/verifier/tools"
)

// postVerdicts verifies n invoices for agent over srv's REST route, every
// third one failing.
func postVerdicts(t *testing.T, srv *httpServer, agent string, n int) {
	t.Helper()
	for i := range n {
		file := "invoice-pass.json"
		if i%3 == 2 {
			file = "invoice-fail.json"
		}
		raw, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		var req map[string]any
		if err := json.Unmarshal(raw, &req); err != nil {
			t.Fatal(err)
		}
		req["agent_id"], req["task_id"] = agent, fmt.Sprint("e2e-", agent, "-", i)
		body, _ := json.Marshal(req)
		if resp, answer := srv.post(t, "/verify/schema", body); resp.StatusCode != http.StatusOK {
			t.Fatalf("verify status %d: %s", resp.StatusCode, answer)
		}
	}
}

// runAudit runs `verifier log audit` with args and env, and returns its
// output and exit code.
func runAudit(t *testing.T, env map[string]string, args ...string) (string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), append([]string{"log", "audit"}, args...), strings.NewReader(""), &stdout, &stderr, envWith(env))
	var ee exitError
	switch {
	case err == nil:
		return stdout.String(), 0
	case errors.As(err, &ee):
		return stdout.String() + stderr.String(), ee.code
	}
	t.Fatalf("log audit: %v\n%s%s", err, stdout.String(), stderr.String())
	return "", 0
}

// TestLogAuditEndToEnd: against a running server (main's own wiring) with
// history for an agent, `verifier log audit --url … --agent …` passes
// every check and saves the checkpoint in the default state file, named
// after the log's origin; after more verdicts a second audit proves the
// saved tree a prefix of the new one. A state file claiming a larger tree
// (the log was truncated since) fails the audit with exit 1 and stays as
// it was; usage errors exit 2.
func TestLogAuditEndToEnd(t *testing.T) {
	srv := startHTTP(t, "--public-url", "https://verifier.example/")
	postVerdicts(t, srv, "seller-9", 7)
	postVerdicts(t, srv, "seller-10", 2)
	env := map[string]string{"XDG_STATE_HOME": t.TempDir()}
	statePath := filepath.Join(env["XDG_STATE_HOME"], "verifier", "log-audit", "verifier.example_log.json")

	out, code := runAudit(t, env, "--url", srv.base, "--agent", "seller-9")
	if code != 0 {
		t.Fatalf("first audit exit %d:\n%s", code, out)
	}
	for _, line := range []string{"ok   log_checkpoint", "ok   log_receipts", "ok   record_score", "ok   record_log", "log audit passed: verifier.example/log, tree size 9"} {
		if !strings.Contains(out, line) {
			t.Errorf("first audit output lacks %q:\n%s", line, out)
		}
	}
	state, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatalf("state file: %v\n%s", err, out)
	}
	var saved tools.AuditState
	if err := json.Unmarshal(state, &saved); err != nil || saved.TreeSize != 9 || saved.Origin != "verifier.example/log" {
		t.Fatalf("state file = %s (%v), want the checkpoint of 9 records", state, err)
	}

	postVerdicts(t, srv, "seller-9", 4)
	out, code = runAudit(t, env, "--url", srv.base, "--agent", "seller-9", "--json")
	if code != 0 {
		t.Fatalf("second audit exit %d:\n%s", code, out)
	}
	var report struct {
		OK     bool `json:"ok"`
		Checks []struct {
			Name string `json:"name"`
			OK   bool   `json:"ok"`
		} `json:"checks"`
		State     tools.AuditState `json:"state"`
		StateFile string           `json:"state_file"`
	}
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	consistent := false
	for _, c := range report.Checks {
		consistent = consistent || c.Name == tools.CheckAuditConsistency && c.OK
	}
	if !report.OK || !consistent || report.State.TreeSize != 13 || report.StateFile != statePath {
		t.Errorf("second audit = %s; want ok, a consistency proof from 9 to 13 records, the state saved to %s", out, statePath)
	}

	// A state file from a larger tree: this log was truncated since.
	claimed := saved
	claimed.TreeSize = 40
	other := filepath.Join(t.TempDir(), "state.json")
	data, _ := json.Marshal(claimed)
	if err := os.WriteFile(other, data, 0o600); err != nil {
		t.Fatal(err)
	}
	out, code = runAudit(t, env, "--url", srv.base, "--state", other)
	if code != 1 || !strings.Contains(out, "FAIL log_truncation") || !strings.Contains(out, "state not saved") {
		t.Errorf("audit against a larger saved tree: exit %d\n%s\nwant exit 1 with FAIL log_truncation", code, out)
	}
	if after, _ := os.ReadFile(other); !bytes.Equal(after, data) {
		t.Errorf("a failed audit rewrote the state file: %s", after)
	}

	for _, args := range [][]string{{}, {"--url", "ftp://x"}, {"--url", srv.base, "extra"}, {"--url", srv.base, "--max-records", "0"}} {
		if out, code := runAudit(t, env, args...); code != 2 {
			t.Errorf("log audit %q: exit %d, want 2 (usage)\n%s", args, code, out)
		}
	}
	if _, code := runAudit(t, env, "--url", "http://127.0.0.1:1"); code != 1 {
		t.Errorf("log audit of an unreachable server: exit %d, want 1", code)
	}
}
