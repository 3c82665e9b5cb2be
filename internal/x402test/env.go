package x402test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Env is what .ci/x402-e2e.sh provides the end-to-end tests: a folder with
// the x402 client scripts (pay.mjs) and their node_modules, and the
// loopback facilitator it started.
type Env struct {
	Tools       string // the scripts' folder
	Facilitator string // the facilitator's base URL
}

// LoadEnv reads Env from X402_TOOLS and X402_FACILITATOR, failing the test
// unless X402_E2E=1, the scripts are installed, node is on PATH and the
// facilitator answers.
func LoadEnv(t testing.TB) Env {
	t.Helper()
	if os.Getenv("X402_E2E") != "1" {
		t.Fatal("X402_E2E=1 is not set: run this test through .ci/x402-e2e.sh")
	}
	env := Env{Tools: os.Getenv("X402_TOOLS"), Facilitator: os.Getenv("X402_FACILITATOR")}
	if env.Tools == "" || env.Facilitator == "" {
		t.Fatal("X402_TOOLS and X402_FACILITATOR must be set by .ci/x402-e2e.sh")
	}
	for _, p := range []string{"pay.mjs", "node_modules/@x402/fetch", "node_modules/@x402/evm"} {
		if _, err := os.Stat(filepath.Join(env.Tools, p)); err != nil {
			t.Fatalf("x402 tools incomplete: %v", err)
		}
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is needed: %v", err)
	}
	resp, err := http.Get(env.Facilitator + "/supported")
	if err != nil {
		t.Fatalf("the facilitator is not running at %s: %v", env.Facilitator, err)
	}
	resp.Body.Close()
	return env
}

// Pay runs pay.mjs, the real @x402/fetch client with a fresh key, for
// method and url with body (none when empty), and decodes what it prints
// into out.
func (e Env) Pay(t testing.TB, method, url string, body []byte, out any) {
	t.Helper()
	args := []string{"pay.mjs", method, url}
	if len(body) > 0 {
		f := filepath.Join(t.TempDir(), "body.json")
		if err := os.WriteFile(f, body, 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, f)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = e.Tools
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	printed, err := cmd.Output()
	if err != nil {
		t.Fatalf("node pay.mjs %s %s: %v\n%s", method, url, err, stderr.String())
	}
	if err := json.Unmarshal(bytes.TrimSpace(printed), out); err != nil {
		t.Fatalf("pay.mjs printed %q: %v", printed, err)
	}
}

// FacilitatorLog is what the facilitator was asked so far (GET /log).
type FacilitatorLog []struct {
	Op      string `json:"op"`
	Success *bool  `json:"success"`
	Reason  string `json:"reason"`
}

// Log reads the facilitator's log.
func (e Env) Log(t testing.TB) FacilitatorLog {
	t.Helper()
	resp, err := http.Get(e.Facilitator + "/log")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var l FacilitatorLog
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil {
		t.Fatal(err)
	}
	return l
}

// Settled counts the successful settlements in l.
func (l FacilitatorLog) Settled() int {
	n := 0
	for _, e := range l {
		if e.Op == "settle" && e.Success != nil && *e.Success {
			n++
		}
	}
	return n
}
