package rest

import "time"

// facilitatorHealth is the facilitator member of GET /health with payments
// on: the payment facilitator's last known state, as the last call to it
// (or the check at start) left it. A failing facilitator does not make the
// service unready: free calls are still served.
type facilitatorHealth struct {
	State string `json:"state"` // unknown, ok or failing
	// CheckedAt is when the last call ended (RFC 3339, UTC); absent while
	// unknown.
	CheckedAt string `json:"checked_at,omitempty"`
	// Cause says why it is failing, in the verifier's words: never the
	// facilitator's reply, its URL or a credential.
	Cause string `json:"cause,omitempty"`
}

// facilitatorHealth is the /health facilitator member; nil with payments
// off.
func (h *HTTPHandler) facilitatorHealth() *facilitatorHealth {
	s, ok := h.svc.Payment.FacilitatorState()
	if !ok {
		return nil
	}
	out := &facilitatorHealth{State: s.State, Cause: s.Cause}
	if !s.At.IsZero() {
		out.CheckedAt = s.At.UTC().Format(time.RFC3339)
	}
	return out
}
