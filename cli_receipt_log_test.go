package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/mcpserver"
	"github.com/verifier-dev/verifier/tools/rest"
)

// logServer serves verification and the transparency log of a bbolt store.
func logServer(t *testing.T) *httptest.Server {
	t.Helper()
	dir := t.TempDir()
	keys, err := signing.OpenKeyStore(filepath.Join(dir, "keys"), nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenBolt(filepath.Join(dir, "verifier.db"), &store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	logKey, err := signing.OpenLogKey(filepath.Join(dir, signing.LogKeyFile), rest.LogOrigin("http://verifier.test"))
	if err != nil {
		t.Fatal(err)
	}
	svc := &tools.Service{Engine: engine.New(nil), Keys: keys, Store: st, Version: "test",
		PublicURL: "http://verifier.test", Log: slog.New(slog.DiscardHandler)}
	opts := &rest.HTTPOptions{MCP: mcpserver.NewMCPHandler(svc)}
	rest.WithLog(svc, opts, logKey)
	h, err := rest.NewHTTPHandler(svc, opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// TestReceiptVerifyLog: `verifier receipt verify` checks a stored receipt's
// inclusion in the transparency log from a saved /log/proof (with the
// card's log key) and online with --log; a tampered proof, another
// checkpoint or a wrong log key fail, each with a named FAIL line.
func TestReceiptVerifyLog(t *testing.T) {
	srv := logServer(t)
	dir := t.TempDir()
	get := func(path string) []byte {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s = %d: %s", path, resp.StatusCode, body)
		}
		return body
	}
	save := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	req, err := os.ReadFile(filepath.Join("testdata", "invoice-pass.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	var fullAnswer []byte // the first verification's answer as sent: the full detail, signed
	for range 2 {
		resp, err := http.Post(srv.URL+"/verify/schema", "application/json", bytes.NewReader(req))
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		var ans struct {
			VerificationID string `json:"verification_id"`
		}
		if err != nil || resp.StatusCode != http.StatusOK || json.Unmarshal(body, &ans) != nil {
			t.Fatalf("POST /verify/schema = %d, %v", resp.StatusCode, err)
		}
		if fullAnswer == nil {
			fullAnswer = body
		}
		ids = append(ids, ans.VerificationID)
	}
	full := save("full.json", fullAnswer)
	receipt := save("receipt.json", get("/receipts/"+ids[0]))
	card := save("card.json", get("/.well-known/agent-card.json"))
	var c tools.AgentCard
	if err := json.Unmarshal(get("/.well-known/agent-card.json"), &c); err != nil || len(c.Capabilities.Extensions[0].Params.PublicKeys) == 0 {
		t.Fatalf("card: %v", err)
	}
	cardKey := c.Capabilities.Extensions[0].Params.PublicKeys[0].PublicKey
	proofDoc := get("/log/proof/" + ids[0])
	proof := save("proof.json", proofDoc)
	var p tools.LogProof
	if err := json.Unmarshal(proofDoc, &p); err != nil {
		t.Fatal(err)
	}
	p.InclusionProof[0] = p.Entry
	tampered, _ := json.Marshal(p)
	otherKey, err := signing.OpenLogKey(filepath.Join(dir, signing.LogKeyFile), rest.LogOrigin("http://verifier.test"))
	if err != nil {
		t.Fatal(err)
	}
	otherCheckpoint, err := otherKey.Checkpoint(p.TreeSize, [32]byte{})
	if err != nil {
		t.Fatal(err)
	}
	p.Checkpoint = string(otherCheckpoint)
	forged, _ := json.Marshal(p)
	// The receipt as another tool saves it: members sorted (not in the
	// stored order), pretty-printed, numbers as written; and with a value
	// changed.
	var members map[string]any
	dec := json.NewDecoder(bytes.NewReader(get("/receipts/" + ids[0])))
	dec.UseNumber()
	if err := dec.Decode(&members); err != nil {
		t.Fatal(err)
	}
	pretty, _ := json.MarshalIndent(members, "", "    ")
	if compact := new(bytes.Buffer); json.Compact(compact, pretty) != nil || bytes.Equal(compact.Bytes(), get("/receipts/"+ids[0])) {
		t.Fatal("the re-encoded receipt has its members in the stored order")
	}
	reencoded := save("reencoded.json", pretty)
	members["task_id"] = "another task"
	changedData, _ := json.MarshalIndent(members, "", "    ")
	changed := save("changed.json", changedData)

	for _, tt := range []struct {
		name     string
		args     []string
		wantCode int
		wantLine string
		receipt  string // default: the receipt as served
	}{
		{"saved proof, card's log key", []string{"--card", card, "--log-proof", proof}, 0, "ok   log_inclusion", ""},
		{"online", []string{"--card", card, "--log", srv.URL}, 0, "ok   log_inclusion", ""},
		{"online, the served card's log key", []string{"--key", cardKey, "--log", srv.URL}, 0, "ok   log_inclusion", ""},
		{"tampered proof", []string{"--card", card, "--log-proof", save("tampered.json", tampered)}, 1, "FAIL log_inclusion", ""},
		{"checkpoint of another log key", []string{"--card", card, "--log-proof", save("forged.json", forged)}, 1, "FAIL log_checkpoint", ""},
		{"wrong --log-key", []string{"--card", card, "--log-proof", proof, "--log-key", otherKey.VerifierKey()}, 1, "FAIL log_checkpoint", ""},
		{"another receipt's proof", []string{"--card", card, "--log-proof", save("other.json", get("/log/proof/"+ids[1]))}, 1, "FAIL log_entry", ""},
		{"receipt re-encoded: members reordered, pretty-printed", []string{"--card", card, "--log-proof", proof}, 0, "ok   log_inclusion", reencoded},
		{"receipt re-encoded with a value changed", []string{"--card", card, "--log-proof", proof}, 1, "FAIL log_entry", changed},
		// The default full answer: the log holds its stored compact form,
		// which --log fetches and matches member for member.
		{"full answer online", []string{"--card", card, "--log", srv.URL}, 0, "ok   log_entry", full},
		{"full answer online, no --card: the service's card", []string{"--log", srv.URL}, 0, "ok   log_inclusion", full},
		{"compact receipt online, no --card", []string{"--log", srv.URL}, 0, "ok   log_inclusion", ""},
		{"full answer, saved proof alone: no stored form to match", []string{"--card", card, "--log-proof", proof}, 1, "FAIL log_entry", full},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"receipt", "verify"}, tt.args...)
			file := receipt
			if tt.receipt != "" {
				file = tt.receipt
			}
			out, code := runCLI(t, "", append(args, file)...)
			if code != tt.wantCode || !strings.Contains(string(out), tt.wantLine) {
				t.Errorf("exit code = %d, want %d with a line %q:\n%s", code, tt.wantCode, tt.wantLine, out)
			}
		})
	}
}
