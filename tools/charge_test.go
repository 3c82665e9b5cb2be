package tools_test

import (
	"context"
	"errors"
	"testing"

	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// recordingCharge is a Charge that records what VerifyCall did with it.
type recordingCharge struct {
	paid      bool
	settleErr error
	settled   *payment.Answer
	released  int
}

func (c *recordingCharge) Paid() bool { return c.paid }

func (c *recordingCharge) Settle(_ context.Context, _ *tools.Verified, ans payment.Answer) error {
	c.settled = &ans
	return c.settleErr
}

func (c *recordingCharge) Release() { c.released++ }

// TestVerifyCallChain: VerifyCall runs the steps every transport shares in
// their order — the size limit before decoding, admission (with the schema
// check) after it, a free verdict stored by the work and a paid one handed
// to Settle instead, a settlement's error returned as it came — and gives
// back what an admission held on every way out.
func TestVerifyCallChain(t *testing.T) {
	ctx := context.Background()
	pass := testkit.ReadTestdata(t, "invoice-pass.json")
	uncompilable := []byte(`{"task_id":"t","expected_schema":{"type":"object","properties":{"n":{"type":5}}},"submitted_output":{"n":1}}`)
	refusal := errors.New("refused by the transport")
	admitted := func(c *recordingCharge) func(int64, func() *tools.Error) (tools.Charge, error) {
		return func(int64, func() *tools.Error) (tools.Charge, error) { return c, nil }
	}
	noAdmission := func(t *testing.T) func(int64, func() *tools.Error) (tools.Charge, error) {
		return func(int64, func() *tools.Error) (tools.Charge, error) {
			t.Error("Admit was called")
			return nil, refusal
		}
	}

	t.Run("size limit before decoding", func(t *testing.T) {
		svc := testkit.NewTestService(t, false)
		var size int64
		_, err := svc.VerifyCall(ctx, tools.VerifyCall{
			Body:       []byte("not JSON"),
			RefuseBody: func(n int64) error { size = n; return refusal },
			Admit:      noAdmission(t),
		})
		if err != refusal || size != int64(len("not JSON")) {
			t.Errorf("err %v, size %d; want the transport's refusal, asked for %d bytes", err, size, len("not JSON"))
		}
	})
	t.Run("invalid request never admitted", func(t *testing.T) {
		svc := testkit.NewTestService(t, false)
		_, err := svc.VerifyCall(ctx, tools.VerifyCall{Body: []byte(`{"task_id":""}`), Admit: noAdmission(t)})
		var e *tools.Error
		if !errors.As(err, &e) || e.Code != tools.CodeInvalidRequest {
			t.Errorf("err %v, want the 422", err)
		}
	})
	t.Run("admission checks the schema", func(t *testing.T) {
		svc := testkit.NewTestService(t, false)
		var checked *tools.Error
		_, err := svc.VerifyCall(ctx, tools.VerifyCall{Body: uncompilable,
			Admit: func(_ int64, check func() *tools.Error) (tools.Charge, error) {
				checked = check()
				return nil, checked
			}})
		if checked == nil || checked.Code != tools.CodeInvalidRequest || err != error(checked) {
			t.Errorf("check() = %v, err %v; want the 422 of the schema, returned", checked, err)
		}
	})
	t.Run("free call stored by the work", func(t *testing.T) {
		svc := testkit.NewTestService(t, true)
		c := &recordingCharge{}
		v, err := svc.VerifyCall(ctx, tools.VerifyCall{Body: pass, Admit: admitted(c)})
		if err != nil {
			t.Fatal(err)
		}
		if c.settled == nil || c.settled.Verdict != nil || string(c.settled.Body) != string(v.Answer) {
			t.Errorf("settled %+v; want the answer, no verdict", c.settled)
		}
		if _, err := svc.Store.Receipt(ctx, v.Verdict.VerificationID); err != nil {
			t.Errorf("the free verdict was not stored: %v", err)
		}
		if c.released != 1 {
			t.Errorf("Release called %d times, want once (after Settle)", c.released)
		}
	})
	t.Run("paid call stored with its settlement", func(t *testing.T) {
		svc := testkit.NewTestService(t, true)
		c := &recordingCharge{paid: true}
		v, err := svc.VerifyCall(ctx, tools.VerifyCall{Body: pass, Admit: admitted(c)})
		if err != nil {
			t.Fatal(err)
		}
		if c.settled == nil || c.settled.Verdict == nil || c.settled.Verdict.VerificationID != v.Verdict.VerificationID {
			t.Fatalf("settled %+v; want the answer with its verdict", c.settled)
		}
		if _, err := svc.Store.Receipt(ctx, v.Verdict.VerificationID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the work stored a paid verdict (err %v); Settle stores it", err)
		}
	})
	t.Run("failed settlement withholds the answer", func(t *testing.T) {
		svc := testkit.NewTestService(t, true)
		c := &recordingCharge{settleErr: refusal}
		v, err := svc.VerifyCall(ctx, tools.VerifyCall{Body: pass, Admit: admitted(c)})
		if err != refusal || v != nil {
			t.Errorf("VerifyCall = %v, %v; want no answer and the settlement's error", v, err)
		}
		if c.released != 1 {
			t.Errorf("Release called %d times, want once", c.released)
		}
	})
}
