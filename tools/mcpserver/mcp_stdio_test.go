package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/contract"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// stdioChildEnv, when set to a data folder, makes the test binary serve MCP
// over its own stdin and stdout (as `verifier` does) instead of running
// the tests.
const stdioChildEnv = "TOOLS_MCP_STDIO_CHILD_DIR"

// stdioChildLevelEnv sets the stdio child's log level (DEBUG when unset):
// the benchmarks run it at INFO, the level of the verifier binary.
const stdioChildLevelEnv = "TOOLS_MCP_STDIO_CHILD_LEVEL"

// stdioChildReadyEnv, when set to a file holding verify_schema arguments,
// makes the stdio child serve readyAnswerServer for them instead of the
// verifier's server.
const stdioChildReadyEnv = "TOOLS_MCP_STDIO_CHILD_READY"

func TestMain(m *testing.M) {
	if dir := os.Getenv(stdioChildEnv); dir != "" {
		os.Exit(stdioChild(dir))
	}
	os.Exit(m.Run())
}

// stdioChild serves one stdio session with debug logging (or the level
// stdioChildLevelEnv names) on stderr, and every logger of the process
// pointed there too.
func stdioChild(dir string) int {
	level := slog.LevelDebug
	if name := os.Getenv(stdioChildLevelEnv); name != "" {
		if err := level.UnmarshalText([]byte(name)); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", stdioChildLevelEnv, err)
			return 2
		}
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(log)
	keys, err := signing.OpenKeyStore(filepath.Join(dir, "keys"), nil)
	if err != nil {
		log.Error("opening keys", "err", err)
		return 1
	}
	st, err := store.OpenBolt(filepath.Join(dir, "verifier.db"), nil)
	if err != nil {
		log.Error("opening store", "err", err)
		return 1
	}
	defer st.Close()
	svc := &tools.Service{Engine: engine.New(nil), Keys: keys, Store: st, Version: "test", Log: log}
	srv := NewMCPServer(svc)
	if path := os.Getenv(stdioChildReadyEnv); path != "" {
		args, err := os.ReadFile(path)
		if err == nil {
			srv, err = readyAnswerServer(svc, args)
		}
		if err != nil {
			log.Error("ready answers", "err", err)
			return 1
		}
	}
	if err := serveStdio(context.Background(), srv, os.Stdin, os.Stdout); err != nil {
		log.Error("serving", "err", err)
		return 1
	}
	return 0
}

// stdioProc is a child serving MCP on its stdio.
type stdioProc struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stdout bytes.Buffer // every byte read from the child's stdout
	stderr bytes.Buffer
	nextID int
}

// startStdio starts this test binary as a stdio child on the data folder
// dir.
func startStdio(t testing.TB, dir string) *stdioProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stdioChildEnv+"="+dir)
	return startProc(t, cmd)
}

// benchBinEnv names a built verifier binary for the benchmarks to spawn
// instead of the test binary: VERIFIER_BENCH_BIN=/path/to/verifier go test
// -bench Stdio measures the real program.
const benchBinEnv = "VERIFIER_BENCH_BIN"

// startBenchServer starts the stdio server the benchmarks measure.
func startBenchServer(b *testing.B, dir string) *stdioProc {
	b.Helper()
	if bin := os.Getenv(benchBinEnv); bin != "" {
		return startProc(b, exec.Command(bin, "--data-dir", dir))
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stdioChildEnv+"="+dir, stdioChildLevelEnv+"=INFO")
	return startProc(b, cmd)
}

// startReadyAnswerChild starts a stdio child serving readyAnswerServer for
// args, on the data folder dir.
func startReadyAnswerChild(b *testing.B, dir string, args []byte) *stdioProc {
	b.Helper()
	path := filepath.Join(dir, "args.json")
	if err := os.WriteFile(path, args, 0o600); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stdioChildEnv+"="+dir, stdioChildLevelEnv+"=INFO", stdioChildReadyEnv+"="+path)
	return startProc(b, cmd)
}

func startProc(t testing.TB, cmd *exec.Cmd) *stdioProc {
	t.Helper()
	p := &stdioProc{cmd: cmd}
	p.cmd.Stderr = &p.stderr
	var err error
	if p.in, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.out = bufio.NewReader(io.TeeReader(out, &p.stdout))
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait() })
	return p
}

// Request sends a JSON-RPC request and returns the response frame.
func (p *stdioProc) request(t testing.TB, method string, params any) map[string]any {
	t.Helper()
	p.nextID++
	p.send(t, map[string]any{"jsonrpc": "2.0", "id": p.nextID, "method": method, "params": params})
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		t.Fatalf("%s: reading the response: %v (stderr: %s)", method, err, p.stderr.String())
	}
	var frame map[string]any
	if err := json.Unmarshal(line, &frame); err != nil {
		t.Fatalf("%s: stdout line is not JSON: %q", method, line)
	}
	if frame["id"] != float64(p.nextID) {
		t.Fatalf("%s: response id %v, want %d", method, frame["id"], p.nextID)
	}
	return frame
}

func (p *stdioProc) send(t testing.TB, msg any) {
	t.Helper()
	b, err := json.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.in.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
}

func (p *stdioProc) initialize(t testing.TB) {
	t.Helper()
	p.request(t, "initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "purity", "version": "0"},
	})
	p.send(t, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
}

// TestMCPStdioStdoutPurity runs a whole stdio session in a child process
// with debug logging (and, under go test -race, the race detector): its
// stdout must hold nothing but JSON-RPC frames, and the logs must all be on
// stderr.
func TestMCPStdioStdoutPurity(t *testing.T) {
	p := startStdio(t, t.TempDir())
	p.initialize(t)
	p.request(t, "tools/list", map[string]any{})
	pass := p.request(t, "tools/call", map[string]any{"name": contract.VerifySchema, "arguments": json.RawMessage(testkit.ReadTestdata(t, "invoice-pass.json"))})
	p.request(t, "tools/call", map[string]any{"name": contract.VerifySchema, "arguments": json.RawMessage(testkit.ReadTestdata(t, "invoice-fail.json"))})
	p.request(t, "tools/call", map[string]any{"name": contract.VerifySchema, "arguments": map[string]any{"task_id": 1}})
	p.request(t, "tools/call", map[string]any{"name": contract.Record, "arguments": map[string]any{"agent_id": "seller-7"}})
	p.request(t, "tools/call", map[string]any{"name": contract.Record, "arguments": map[string]any{"agent_id": "nobody"}})
	receipt := pass["result"].(map[string]any)["structuredContent"]
	check := p.request(t, "tools/call", map[string]any{"name": contract.VerifyReceipt, "arguments": map[string]any{"receipt": receipt}})
	if sc := check["result"].(map[string]any)["structuredContent"].(map[string]any); sc["valid"] != true {
		t.Errorf("receipt over stdio does not verify: %v", sc)
	}
	if unknown := p.request(t, "tools/call", map[string]any{"name": "nope", "arguments": map[string]any{}}); unknown["error"] == nil {
		t.Errorf("unknown tool: %v, want a JSON-RPC error", unknown)
	}
	p.request(t, "ping", map[string]any{})
	p.in.Close()
	rest, _ := io.ReadAll(p.out)
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("child: %v (stderr: %s)", err, p.stderr.String())
	}
	if len(rest) != 0 {
		t.Errorf("stdout after the last response: %q", rest)
	}
	lines := strings.Split(strings.TrimSuffix(p.stdout.String(), "\n"), "\n")
	if len(lines) != p.nextID {
		t.Errorf("stdout has %d lines for %d requests", len(lines), p.nextID)
	}
	for i, line := range lines {
		var frame map[string]any
		if err := json.Unmarshal([]byte(line), &frame); err != nil || frame["jsonrpc"] != "2.0" {
			t.Errorf("stdout line %d is not a JSON-RPC frame: %.200q", i+1, line)
			continue
		}
		_, hasResult := frame["result"]
		_, hasError := frame["error"]
		if frame["id"] == nil || hasResult == hasError {
			t.Errorf("stdout line %d is not a JSON-RPC response: %.200q", i+1, line)
		}
	}
	logs := p.stderr.String()
	for _, want := range []string{"level=DEBUG", "mcp tool call", "tool=" + contract.VerifyReceipt} {
		if !strings.Contains(logs, want) {
			t.Errorf("stderr lacks %q; debug logging was not on, or went elsewhere:\n%s", want, logs)
		}
	}
}

// BenchmarkStdioColdStart measures a freshly spawned stdio server (the test
// binary, or the binary benchBinEnv names) until initialize is answered, on
// a data folder that already holds its key and store. The median-ms metric
// is the figure BENCHMARKS.md reports.
func BenchmarkStdioColdStart(b *testing.B) {
	dir := b.TempDir()
	// The first start creates the key and the store; later ones open them,
	// as a configured server does.
	first := startBenchServer(b, dir)
	first.initialize(b)
	first.in.Close()
	first.cmd.Wait()
	var times []time.Duration
	for b.Loop() {
		start := time.Now()
		p := startBenchServer(b, dir)
		p.initialize(b)
		times = append(times, time.Since(start))
		p.in.Close()
		p.cmd.Wait()
	}
	b.ReportMetric(testkit.MedianMS(times), "median-ms")
}
