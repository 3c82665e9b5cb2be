package tools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// resign replaces members of a signed answer and signs it again with the
// service's own key, as a dishonest signer could.
func resign(t *testing.T, svc *tools.Service, answer []byte, changes map[string]any) []byte {
	t.Helper()
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(answer, &doc); err != nil {
		t.Fatal(err)
	}
	var att signing.Attestation
	if err := json.Unmarshal(doc["attestation"], &att); err != nil {
		t.Fatal(err)
	}
	delete(doc, "attestation")
	for k, v := range changes {
		doc[k], _ = json.Marshal(v)
	}
	body, _ := json.Marshal(doc)
	out, err := svc.Keys.Current().Sign(signing.ContextVerify, body, att.Timestamp)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCheckReceiptRerunsTheVerdict: a validly signed receipt whose verdict
// the request does not reproduce is caught by the re-run, not by the
// signature.
func TestCheckReceiptRerunsTheVerdict(t *testing.T) {
	svc := testkit.NewTestService(t, false)
	request := testkit.ReadTestdata(t, "invoice-fail.json")
	res, err := svc.Verify(context.Background(), request)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		changes   map[string]any
		wantCheck string // the check that must fail; "" = all hold
	}{
		{"honest", nil, ""},
		{"verdict flipped", map[string]any{"result": "pass"}, "verdict"},
		{"counts inflated", map[string]any{"overall": map[string]any{"ratio": 1, "passed": 40, "total": 40}}, "overall"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			receipt := res.Answer
			if tt.changes != nil {
				receipt = resign(t, svc, res.Answer, tt.changes)
			}
			report, err := svc.CheckReceipt(receipt, request, svc.Keys)
			if (err == nil) != (tt.wantCheck == "") || report.Valid != (tt.wantCheck == "") {
				t.Fatalf("CheckReceipt valid = %v, err = %v; want valid %v", report.Valid, err, tt.wantCheck == "")
			}
			for _, c := range report.Checks {
				if c.Name == signing.CheckSignature && !c.OK {
					t.Errorf("signature check failed; the re-signed receipt must pass it: %+v", c)
				}
				if tt.wantCheck != "" && c.Name == tt.wantCheck && c.OK {
					t.Errorf("check %s held, want it to fail", c.Name)
				}
			}
		})
	}
}

func TestCheckReceiptWithoutRequest(t *testing.T) {
	svc := testkit.NewTestService(t, false)
	res, err := svc.Verify(context.Background(), testkit.ReadTestdata(t, "invoice-pass.json"))
	if err != nil {
		t.Fatal(err)
	}
	if report, err := svc.CheckReceipt(res.Answer, nil, svc.Keys); err != nil || !report.Valid {
		t.Errorf("CheckReceipt = %+v, %v; want valid", report, err)
	}
	tampered := bytes.Replace(res.Answer, []byte(`"result":"pass"`), []byte(`"result":"fail"`), 1)
	if report, err := svc.CheckReceipt(tampered, nil, svc.Keys); err == nil || report.Valid {
		t.Error("a tampered receipt verifies")
	}
}
