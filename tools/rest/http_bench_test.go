package rest

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// BenchmarkRESTVerify measures what serving a verification over REST adds
// to the work itself, in CPU time per call (cpu-µs, the whole process: the
// handler, the store's committer and the client alike), which other work on
// a shared machine inflates less than wall time:
//
//   - in-process: Service.Verify on a bbolt store, as the server runs it;
//   - rest: POST /verify/schema through the real handler on a loopback
//     listener, with the payment gate (the free allowance lifted, so each
//     call is a free one that is held and committed) and the request log
//     formatted as the server does (slog text, to io.Discard); the client
//     writes a pre-encoded request on one keep-alive connection and reads
//     the answer as bytes.
//
// One client, one call at a time: every call commits alone, so the store's
// share is the same in both and the difference is the REST layer. Run with
// -count to interleave them.
func BenchmarkRESTVerify(b *testing.B) {
	body := testkit.ReadTestdata(b, "invoice-pass.json")
	b.Run("in-process", func(b *testing.B) {
		testkit.BenchRoundTrips(b, testkit.InProcessCall(testkit.QuietService(b, true), body))
	})
	b.Run("rest", func(b *testing.B) { testkit.BenchRoundTrips(b, newRESTBenchClient(b, body).Call) })
}

// newRESTBenchClient posts one pre-encoded verification on a keep-alive
// connection to the REST handler of a server set up as in HTTP mode.
func newRESTBenchClient(b *testing.B, body []byte) *testkit.RawPostClient {
	b.Helper()
	svc := testkit.QuietService(b, true)
	g, err := payment.NewGate(payment.Config{FreePerDay: 1 << 30}, svc.Store, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	opts := HTTPOptions{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), ClientAddr: g.ClientID}
	WithPayment(svc, &opts, g)
	h, err := NewHTTPHandler(svc, withMCP(svc, &opts))
	if err != nil {
		b.Fatal(err)
	}
	return testkit.NewRawPostClient(b, h, "/verify/schema", "", body, func(resp *http.Response, answer []byte) bool {
		return bytes.Contains(answer, []byte(`"verification_id"`)) && resp.Header.Get(payment.HeaderAllowanceRemaining) != ""
	})
}
