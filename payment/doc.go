// Package payment is the verifier's free daily allowance and its x402 v2
// payments (SPEC §7). It knows nothing of MCP or of the HTTP routes: the
// transports describe the request ([Request], [Route]) and render what the
// [Gate] decides.
//
// Per request, after the request is known to be valid:
//
//	adm, err := gate.Admit(ctx, payment.Request{Route: route, Client: gate.ClientID(r),
//		PaymentHeader: r.Header.Get(payment.HeaderPaymentSignature), BodySize: n,
//		RequestKey: payment.RequestKey(r.Method+" "+r.URL.Path, body)})
//	var refusal *payment.Error
//	if errors.As(err, &refusal) {
//		// 429, 402 (with the PAYMENT-REQUIRED header) or 503: copy
//		// refusal.Header, write refusal as the JSON body with refusal.Status.
//	}
//	if kept, settled, ok := adm.Kept(); ok {
//		// a retry with the same payment: answer kept.Body (and settled), no work.
//	}
//	defer adm.Release() // the work failed: the free call or the payment is given back
//	answer := work()
//	settled, err := adm.Settle(ctx, payment.Answer{Body: answer}) // nil, nil when free
//	// err: a *payment.Error again (settlement_failed 402, or 503 with
//	// charged false or "unknown"); withhold the answer.
//	// settled != nil: set PAYMENT-RESPONSE to settled.HeaderValue().
//
// Free calls are counted per client and UTC day in the store (exact under
// concurrency, kept across restarts). A payment is decoded, matched against
// what the route offers, checked (recipient and amount signed), looked up
// among the payments used (a replay is refused, a retry of the same request
// gets its kept answer, without asking the facilitator), verified by the
// facilitator, then recorded in the store for that request (EVM: from and
// nonce; Solana: the transaction); nothing is recorded when the facilitator
// cannot be reached. Settlement happens after the work, inside the
// authorization's window, and is not cancelled by the request's end; once
// the payment is settled, or sent for settlement without an answer, the
// answer is kept with it (and a paid verdict stored only then). If the
// settlement fails the answer is withheld and nothing is kept.
//
// The wire types follow x402 v2 (PAYMENT-REQUIRED, PAYMENT-SIGNATURE and
// PAYMENT-RESPONSE as standard base64 JSON; MCP's _meta "x402/payment" and
// "x402/payment-response" as plain JSON objects).
package payment
