// Package payment is the verifier's free daily allowance and its x402 v2
// payments (SPEC §7). It knows nothing of MCP or of the HTTP routes: the
// transports describe the request ([Request], [Route]) and render what the
// [Gate] decides.
//
// Per request, after the request is known to be valid:
//
//	adm, err := gate.Admit(ctx, payment.Request{Route: route, Client: gate.ClientID(r),
//		PaymentHeader: r.Header.Get(payment.HeaderPaymentSignature), BodySize: n})
//	var refusal *payment.Error
//	if errors.As(err, &refusal) {
//		// 429, 402 (with the PAYMENT-REQUIRED header) or 503: copy
//		// refusal.Header, write refusal as the JSON body with refusal.Status.
//	}
//	answer := work()
//	settled, err := adm.Settle(ctx) // nil, nil when free
//	// err: a *payment.Error again (settlement_failed 402 or 503); withhold the answer.
//	// settled != nil: set PAYMENT-RESPONSE to settled.HeaderValue().
//
// Free calls are counted per client and UTC day in the store (exact under
// concurrency, kept across restarts). A payment is decoded, matched against
// what the route offers, checked (recipient and amount signed), verified by
// the facilitator, then recorded in the store so it is accepted once (EVM:
// from and nonce; Solana: the transaction); nothing is recorded when the
// facilitator cannot be reached. Settlement happens after the work, inside
// the authorization's window; if it fails the answer is withheld.
//
// Calls to the facilitator carry the credentials of [Config].FacilitatorAuth:
// a [CDPAuth] (Coinbase's facilitator: a bearer JWT signed per request with
// a CDP API key) and [StaticHeaders] (--facilitator-header). A 401 or 403
// is the credentials refused, never a verdict on the payment. The server
// checks the facilitator once at start ([Gate.CheckFacilitator]) and
// /health reports the outcome of the last call ([Gate.FacilitatorState]).
//
// The wire types follow x402 v2 (PAYMENT-REQUIRED, PAYMENT-SIGNATURE and
// PAYMENT-RESPONSE as standard base64 JSON; MCP's _meta "x402/payment" and
// "x402/payment-response" as plain JSON objects).
package payment
