package tools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

func TestVerifyStoresCompactReceipt(t *testing.T) {
	svc := testkit.NewTestService(t, true)
	res, err := svc.Verify(context.Background(), testkit.ReadTestdata(t, "invoice-fail.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := svc.Store.Receipt(context.Background(), res.Verdict.VerificationID)
	if err != nil {
		t.Fatalf("Receipt: %v", err)
	}
	var receipt map[string]any
	if err := json.Unmarshal(got.Receipt, &receipt); err != nil {
		t.Fatal(err)
	}
	if _, full := receipt["hints"]; full {
		t.Error("stored receipt has hints; want the compact shape")
	}
	report, err := signing.VerifyReceipt(got.Receipt, svc.Keys)
	if err != nil || !report.Valid {
		t.Errorf("stored receipt does not verify: %v %+v", err, report)
	}
	if got.Result != "fail" || got.AgentID != "seller-7" || got.OutputHash == "" {
		t.Errorf("stored verdict = %+v", got)
	}
	if bytes.Contains(got.Receipt, []byte("Review pass")) {
		t.Error("the stored receipt holds the submitted output")
	}
}

func TestVerifyInvalidRequest(t *testing.T) {
	svc := testkit.NewTestService(t, false)
	_, err := svc.Verify(context.Background(), []byte(`{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":[{"type":"MARKER","field":"a"}]}`))
	e := tools.AsError(err)
	if e.Code != tools.CodeInvalidRequest || e.Status != 422 || e.Charged != payment.ChargeNone || e.Retryable {
		t.Fatalf("error = %+v, want a 422 invalid_request", e)
	}
	if len(e.Fields) != 1 || e.Fields[0].Field != "rules[0].type" || e.Fields[0].Fix == "" {
		t.Errorf("fields = %+v, want rules[0].type with a fix", e.Fields)
	}
	b, _ := json.Marshal(e)
	if bytes.Contains(b, []byte("MARKER")) {
		t.Errorf("error echoes the input: %s", b)
	}
}
