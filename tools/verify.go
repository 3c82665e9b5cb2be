package tools

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/store"
)

// Verified is a signed verification answer.
type Verified struct {
	Answer  []byte // the signed answer, in the shape the request asked for
	Outcome *engine.Outcome
	Request *engine.Request
	Verdict store.Verdict // what was (or would be) stored
	// LogIndex is the verdict's record index in the transparency log, when
	// Logged (set by VerifyCall where the log is served).
	LogIndex int64
	Logged   bool
}

// Verify runs one verification request from its raw JSON body to a signed
// answer, and stores the verdict before returning when the service has a
// store. Errors are *Error values.
func (s *Service) Verify(ctx context.Context, body []byte) (*Verified, error) {
	return s.VerifyCall(ctx, VerifyCall{Body: body})
}

// verifyRequest verifies an already decoded request: checks, signs and,
// with storeVerdict, stores its verdict. With storeVerdict false the
// verdict (its compact receipt included) is left for the caller to store: a
// paid answer's verdict is stored with its settlement, once the answer is
// released. It holds a slot of s.Limiter, and the memory it is expected
// to need (requestMemory), while it works, and fails with 503 unavailable when
// they cannot be had.
func (s *Service) verifyRequest(ctx context.Context, req *engine.Request, storeVerdict bool) (*Verified, error) {
	release, busy := s.Limiter.Acquire(ctx, s.requestMemory(req))
	if busy != nil {
		return nil, busy
	}
	defer release()
	start := time.Now()
	hashes, err := s.Engine.Hashes(req, signing.HashCanonical)
	if err != nil {
		return nil, InvalidRequest([]engine.FieldProblem{{
			Field: "body", Problem: "cannot be canonicalized (RFC 8785)",
			Fix: "Send I-JSON: unique keys, valid UTF-8, finite numbers, integers within ±2^53.",
		}})
	}
	out, err := s.Engine.CheckContext(ctx, req, hashes.Schema)
	if ctx.Err() != nil { // the evaluation stopped, or finished too late
		return nil, NewError(CodeUnavailable, http.StatusServiceUnavailable,
			"The verification did not finish within the time limit. Nothing was charged; try again or send a smaller request.").WithRetryAfter(1)
	}
	if err != nil {
		return nil, AsError(err)
	}
	signer := s.Keys.Current()
	now := s.CurrentTime().UTC()
	meta := engine.AnswerMeta{
		VerificationID: uuid.NewString(),
		VerifiedAt:     now,
		Version:        s.Version,
		Hashes:         hashes,
		Verify:         s.verifyBlock(signer),
	}
	answer := s.Engine.NewAnswer(req, out, meta)
	signed, err := s.sign(answer)
	if err != nil {
		return nil, err
	}
	v := &Verified{Answer: signed, Outcome: out, Request: req, Verdict: store.Verdict{
		VerificationID:   meta.VerificationID,
		TaskID:           req.TaskID,
		Result:           out.Result(),
		OutputHash:       hashes.Output,
		SchemaHash:       hashes.Schema,
		RulesHash:        hashes.Rules,
		RequestHash:      hashes.Request,
		SchemaCompliance: store.Ratio(out.Schema),
		IntegrityChecks:  store.Ratio(out.Integrity),
		Overall:          store.Ratio(out.Overall),
		VerifiedAt:       now,
		KeyVersion:       signer.KeyVersion(),
	}}
	if req.AgentID != nil {
		v.Verdict.AgentID = *req.AgentID
	}
	if s.Store == nil {
		s.Metrics.observeVerification(v.Verdict.Result, time.Since(start))
		return v, nil
	}
	// The store keeps the compact receipt: sign it too when the caller asked
	// for the full answer.
	v.Verdict.Receipt = signed
	if req.Detail != engine.DetailCompact {
		compactReq := *req
		compactReq.Detail = engine.DetailCompact
		if v.Verdict.Receipt, err = s.sign(s.Engine.NewAnswer(&compactReq, out, meta)); err != nil {
			return nil, err
		}
	}
	// The write waits on the disk, not the CPU: the slot goes to the next
	// verification meanwhile (the deferred release then does nothing).
	release()
	worked := time.Since(start)
	if !storeVerdict {
		s.Metrics.observeVerification(v.Verdict.Result, worked)
		return v, nil
	}
	if err := s.Store.PutVerdict(ctx, v.Verdict); err != nil {
		s.Logger().Error("storing verdict", "verification_id", meta.VerificationID, "err", err)
		return nil, NewError(CodeUnavailable, http.StatusServiceUnavailable,
			"The verdict could not be stored, so no receipt was issued. Nothing was charged; send the request again.").WithRetryAfter(1)
	}
	s.Metrics.observeVerification(v.Verdict.Result, worked)
	return v, nil
}

// sign encodes an answer and appends its attestation: the signature covers
// the RFC 8785 form of the encoded answer, as receipt checking rebuilds it.
func (s *Service) sign(a *engine.Answer) ([]byte, error) {
	body, err := a.Marshal()
	if err != nil {
		return nil, err
	}
	receipt, err := s.Keys.Current().Sign(signing.ContextVerify, body, a.VerifiedAt)
	if err != nil {
		return nil, fmt.Errorf("signing answer: %w", err)
	}
	return receipt, nil
}

// JSONKind returns the JSON kind of a raw value: '{', '[', '"', '0', 't'/'f' or 'n'.
func JSONKind(raw []byte) byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0
	}
	switch c := raw[0]; {
	case c == '-' || (c >= '0' && c <= '9'):
		return '0'
	default:
		return c
	}
}
