package tools

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/payment"
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
	body := readTestdata(b, "invoice-pass.json")
	b.Run("in-process", func(b *testing.B) { benchRoundTrips(b, inProcessCall(quietService(b, true), body)) })
	b.Run("rest", func(b *testing.B) { benchRoundTrips(b, newRESTBenchClient(b, body).call) })
}

// newRESTBenchClient posts one pre-encoded verification on a keep-alive
// connection to the REST handler of a server set up as in HTTP mode.
func newRESTBenchClient(b *testing.B, body []byte) *rawPostClient {
	b.Helper()
	svc := quietService(b, true)
	g, err := payment.NewGate(payment.Config{FreePerDay: 1 << 30}, svc.Store, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	opts := HTTPOptions{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), ClientAddr: g.ClientID}
	svc.WithPayment(&opts, g)
	h, err := NewHTTPHandler(svc, &opts)
	if err != nil {
		b.Fatal(err)
	}
	return newRawPostClient(b, h, "/verify/schema", "", body, func(resp *http.Response, answer []byte) bool {
		return bytes.Contains(answer, []byte(`"verification_id"`)) && resp.Header.Get(payment.HeaderAllowanceRemaining) != ""
	})
}

// rawPostClient posts one pre-encoded HTTP/1.1 request on a keep-alive
// connection to an httptest server, as a load generator does: no client
// library between the benchmark and the server.
type rawPostClient struct {
	conn net.Conn
	r    *bufio.Reader
	req  []byte
	good func(*http.Response, []byte) bool // whether a 200 answer is the expected one
}

// newRawPostClient serves h and connects to it; headers are extra header
// lines, each ending in CRLF.
func newRawPostClient(b *testing.B, h http.Handler, path, headers string, body []byte, good func(*http.Response, []byte) bool) *rawPostClient {
	b.Helper()
	ts := httptest.NewServer(h)
	b.Cleanup(ts.Close)
	return dialRawPostClient(b, ts.Listener.Addr().String(), path, headers, body, good)
}

// dialRawPostClient connects to the HTTP server at addr (host:port).
func dialRawPostClient(b *testing.B, addr, path, headers string, body []byte, good func(*http.Response, []byte) bool) *rawPostClient {
	b.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	req := fmt.Appendf(nil, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n%s",
		path, addr, headers, len(body), body)
	return &rawPostClient{conn: conn, r: bufio.NewReaderSize(conn, 1<<20), req: req, good: good}
}

// call makes one round trip and returns its time.
func (c *rawPostClient) call(b *testing.B) time.Duration {
	took, err := c.post()
	if err != nil {
		b.Fatal(err)
	}
	return took
}

// post makes one round trip and returns its time, or what went wrong.
func (c *rawPostClient) post() (time.Duration, error) {
	start := time.Now()
	if _, err := c.conn.Write(c.req); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		return 0, err
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	if err != nil || resp.StatusCode != http.StatusOK || !c.good(resp, answer) {
		return 0, fmt.Errorf("POST: status %d, %v, body %.200s", resp.StatusCode, err, answer)
	}
	return took, nil
}
