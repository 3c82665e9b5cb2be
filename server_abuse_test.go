package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// abuseTimeouts are the server's timeouts in the abuse test: shorter than
// the defaults (5 s, 30 s, 120 s) so that the test sees them act.
var abuseTimeouts = []string{"--read-header-timeout", "1s", "--read-timeout", "3s", "--idle-timeout", "3s"}

// closedWithin dials addr, runs send, then reads until the server closes
// the connection, and returns how long after send that took (or ok false
// if it stayed open for limit).
func closedWithin(addr string, limit time.Duration, send func(net.Conn) error) (time.Duration, bool, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, false, err
	}
	defer conn.Close()
	if err := send(conn); err != nil {
		return 0, false, err
	}
	start := time.Now()
	conn.SetReadDeadline(time.Now().Add(limit))
	_, err = io.Copy(io.Discard, conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return limit, false, nil
	}
	return time.Since(start), true, nil
}

// TestServeHTTPUnderAbuse attacks a real listener on loopback with slow
// headers, slow bodies, idle connections and clients that hang up
// mid-request, all at once, while a well-behaved client verifies an
// invoice every 50 ms. The good client's every call must succeed with p99
// latency under a second (under the race detector too); the server must
// close each abusive connection within its timeouts; and once the abuse
// ends its goroutines must drain back (no connection leaks).
func TestServeHTTPUnderAbuse(t *testing.T) {
	srv := startHTTP(t, abuseTimeouts...)
	addr := strings.TrimPrefix(srv.base, "http://")
	invoice, err := os.ReadFile(filepath.Join("testdata", "invoice-pass.json"))
	if err != nil {
		t.Fatal(err)
	}
	if resp, _ := srv.post(t, "/verify/schema", invoice); resp.StatusCode != http.StatusOK {
		t.Fatalf("warm-up verification: %d", resp.StatusCode)
	}
	baseline := runtime.NumGoroutine()

	const window = 5 * time.Second
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	problems := map[string][]string{}
	report := func(kind, format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(problems[kind]) < 5 {
			problems[kind] = append(problems[kind], fmt.Sprintf(format, args...))
		}
	}
	var counts [4]atomic.Int32 // slow headers, slow bodies, idle, hang-ups

	// Slow headers: a byte of header every 100 ms, never finished; the
	// server must hang up after --read-header-timeout (1 s).
	for range 100 {
		wg.Go(func() {
			d, closed, err := closedWithin(addr, 10*time.Second, func(c net.Conn) error {
				if _, err := io.WriteString(c, "POST /verify/schema HTTP/1.1\r\nHost: 127.0.0.1\r\n"); err != nil {
					return err
				}
				go func() {
					for i := 0; i < 100; i++ {
						if _, err := io.WriteString(c, "X"); err != nil {
							return
						}
						time.Sleep(100 * time.Millisecond)
					}
				}()
				return nil
			})
			counts[0].Add(1)
			switch {
			case err != nil:
				report("slow headers", "dial: %v", err)
			case !closed || d > 4*time.Second:
				report("slow headers", "open for %v", d)
			}
		})
	}
	// Slow bodies: a declared 1 MiB body sent 10 bytes per 100 ms; the
	// server must give up by --read-timeout (3 s).
	for range 50 {
		wg.Go(func() {
			d, closed, err := closedWithin(addr, 15*time.Second, func(c net.Conn) error {
				if _, err := io.WriteString(c, "POST /verify/schema HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1048576\r\n\r\n{"); err != nil {
					return err
				}
				go func() {
					for i := 0; i < 150; i++ {
						if _, err := io.WriteString(c, `"aaaaaaaa"`); err != nil {
							return
						}
						time.Sleep(100 * time.Millisecond)
					}
				}()
				return nil
			})
			counts[1].Add(1)
			switch {
			case err != nil:
				report("slow bodies", "dial: %v", err)
			case !closed || d > 8*time.Second:
				report("slow bodies", "open for %v", d)
			}
		})
	}
	// Idle connections: opened and never written to; --read-header-timeout
	// covers the wait for a first request.
	for range 300 {
		wg.Go(func() {
			d, closed, err := closedWithin(addr, 10*time.Second, func(net.Conn) error { return nil })
			counts[2].Add(1)
			switch {
			case err != nil:
				report("idle", "dial: %v", err)
			case !closed || d > 4*time.Second:
				report("idle", "open for %v", d)
			}
		})
	}
	// Hang-ups: half a body then close, or a whole request then close
	// without reading the answer; again and again during the window.
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				c, err := net.Dial("tcp", addr)
				if err != nil {
					report("hang-ups", "dial: %v", err)
					return
				}
				req := fmt.Sprintf("POST /verify/schema HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(invoice))
				if (w+i)%2 == 0 {
					io.WriteString(c, req+string(invoice[:len(invoice)/2]))
				} else {
					io.WriteString(c, req+string(invoice))
				}
				c.Close()
				counts[3].Add(1)
				time.Sleep(20 * time.Millisecond)
			}
		})
	}

	// The well-behaved client.
	client := &http.Client{Timeout: 10 * time.Second}
	var latencies []time.Duration
	deadline := time.Now().Add(window)
	for time.Now().Before(deadline) {
		start := time.Now()
		resp, err := client.Post(srv.base+"/verify/schema", "application/json", bytes.NewReader(invoice))
		if err != nil {
			t.Errorf("good client: %v", err)
			break
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		latencies = append(latencies, time.Since(start))
		if resp.StatusCode != http.StatusOK {
			t.Errorf("good client: status %d", resp.StatusCode)
		}
		time.Sleep(50 * time.Millisecond)
	}
	close(stop)
	wg.Wait()

	slices.Sort(latencies)
	if len(latencies) < 20 {
		t.Fatalf("the good client made only %d calls in %v", len(latencies), window)
	}
	p50, p99 := latencies[len(latencies)/2], latencies[(len(latencies)*99)/100]
	t.Logf("good client: %d calls during the abuse, p50 %v, p99 %v, max %v; abusers: %d slow headers, %d slow bodies, %d idle, %d hang-ups",
		len(latencies), p50, p99, latencies[len(latencies)-1], counts[0].Load(), counts[1].Load(), counts[2].Load(), counts[3].Load())
	if p99 > time.Second {
		t.Errorf("good client p99 latency %v, want under 1s", p99)
	}
	for kind, list := range problems {
		t.Errorf("%s: %d problem(s), e.g. %v", kind, len(list), list)
	}

	// No connection leaks: the server's goroutines drain back once the
	// abusers are gone (idle keep-alive connections close after 3 s).
	client.CloseIdleConnections()
	var n int
	for wait := time.Now().Add(10 * time.Second); time.Now().Before(wait); time.Sleep(100 * time.Millisecond) {
		if n = runtime.NumGoroutine(); n <= baseline+10 {
			break
		}
	}
	if n > baseline+10 {
		t.Errorf("%d goroutines after the abuse, %d before: connections leak", n, baseline)
	}
	if resp, _ := srv.get(t, "/health"); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /health = %d after the abuse", resp.StatusCode)
	}
}

// TestServeHTTPHeaderLimits: a header block over --max-header-bytes and a
// request line of garbage are refused by the server without reaching a
// handler, and it keeps serving.
func TestServeHTTPHeaderLimits(t *testing.T) {
	srv := startHTTP(t, "--max-header-bytes", "4096")
	addr := strings.TrimPrefix(srv.base, "http://")
	for _, tt := range []struct {
		name, request string
		status        int
	}{
		{"huge header", "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + strings.Repeat("a", 64<<10) + "\r\n\r\n", http.StatusRequestHeaderFieldsTooLarge},
		{"garbage request line", "\x00\x01\x02 nonsense\r\n\r\n", http.StatusBadRequest},
		{"bad content length", "POST /verify/schema HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -5\r\n\r\n", http.StatusBadRequest},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.WriteString(c, tt.request); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("reading the answer: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.status)
			}
		})
	}
	if resp, _ := srv.get(t, "/health"); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /health = %d afterwards", resp.StatusCode)
	}
}
