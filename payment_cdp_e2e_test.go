//go:build x402e2e

// The end-to-end test of a real `verifier --http` process that signs its
// calls to the facilitator with a CDP API key: the loopback facilitator in
// its cdp mode checks each token with jose, the real x402 client pays.

package main

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/internal/x402test"
)

// TestE2ECDPVerifierProcess: with the key in CDP_API_KEY_ID and
// CDP_API_KEY_SECRET (EC P-256, then Ed25519), the process checks the
// facilitator at start and a paid call goes through; with a key the
// facilitator does not know, the process refuses to start, and unchecked it
// answers a paying client 503 facilitator_unavailable, nothing settled,
// /health saying the credentials are refused. No secret reaches its log.
func TestE2ECDPVerifierProcess(t *testing.T) {
	e := loadX402E2E(t)
	passFile := filepath.Join("testdata", "invoice-pass.json")
	const keyID = "9b2e7c1d-4a3f-4e8b-a6d5-0c1f2e3d4a5b"
	for _, alg := range []string{"ES256", "EdDSA"} {
		t.Run(alg, func(t *testing.T) {
			key, wrong := x402test.NewCDPKey(t, alg, keyID), x402test.NewCDPKey(t, alg, keyID)
			fac := x402test.StartCDPFacilitator(t, e.Tools, key)
			env := func(k x402test.CDPKey) []string {
				return []string{"CDP_API_KEY_ID=" + k.ID, "CDP_API_KEY_SECRET=" + k.Secret}
			}
			args := []string{"--network", "testnet", "--pay-to-evm", e2ePayTo, "--facilitator", fac, "--free-per-day", "0"}
			health := func(base string) map[string]any {
				status, _, h := call(t, "GET", base+"/health", nil, "")
				f, _ := h["facilitator"].(map[string]any)
				if status != 200 || f == nil {
					t.Fatalf("GET /health = %d %v, want 200 with a facilitator member", status, h)
				}
				return f
			}

			base, log := e.startVerifierEnv(t, env(key), args...)
			p := e.pay(t, "POST", base+"/verify/schema", passFile)
			if p.Status != 200 || p.PaymentResponse == nil || !p.PaymentResponse.Success {
				t.Fatalf("paid call = %+v, want 200 with a successful settlement", p)
			}
			if f := health(base); f["state"] != "ok" {
				t.Errorf("/health facilitator = %v, want ok", f)
			}

			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, e.bin, append([]string{"--http", "127.0.0.1:0", "--data-dir", t.TempDir()}, args...)...)
			cmd.Env = append(cmd.Environ(), env(wrong)...)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || !strings.Contains(string(out), "refused the credentials (HTTP 401 on GET /supported)") {
				t.Errorf("start with an unknown key = %v:\n%s\nwant a refusal naming the credentials", err, out)
			}

			unchecked, uncheckedLog := e.startVerifierEnv(t, env(wrong), append(args, "--facilitator-check=false")...)
			p = e.pay(t, "POST", unchecked+"/verify/schema", passFile)
			if p.Status != 503 || p.Body["code"] != "facilitator_unavailable" || p.PaymentResponse != nil {
				t.Errorf("paid call with an unknown key = %+v, want 503 facilitator_unavailable, nothing settled", p)
			}
			if f := health(unchecked); f["state"] != "failing" || f["cause"] != "refused the credentials (HTTP 401 on POST /verify)" {
				t.Errorf("/health facilitator = %v, want failing: the credentials refused", f)
			}

			all := log.String() + string(out) + uncheckedLog.String()
			for _, k := range []x402test.CDPKey{key, wrong} {
				for _, line := range strings.Split(k.Secret, "\n") {
					if len(line) >= 16 && strings.Contains(all, line) {
						t.Errorf("the secret is in the verifier's output:\n%s", all)
					}
				}
			}
		})
	}
}
