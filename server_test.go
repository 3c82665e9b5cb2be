package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/store"
)

// lockedBuffer collects a server's stderr across goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// httpServer is run() serving HTTP on 127.0.0.1:0 in a goroutine.
type httpServer struct {
	base    string
	dataDir string
	cancel  context.CancelFunc
	done    chan error
	stderr  *lockedBuffer
}

var servingLine = regexp.MustCompile(`msg="serving HTTP" addr=(\S+)`)

// startHTTP runs the program with --http 127.0.0.1:0, a temp data dir and
// args, and waits until it listens.
func startHTTP(t *testing.T, args ...string) *httpServer {
	t.Helper()
	return startHTTPEnv(t, nil, args...)
}

// startHTTPEnv is startHTTP with extra environment variables.
func startHTTPEnv(t *testing.T, env map[string]string, args ...string) *httpServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &httpServer{dataDir: t.TempDir(), cancel: cancel, done: make(chan error, 1), stderr: &lockedBuffer{}}
	all := append([]string{"--http", "127.0.0.1:0", "--data-dir", s.dataDir}, args...)
	go func() { s.done <- run(ctx, all, strings.NewReader(""), io.Discard, s.stderr, envWith(env)) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			t.Error("the server did not stop")
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		if m := servingLine.FindStringSubmatch(s.stderr.String()); m != nil {
			s.base = "http://" + m[1]
			return s
		}
		select {
		case err := <-s.done:
			s.done <- err
			t.Fatalf("the server exited: %v\n%s", err, s.stderr)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not start:\n%s", s.stderr)
		}
	}
}

// envWith is testEnv with env's variables set over it.
func envWith(env map[string]string) func(string) string {
	return func(name string) string {
		if v, ok := env[name]; ok {
			return v
		}
		return testEnv(name)
	}
}

// stop cancels the server's context and returns what run returned.
func (s *httpServer) stop(t *testing.T) error {
	t.Helper()
	s.cancel()
	select {
	case err := <-s.done:
		s.done <- err
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not stop")
		return nil
	}
}

func (s *httpServer) post(t *testing.T, path string, body []byte) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Post(s.base+path, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func (s *httpServer) get(t *testing.T, path string) (*http.Response, []byte) {
	t.Helper()
	return getURL(t, s.base+path)
}

// getURL GETs url and reads the whole body, failing t on any error.
func getURL(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// TestRESTSameAnswerAsCLI: the CLI and REST give the same answer for the
// same request, but for the id, the time and the signature.
func TestRESTSameAnswerAsCLI(t *testing.T) {
	srv := startHTTP(t, "--public-url", "http://127.0.0.1:8080/")
	for _, name := range []string{"invoice-pass", "invoice-fail"} {
		for _, detail := range []string{"full", "compact"} {
			t.Run(name+"/"+detail, func(t *testing.T) {
				req := readJSON(t, filepath.Join("testdata", name+".json"))
				req["detail"] = detail
				body, _ := json.Marshal(req)
				cli, _ := runCLI(t, string(body), "verify", "--data-dir", srv.dataDir)
				resp, rest := srv.post(t, "/verify/schema", body)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("REST status %d: %s", resp.StatusCode, rest)
				}
				// The verify blocks differ as SPEC §5 says: the CLI has no
				// public URL and carries its key, REST names its URLs.
				cliAnswer, restAnswer := decodeMap(t, normalize(t, bytes.TrimSpace(cli))), decodeMap(t, normalize(t, rest))
				cliVerify, restVerify := cliAnswer["verify"].(map[string]any), restAnswer["verify"].(map[string]any)
				if cliVerify["public_key"] == nil || cliVerify["public_key_url"] != nil || cliVerify["mcp"] != nil {
					t.Errorf("CLI verify block = %v, want public_key and no URL", cliVerify)
				}
				if restVerify["public_key_url"] != "http://127.0.0.1:8080/.well-known/agent-card.json" || restVerify["mcp"] != "http://127.0.0.1:8080/mcp" || restVerify["public_key"] != nil {
					t.Errorf("REST verify block = %v, want the public URL's card and MCP endpoint, no key", restVerify)
				}
				for _, k := range []string{"public_key", "public_key_url", "mcp"} {
					delete(cliVerify, k)
					delete(restVerify, k)
				}
				if diff := cmp.Diff(cliAnswer, restAnswer); diff != "" {
					t.Errorf("CLI (-) and REST (+) answers differ:\n%s", diff)
				}
				for _, answer := range [][]byte{bytes.TrimSpace(cli), rest} {
					checkSignatureIndependently(t, answer)
				}
			})
		}
	}
}

func decodeMap(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestServeHTTPDerivesPublicURL(t *testing.T) {
	srv := startHTTP(t)
	_, body := srv.post(t, "/verify/schema", mustRead(t, filepath.Join("testdata", "invoice-pass.json")))
	var a struct {
		Verify struct {
			PublicKeyURL string `json:"public_key_url"`
			MCP          string `json:"mcp"`
		} `json:"verify"`
	}
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatal(err)
	}
	if a.Verify.PublicKeyURL != srv.base+"/.well-known/agent-card.json" || a.Verify.MCP != srv.base+"/mcp" {
		t.Errorf("verify block = %+v, want URLs under %s", a.Verify, srv.base)
	}
	_, card := srv.get(t, "/.well-known/agent-card.json")
	if !bytes.Contains(card, []byte(`"url":"`+srv.base+`/mcp"`)) {
		t.Errorf("the card does not advertise %s/mcp: %s", srv.base, card)
	}
	keys, err := signing.KeysFromAgentCard(card)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := signing.VerifyReceipt(body, keys); err != nil {
		t.Errorf("the answer does not verify with the card's keys: %v", err)
	}
}

// TestServeHTTPSlowHeaders: a client that never finishes its headers is
// disconnected after --read-header-timeout, and others are still served.
func TestServeHTTPSlowHeaders(t *testing.T) {
	srv := startHTTP(t, "--read-header-timeout", "300ms")
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	if _, err := io.WriteString(conn, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = io.ReadAll(conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server kept the slow connection open for %s", time.Since(start))
	}
	if d := time.Since(start); d < 250*time.Millisecond || d > 5*time.Second {
		t.Errorf("the slow connection was closed after %s, want about 300ms", d)
	}
	if resp, _ := srv.get(t, "/health"); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /health = %d after the slow client", resp.StatusCode)
	}
}

// TestServeHTTPGracefulShutdown: a request in flight when the signal comes
// is finished and answered, then the store is closed.
func TestServeHTTPGracefulShutdown(t *testing.T) {
	srv := startHTTP(t)
	body := mustRead(t, filepath.Join("testdata", "invoice-pass.json"))
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	half := len(body) / 2
	fmt.Fprintf(conn, "POST /verify/schema HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
	if _, err := conn.Write(body[:half]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the server is reading the body
	srv.cancel()
	time.Sleep(300 * time.Millisecond)
	select {
	case err := <-srv.done:
		t.Fatalf("run returned with a request in flight: %v", err)
	default:
	}
	if _, err := conn.Write(body[half:]); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the in-flight answer: %v", err)
	}
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("in-flight request = %d %s", resp.StatusCode, answer)
	}
	if err := srv.stop(t); err != nil {
		t.Fatalf("run = %v, want nil after a graceful shutdown\n%s", err, srv.stderr)
	}
	if !strings.Contains(srv.stderr.String(), "store closed") {
		t.Errorf("the store was not closed:\n%s", srv.stderr)
	}
	var a struct {
		VerificationID string `json:"verification_id"`
	}
	if err := json.Unmarshal(answer, &a); err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenBolt(filepath.Join(srv.dataDir, storeFile), nil)
	if err != nil {
		t.Fatalf("reopening the store after shutdown: %v", err)
	}
	defer st.Close()
	if _, err := st.Receipt(context.Background(), a.VerificationID); err != nil {
		t.Errorf("the in-flight verdict was not stored: %v", err)
	}
}

func TestServeStdio(t *testing.T) {
	for _, tt := range []struct {
		name   string
		locked bool // another process holds the store
	}{{"with the store", false}, {"store in use elsewhere", true}} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.locked {
				st, err := store.OpenBolt(filepath.Join(dir, storeFile), nil)
				if err != nil {
					t.Fatal(err)
				}
				defer st.Close()
			}
			// A client keeps stdin open while it waits for answers.
			inW, outR, stderr, done := startStdio(dir)
			answers := bufio.NewScanner(outR)
			var lines []string
			for _, msg := range []string{
				`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`,
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
				`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
			} {
				if _, err := io.WriteString(inW, msg+"\n"); err != nil {
					t.Fatal(err)
				}
				if strings.Contains(msg, `"id"`) {
					if !answers.Scan() {
						t.Fatalf("no answer to %s: %v\n%s", msg, answers.Err(), stderr.String())
					}
					lines = append(lines, answers.Text())
				}
			}
			inW.Close()
			for answers.Scan() {
				lines = append(lines, answers.Text())
			}
			if err := <-done; err != nil {
				t.Fatalf("run = %v\n%s", err, stderr.String())
			}
			if len(lines) != 2 || !strings.Contains(lines[0], `"serverInfo"`) || !strings.Contains(lines[1], `"verify_schema"`) {
				t.Errorf("stdout = %q, want the initialize and tools/list answers", lines)
			}
			for _, l := range lines {
				if !json.Valid([]byte(l)) {
					t.Errorf("stdout carries a non-JSON line: %q", l)
				}
			}
			if !strings.Contains(stderr.String(), "serving MCP over stdio") {
				t.Errorf("stderr = %s", stderr.String())
			}
			if tt.locked != strings.Contains(stderr.String(), "without reputation") {
				t.Errorf("locked=%v but stderr = %s", tt.locked, stderr.String())
			}
		})
	}
}

func TestServerFlagErrors(t *testing.T) {
	for _, tt := range []struct {
		name     string
		args     []string
		wantExit int // 0: an error other than an exit code
		wantErr  string
	}{
		{name: "write timeout not above verify timeout", args: []string{"--write-timeout", "10s", "--verify-timeout", "10s"}, wantErr: "--write-timeout"},
		{name: "public url not http", args: []string{"--public-url", "ftp://example.org"}, wantErr: "--public-url"},
		{name: "public url with a query", args: []string{"--public-url", "https://example.org/?a=1"}, wantErr: "--public-url"},
		{name: "allowed host with a scheme", args: []string{"--allowed-host", "http://verifier.lan"}, wantExit: 2},
		{name: "allowed host with a port", args: []string{"--allowed-host", "verifier.lan:8080"}, wantExit: 2},
		{name: "allowed host empty", args: []string{"--allowed-host", ""}, wantExit: 2},
		{name: "no body allowed", args: []string{"--max-body", "0"}, wantErr: "--max-body"},
		{name: "zero timeout", args: []string{"--read-header-timeout", "0s"}, wantErr: "timeout"},
		{name: "negative store probe", args: []string{"--store-probe-interval", "-1s"}, wantErr: "--store-probe-interval"},
		{name: "bad listen address", args: []string{"--http", "127.0.0.1:notaport"}, wantErr: "listening"},
		{name: "unknown flag", args: []string{"--nope"}, wantExit: 2},
		{name: "stray argument", args: []string{"serve"}, wantExit: 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			args := append([]string{"--data-dir", t.TempDir()}, tt.args...)
			err := run(context.Background(), args, strings.NewReader(""), io.Discard, &stderr, testEnv)
			var ee exitError
			switch {
			case tt.wantExit != 0:
				if !errors.As(err, &ee) || ee.code != tt.wantExit {
					t.Errorf("run(%v) = %v, want exit %d", tt.args, err, tt.wantExit)
				}
			case err == nil || !strings.Contains(err.Error(), tt.wantErr):
				t.Errorf("run(%v) = %v, want an error about %s", tt.args, err, tt.wantErr)
			}
		})
	}
	if err := run(context.Background(), []string{"-h"}, strings.NewReader(""), io.Discard, io.Discard, testEnv); err != nil {
		t.Errorf("run(-h) = %v, want nil", err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestServeHTTPAllowance: the payment flags reach the HTTP routes: the free
// allowance is enforced, published in /llms.txt and /.well-known/x402.
func TestServeHTTPAllowance(t *testing.T) {
	srv := startHTTP(t, "--free-per-day", "2")
	body := mustRead(t, filepath.Join("testdata", "invoice-pass.json"))
	for i, want := range []int{http.StatusOK, http.StatusOK, http.StatusTooManyRequests} {
		resp, answer := srv.post(t, "/verify/schema", body)
		if resp.StatusCode != want {
			t.Fatalf("call %d = %d %s, want %d", i+1, resp.StatusCode, answer, want)
		}
		if want == http.StatusTooManyRequests && (resp.Header.Get("Retry-After") == "" || !bytes.Contains(answer, []byte(`"rate_limited"`))) {
			t.Errorf("past the allowance: Retry-After %q, body %s", resp.Header.Get("Retry-After"), answer)
		}
	}
	if _, text := srv.get(t, "/llms.txt"); !bytes.Contains(text, []byte("Free allowance: 2 verifications per client")) {
		t.Errorf("/llms.txt does not publish the allowance:\n%s", text)
	}
	if resp, _ := srv.get(t, "/.well-known/x402"); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /.well-known/x402 = %d", resp.StatusCode)
	}
	if _, doc := srv.get(t, "/openapi.json"); !bytes.Contains(doc, []byte(`"/.well-known/x402"`)) {
		t.Error("/openapi.json does not document /.well-known/x402")
	}
}
