package tools

import (
	"errors"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/signing"
)

// checkSchema returns the 422 of a request whose expected_schema does not
// compile. Decoding finds every other problem of a request; this one only
// compiling finds. The payment steps run it before they take a payment or
// ask for one (SPEC §6: an invalid request is rejected before any payment
// step); a free call leaves it to the work. It checks the schema with
// every limit of compiling but compiles no pattern (engine CheckSchema),
// so a request refused for want of payment costs about what decoding it
// did, however large its patterns' programs would be: the work compiles
// them, admitted for their memory and within the request's budget and
// deadline. A schema the engine's cache holds is not checked again. Any
// other fault is left to the work to report.
func (s *Service) checkSchema(req *engine.Request) *Error {
	key := "" // no cache entry when the hashes fail: the work says why
	if h, err := s.Engine.Hashes(req, signing.HashCanonical); err == nil {
		key = h.Schema
	}
	err := s.Engine.CheckSchema(req, key)
	var invalid *engine.InvalidRequestError
	if errors.As(err, &invalid) {
		return invalidRequest(invalid)
	}
	return nil
}
