package tools

import (
	"errors"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/signing"
)

// compileSchema compiles req's expected_schema into the engine's schema
// cache under the key verifyRequest looks it up by (the schema hash), so the
// work reuses it, and returns the 422 of a schema that does not compile.
// Decoding finds every other problem of a request; this one only compiling
// finds. The payment steps run it before they take a payment or ask for one
// (SPEC §6: an invalid request is rejected before any payment step); a free
// call leaves it to the work. Any other fault is left to the work to report.
func (s *Service) compileSchema(req *engine.Request) *Error {
	key := "" // no cache entry when the hashes fail: the work says why
	if h, err := s.Engine.Hashes(req, signing.AppendCanonical, signing.HashCanonical); err == nil {
		key = h.Schema
	}
	_, err := s.Engine.CompileRequest(req, key)
	var invalid *engine.InvalidRequestError
	if errors.As(err, &invalid) {
		return invalidRequest(invalid)
	}
	return nil
}
