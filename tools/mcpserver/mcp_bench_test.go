package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/contract"
	"github.com/verifier-dev/verifier/tools/internal/testkit"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkVerifySchema measures what MCP adds to a verification: the round
// trip of verify_schema for the invoice examples over stdio and over
// streamable HTTP against Service.Verify called in process, each on its own
// bbolt store in a temp folder. The clients are as cheap as a client can
// be: a pre-encoded frame written to the pipe or the connection, and the
// answer read as bytes.
//
//   - compare runs them in turn, once each per iteration, so they share the
//     machine's state: the stdio server is a child process (the test binary
//     logging at INFO, or the binary benchBinEnv names), the HTTP server an
//     httptest server with a keep-alive connection. It reports each median
//     and the share MCP adds to the in-process median (stdio-add-% and
//     http-add-%): the figures BENCHMARKS.md reports. It also times both
//     transports, served the same way, to a server whose verify_schema
//     returns the answer ready-made: what the transport, the SDK and our
//     result encoding cost without the verification, as a share of the
//     in-process median (stdio-mcp-only-% and http-mcp-only-%); the CPU
//     time per call of both stdio children (Linux only); and, for
//     reference, Service.Verify without a store (no verdict written, no
//     fsync: in-process-no-store-ms).
//   - in-process, stdio, http, stdio-mcp-only and http-mcp-only run one of
//     those each, all in this process (ServeStdio on OS pipes), so that
//     -cpuprofile and -memprofile see the server's side of the round trip.
//     Besides the median they report the process's CPU time per call
//     (cpu-µs), which other work on a shared machine does not inflate as
//     much as wall time.
func BenchmarkVerifySchema(b *testing.B) {
	for _, name := range []string{"invoice-pass.json", "invoice-fail.json"} {
		// One frame per line over stdio: the request goes without newlines.
		var compact bytes.Buffer
		if err := json.Compact(&compact, testkit.ReadTestdata(b, name)); err != nil {
			b.Fatal(err)
		}
		body := compact.Bytes()
		example := strings.TrimSuffix(name, ".json")
		b.Run(example+"/compare", func(b *testing.B) {
			svc := testkit.QuietService(b, true)
			child := startBenchServer(b, b.TempDir())
			child.initialize(b)
			stdio := newStdioBenchClient(child.in, bufio.NewReaderSize(child.out, 1<<20), body)
			web := newHTTPBenchClient(b, NewMCPHandler(testkit.QuietService(b, true)), body)
			ready := startReadyAnswerChild(b, b.TempDir(), body)
			ready.initialize(b)
			stdioOnly := newStdioBenchClient(ready.in, bufio.NewReaderSize(ready.out, 1<<20), body)
			webOnly := newHTTPBenchClient(b, readyAnswerHandler(b, body), body)
			bare := testkit.QuietService(b, false)
			var inProc, bareProc, overStdio, overHTTP, stdioMCP, httpMCP []time.Duration
			childCPU, readyCPU := testkit.ProcCPU(child.cmd.Process.Pid), testkit.ProcCPU(ready.cmd.Process.Pid)
			for b.Loop() {
				start := time.Now()
				if _, err := svc.Verify(context.Background(), body); err != nil {
					b.Fatal(err)
				}
				inProc = append(inProc, time.Since(start))
				start = time.Now()
				if _, err := bare.Verify(context.Background(), body); err != nil {
					b.Fatal(err)
				}
				bareProc = append(bareProc, time.Since(start))
				overStdio = append(overStdio, stdio.Call(b))
				overHTTP = append(overHTTP, web.Call(b))
				stdioMCP = append(stdioMCP, stdioOnly.Call(b))
				httpMCP = append(httpMCP, webOnly.Call(b))
			}
			in := testkit.Median(inProc)
			b.ReportMetric(testkit.MS(in), "in-process-ms")
			b.ReportMetric(testkit.MS(testkit.Median(bareProc)), "in-process-no-store-ms")
			b.ReportMetric(testkit.MS(testkit.Median(overStdio)), "stdio-ms")
			b.ReportMetric(testkit.MS(testkit.Median(overHTTP)), "http-ms")
			b.ReportMetric(addedPercent(testkit.Median(overStdio), in), "stdio-add-%")
			b.ReportMetric(addedPercent(testkit.Median(overHTTP), in), "http-add-%")
			b.ReportMetric(100*float64(testkit.Median(stdioMCP))/float64(in), "stdio-mcp-only-%")
			b.ReportMetric(100*float64(testkit.Median(httpMCP))/float64(in), "http-mcp-only-%")
			if childCPU >= 0 {
				per := func(pid int, since time.Duration) float64 {
					return float64((testkit.ProcCPU(pid) - since).Microseconds()) / float64(b.N)
				}
				b.ReportMetric(per(child.cmd.Process.Pid, childCPU), "stdio-cpu-µs")
				b.ReportMetric(per(ready.cmd.Process.Pid, readyCPU), "stdio-mcp-only-cpu-µs")
			}
		})
		b.Run(example+"/in-process", func(b *testing.B) {
			testkit.BenchRoundTrips(b, testkit.InProcessCall(testkit.QuietService(b, true), body))
		})
		for _, tt := range []struct {
			name   string
			client func(b *testing.B) roundTripper
		}{
			{"stdio", func(b *testing.B) roundTripper {
				return startStdioInProcess(b, NewMCPServer(testkit.QuietService(b, true)), body)
			}},
			{"http", func(b *testing.B) roundTripper {
				return newHTTPBenchClient(b, NewMCPHandler(testkit.QuietService(b, true)), body)
			}},
			{"stdio-mcp-only", func(b *testing.B) roundTripper {
				return readyAnswerInProcess(b, body)
			}},
			{"http-mcp-only", func(b *testing.B) roundTripper {
				return newHTTPBenchClient(b, readyAnswerHandler(b, body), body)
			}},
		} {
			b.Run(example+"/"+tt.name, func(b *testing.B) { testkit.BenchRoundTrips(b, tt.client(b).Call) })
		}
	}
}

// roundTripper makes one verify_schema round trip and returns its time.
type roundTripper interface {
	Call(b *testing.B) time.Duration
}

// readyAnswerServer is NewMCPServer with a verify_schema that answers every
// call with the result of one verification of args by svc, made
// beforehand: the same bytes as a real answer, without the work.
func readyAnswerServer(svc *tools.Service, args []byte) (*mcp.Server, error) {
	v, err := svc.Verify(context.Background(), args)
	if err != nil {
		return nil, err
	}
	text := verifyText(v)
	srv := mcp.NewServer(&mcp.Implementation{Name: mcpServerName, Version: svc.Version},
		&mcp.ServerOptions{Logger: svc.Logger(), Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}})
	srv.AddTool(verifySchemaTool(), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return answerResult(text, v.Answer), nil
	})
	return srv, nil
}

// readyAnswerHandler is the streamable-HTTP handler of readyAnswerServer,
// as NewMCPHandler serves it.
func readyAnswerHandler(b *testing.B, args []byte) http.Handler {
	b.Helper()
	svc := testkit.QuietService(b, false)
	srv, err := readyAnswerServer(svc, args)
	if err != nil {
		b.Fatal(err)
	}
	return mcpHTTPHandler(srv, svc.Logger())
}

// readyAnswerInProcess is startStdioInProcess of readyAnswerServer.
func readyAnswerInProcess(b *testing.B, args []byte) *stdioBenchClient {
	b.Helper()
	srv, err := readyAnswerServer(testkit.QuietService(b, false), args)
	if err != nil {
		b.Fatal(err)
	}
	return startStdioInProcess(b, srv, args)
}

// callFrame is a tools/call of verify_schema with args, without its id:
// the id goes between head and tail.
func callFrame(args []byte) (head, tail []byte) {
	head = []byte(`{"jsonrpc":"2.0","id":`)
	tail = fmt.Appendf(nil, `,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, contract.VerifySchema, args)
	return head, tail
}

// stdioBenchClient sends verify_schema frames on a stdio server's input and
// reads the answers off its output.
type stdioBenchClient struct {
	in         io.Writer
	out        *bufio.Reader
	head, tail []byte
	frame      []byte
	id         int
}

func newStdioBenchClient(in io.Writer, out *bufio.Reader, args []byte) *stdioBenchClient {
	head, tail := callFrame(args)
	// The ids of the initialize request and the like stay below 1000.
	return &stdioBenchClient{in: in, out: out, head: head, tail: tail, id: 1000}
}

// Call makes one round trip and returns its time.
func (c *stdioBenchClient) Call(b *testing.B) time.Duration {
	c.id++
	c.frame = append(append(strconv.AppendInt(append(c.frame[:0], c.head...), int64(c.id), 10), c.tail...), '\n')
	start := time.Now()
	if _, err := c.in.Write(c.frame); err != nil {
		b.Fatal(err)
	}
	line, err := c.out.ReadSlice('\n')
	took := time.Since(start)
	if err != nil || !bytes.Contains(line, []byte(`"structuredContent"`)) {
		b.Fatalf("tools/call over stdio: %v %.200s", err, line)
	}
	return took
}

// startStdioInProcess serves srv as ServeStdio does, in this process on OS
// pipes, initializes the session and returns a client of it.
func startStdioInProcess(b *testing.B, srv *mcp.Server, args []byte) *stdioBenchClient {
	b.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- serveStdio(context.Background(), srv, inR, outW) }()
	b.Cleanup(func() {
		inW.Close()
		if err := <-done; err != nil {
			b.Errorf("ServeStdio: %v", err)
		}
		inR.Close()
		outW.Close()
		outR.Close()
	})
	out := bufio.NewReaderSize(outR, 1<<20)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	if _, err := io.WriteString(inW, init); err != nil {
		b.Fatal(err)
	}
	if _, err := out.ReadSlice('\n'); err != nil {
		b.Fatal(err)
	}
	return newStdioBenchClient(inW, out, args)
}

// newHTTPBenchClient posts a pre-encoded verify_schema request on one
// keep-alive connection to an httptest server of h.
func newHTTPBenchClient(b *testing.B, h http.Handler, args []byte) *testkit.RawPostClient {
	b.Helper()
	head, tail := callFrame(args)
	frame := slices.Concat(head, []byte("1"), tail)
	return testkit.NewRawPostClient(b, h, "/mcp", "Accept: application/json, text/event-stream\r\n", frame,
		func(_ *http.Response, answer []byte) bool {
			return bytes.Contains(answer, []byte(`"structuredContent"`))
		})
}

// addedPercent is how much longer d is than base, in percent of base.
func addedPercent(d, base time.Duration) float64 {
	if base <= 0 {
		return 0
	}
	return 100 * float64(d-base) / float64(base)
}
