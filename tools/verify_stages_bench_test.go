package tools_test

import (
	"testing"
	"time"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// BenchmarkVerifyStages times each stage of Verify on the 1 KB invoice, so
// the pipeline's cost can be read stage by stage beside the floor.
func BenchmarkVerifyStages(b *testing.B) {
	svc := testkit.NewTestService(b, false)
	body := testkit.ReadTestdata(b, "invoice-pass.json")
	req, err := svc.Engine.DecodeRequest(body)
	if err != nil {
		b.Fatal(err)
	}
	hashes, err := svc.Engine.Hashes(req, signing.HashCanonical)
	if err != nil {
		b.Fatal(err)
	}
	out, err := svc.Engine.Check(req, hashes.Schema)
	if err != nil {
		b.Fatal(err)
	}
	meta := engine.AnswerMeta{VerificationID: "c0a8012e-5f3b-4d7a-8e21-94b6d3f0a7c5", VerifiedAt: time.Now(), Version: "bench", Hashes: hashes}
	answer := svc.Engine.NewAnswer(req, out, meta)
	answerBody, err := answer.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	signer := svc.Keys.Current()
	forgetful := engine.New(&engine.Options{CacheSize: -1}) // remembers no schema, rules or bounds
	for _, stage := range []struct {
		name string
		run  func() error
	}{
		// As Verify runs them: bounds and rules, sent before, are taken as
		// decoded then; the schema's and the rules' canonical forms and
		// hashes are remembered (hashes-unremembered: a first request).
		{"decode", func() error { _, err := svc.Engine.DecodeRequest(body); return err }},
		{"hashes", func() error {
			_, err := svc.Engine.Hashes(req, signing.HashCanonical)
			return err
		}},
		{"hashes-unremembered", func() error {
			_, err := forgetful.Hashes(req, signing.HashCanonical)
			return err
		}},
		{"check", func() error { _, err := svc.Engine.Check(req, hashes.Schema); return err }},
		{"answer", func() error { _, err := svc.Engine.NewAnswer(req, out, meta).Marshal(); return err }},
		// The encoded answer canonicalized into the signed document, and signed.
		{"attest", func() error {
			_, err := signer.Attest(signing.ContextVerify, answerBody, answer.VerifiedAt)
			return err
		}},
	} {
		b.Run(stage.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := testkit.StartCPU()
			for b.Loop() {
				if err := stage.run(); err != nil {
					b.Fatal(err)
				}
			}
			cpu.Report(b)
		})
	}
}
