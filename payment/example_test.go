package payment_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/store"
)

// A client's free allowance, with payment off: free calls carry the
// Free-Allowance-* headers, then the client is rate limited until UTC
// midnight.
func ExampleGate_Admit() {
	dir, err := os.MkdirTemp("", "payment-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	now := func() time.Time { return time.Date(2026, 3, 1, 18, 0, 0, 0, time.UTC) }
	st, err := store.OpenBolt(filepath.Join(dir, "verifier.db"), &store.Options{Now: now})
	if err != nil {
		panic(err)
	}
	defer st.Close()
	g, err := payment.NewGate(payment.Config{FreePerDay: 2}, st, now, nil)
	if err != nil {
		panic(err)
	}
	route := payment.Route{Kind: payment.KindVerify, Method: "POST", Resource: payment.Resource{URL: "https://verifier.example/verify/schema"}}
	for range 3 {
		adm, err := g.Admit(context.Background(), payment.Request{Route: route, Client: "203.0.113.7"})
		var refused *payment.Error
		if errors.As(err, &refused) {
			fmt.Println(refused.Status, refused.Code, "retry after", *refused.RetryAfter, "s")
			continue
		}
		fmt.Println("free; remaining", adm.Header().Get(payment.HeaderAllowanceRemaining))
	}
	// Output:
	// free; remaining 1
	// free; remaining 0
	// 429 rate_limited retry after 21600 s
}

// Reading the settlement a server returned in PAYMENT-RESPONSE.
func ExampleDecodeSettleResponse() {
	h := "eyJzdWNjZXNzIjp0cnVlLCJ0cmFuc2FjdGlvbiI6IjB4YWJjIiwibmV0d29yayI6ImVpcDE1NTo4NDUzMiJ9"
	sr, err := payment.DecodeSettleResponse(h)
	if err != nil {
		panic(err)
	}
	fmt.Println(sr.Success, sr.Transaction, sr.Network)
	// Output:
	// true 0xabc eip155:84532
}
