//go:build x402e2e

// The end-to-end test of a real `verifier --http --network testnet`
// process with payments on, paid by the real x402 client (@x402/fetch,
// pay.mjs) through the real facilitator logic (facilitator.mjs).
// .ci/x402-e2e.sh builds the binary, installs the npm packages and starts
// the facilitator; with the tag, anything missing is a failure.

package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/internal/x402test"
	"github.com/verifier-dev/verifier/payment"
)

const e2ePayTo = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"

// x402E2E is what .ci/x402-e2e.sh provides, and the verifier binary it
// built.
type x402E2E struct {
	x402test.Env
	bin string
}

func loadX402E2E(t *testing.T) x402E2E {
	t.Helper()
	e := x402E2E{Env: x402test.LoadEnv(t), bin: os.Getenv("X402_VERIFIER_BIN")}
	if e.bin == "" {
		t.Fatal("X402_VERIFIER_BIN must be set by .ci/x402-e2e.sh")
	}
	if _, err := os.Stat(e.bin); err != nil {
		t.Fatal(err)
	}
	return e
}

// startVerifier runs the binary on 127.0.0.1:0 with a temp data dir and
// args, and returns its base URL once it listens.
func (e x402E2E) startVerifier(t *testing.T, args ...string) string {
	t.Helper()
	base, _ := e.startVerifierEnv(t, nil, args...)
	return base
}

// startVerifierEnv is startVerifier with env ("NAME=value") added to the
// process's environment; it also returns what the process logs.
func (e x402E2E) startVerifierEnv(t *testing.T, env []string, args ...string) (string, *lockedBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	all := append([]string{"--http", "127.0.0.1:0", "--data-dir", t.TempDir()}, args...)
	cmd := exec.CommandContext(ctx, e.bin, all...)
	cmd.Env = append(os.Environ(), env...)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if m := servingLine.FindStringSubmatch(stderr.String()); m != nil {
			return "http://" + m[1], stderr
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the verifier did not start:\n%s", stderr)
	return "", nil
}

type payOutcome struct {
	Status           int                     `json:"status"`
	PaymentResponse  *payment.SettleResponse `json:"paymentResponse"`
	Body             map[string]any          `json:"body"`
	PaymentSignature *string                 `json:"paymentSignature"`
	Requests         int                     `json:"requests"`
}

// pay runs pay.mjs, the real @x402/fetch client with a fresh key, with
// the body in bodyFile (none when "").
func (e x402E2E) pay(t *testing.T, method, url, bodyFile string) payOutcome {
	t.Helper()
	var body []byte
	if bodyFile != "" {
		var err error
		if body, err = os.ReadFile(bodyFile); err != nil {
			t.Fatal(err)
		}
	}
	var p payOutcome
	e.Pay(t, method, url, body, &p)
	return p
}

// call sends a request from Go, with an optional Payment-Signature.
func call(t *testing.T, method, url string, body []byte, sig string) (int, http.Header, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if sig != "" {
		req.Header.Set("Payment-Signature", sig)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return resp.StatusCode, resp.Header, m
}

func TestE2EVerifierProcess(t *testing.T) {
	e := loadX402E2E(t)
	base := e.startVerifier(t, "--network", "testnet", "--pay-to-evm", e2ePayTo, "--facilitator", e.Facilitator, "--free-per-day", "1")
	passFile, failFile := filepath.Join("testdata", "invoice-pass.json"), filepath.Join("testdata", "invoice-fail.json")
	pass := mustRead(t, passFile)
	verdicts := func() float64 {
		_, _, rep := call(t, "GET", base+"/reputation/seller-7", nil, "")
		n, _ := rep["total"].(float64)
		return n
	}

	status, h, _ := call(t, "POST", base+"/verify/schema", pass, "")
	if status != 200 || h.Get("Free-Allowance-Remaining") != "0" {
		t.Fatalf("free call = %d, remaining %q", status, h.Get("Free-Allowance-Remaining"))
	}
	status, h, body := call(t, "POST", base+"/verify/schema", nil, "")
	ft, _ := body["free_trial"].(map[string]any)
	if pr, err := payment.DecodePaymentRequired(h.Get("Payment-Required")); status != 402 || err != nil || pr.Accepts[0].Network != "eip155:84532" || ft["code"] != payment.CodeFreeTrialExhausted {
		t.Fatalf("probe = %d %v %v", status, err, body)
	}

	paid := e.pay(t, "POST", base+"/verify/schema", passFile)
	if paid.Status != 200 || paid.Body["result"] != "pass" || paid.PaymentResponse == nil || !paid.PaymentResponse.Success || paid.PaymentResponse.Transaction == "" {
		t.Fatalf("paid verify = %+v", paid)
	}
	v := verdicts()
	// The same payment for another request (the same one gets its kept answer).
	if status, _, body := call(t, "POST", base+"/verify/deliverable", pass, *paid.PaymentSignature); status != 402 || body["code"] != payment.CodePaymentReplayed || verdicts() != v {
		t.Errorf("replay = %d %v (verdicts %v → %v)", status, body["code"], v, verdicts())
	}
	if p := e.pay(t, "POST", base+"/verify/deliverable", failFile); p.Status != 200 || p.Body["result"] != "fail" || p.PaymentResponse == nil || !p.PaymentResponse.Success {
		t.Errorf("fail verdict = %d %v %+v", p.Status, p.Body["result"], p.PaymentResponse)
	}
	if p := e.pay(t, "GET", base+"/score/seller-7", ""); p.Status != 200 || p.Body["has_history"] != true || p.PaymentResponse == nil || !p.PaymentResponse.Success {
		t.Errorf("paid score = %d %+v", p.Status, p.PaymentResponse)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"task_id":"t"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if p := e.pay(t, "POST", base+"/verify/schema", bad); p.Status != 422 || p.Requests != 1 || p.PaymentSignature != nil {
		t.Errorf("invalid request = %+v, want 422 with no payment step", p)
	}

	// Payments signed for another price or payee, at verifiers whose
	// facilitator is down (503 there, nothing stored; started without the
	// check at start, which would refuse), are refused here.
	for _, other := range [][]string{{"--price-verify", "0.001"}, {"--pay-to-evm", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"}} {
		args := append([]string{"--network", "testnet", "--pay-to-evm", e2ePayTo, "--facilitator", "http://127.0.0.1:9",
			"--facilitator-timeout", "1s", "--free-per-day", "0", "--facilitator-check=false"}, other...)
		down := e.startVerifier(t, args...)
		p := e.pay(t, "POST", down+"/verify/schema", passFile)
		if p.Status != 503 || p.Body["code"] != payment.CodeFacilitatorUnavailable || p.Body["retryable"] != true || p.PaymentSignature == nil {
			t.Fatalf("facilitator down (%v) = %+v", other, p)
		}
		if _, _, rep := call(t, "GET", down+"/reputation/seller-7", nil, ""); rep["total"] != float64(0) {
			t.Errorf("a verdict was stored while the facilitator was down: %v", rep)
		}
		v := verdicts()
		status, _, body := call(t, "POST", base+"/verify/schema", pass, *p.PaymentSignature)
		if status != 402 || body["code"] != payment.CodePaymentInvalid || verdicts() != v {
			t.Errorf("payment for %v = %d %v", other, status, body)
		}
		raw, _ := base64.StdEncoding.DecodeString(*p.PaymentSignature)
		if !bytes.Contains(raw, []byte(`"x402Version":2`)) {
			t.Errorf("the client did not send x402 v2: %s", raw)
		}
	}
	if status, _, wk := call(t, "GET", base+"/.well-known/x402", nil, ""); status != 200 || wk["payment"] != "on" || wk["network"] != "testnet" {
		t.Errorf("/.well-known/x402 = %d %v", status, wk)
	}
}
