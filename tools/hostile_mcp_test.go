package tools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// stdioSession is ServeStdio running in this process on pipes, with a
// reader of its output frames.
type stdioSession struct {
	in     *io.PipeWriter
	frames chan []byte
	done   chan error
	nextID int
}

// startStdioSession serves MCP over in-process pipes and initializes the
// session.
func startStdioSession(t *testing.T, svc *Service) *stdioSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &stdioSession{in: inW, frames: make(chan []byte, 16), done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		s.done <- ServeStdio(ctx, svc, inR, outW)
		outW.Close()
	}()
	go func() {
		r := bufio.NewReaderSize(outR, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				s.frames <- line
			}
			if err != nil {
				close(s.frames)
				return
			}
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case err := <-s.done:
			if err != nil {
				t.Errorf("ServeStdio: %v", err)
			}
		case <-time.After(10 * time.Second * raceSlowdown):
			t.Error("ServeStdio did not return after its input closed")
		}
		cancel()
	})
	s.request(t, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"hostile","version":"0"}}`)
	s.write(t, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return s
}

func (s *stdioSession) write(t *testing.T, frame []byte) {
	t.Helper()
	if _, err := s.in.Write(append(frame, '\n')); err != nil {
		t.Fatalf("writing a frame: %v", err)
	}
}

// next returns the next output frame as an object.
func (s *stdioSession) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case line, ok := <-s.frames:
		if !ok {
			t.Fatalf("the server closed its output (it ended: %v)", <-s.done)
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("output frame is not a JSON object: %v: %.300s", err, line)
		}
		return m
	case <-time.After(hangBound):
		t.Fatalf("no answer within %v", hangBound)
	}
	return nil
}

// request sends a request with params (raw JSON) and returns its answer.
func (s *stdioSession) request(t *testing.T, method, params string) map[string]any {
	t.Helper()
	s.nextID++
	s.write(t, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, s.nextID, method, params))
	m := s.next(t)
	if m["id"] != float64(s.nextID) {
		t.Fatalf("%s: answer %v, want id %d", method, m, s.nextID)
	}
	return m
}

// alive checks that the session still answers.
func (s *stdioSession) alive(t *testing.T) {
	t.Helper()
	if m := s.request(t, "ping", `{}`); m["error"] != nil {
		t.Fatalf("ping: %v", m)
	}
}

// TestMCPStdioBadFrames sends frames the SDK cannot read: each gets a
// JSON-RPC error with a null id and a fixed message, and the session goes on
// (the SDK alone ended it at the first one).
func TestMCPStdioBadFrames(t *testing.T) {
	s := startStdioSession(t, quietService(t, true))
	for _, tt := range []struct {
		name  string
		frame string
		code  float64
	}{
		{"truncated", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + marker + `"`, rpcParseError},
		{"trailing comma", `{"jsonrpc":"2.0","id":7,"method":"ping",}`, rpcParseError},
		{"two values", `{"jsonrpc":"2.0","id":7,"method":"ping"} {"x":"` + marker + `"}`, rpcParseError},
		{"not JSON", marker + ` hello`, rpcParseError},
		{"empty object", `{}`, rpcInvalidRequest},
		{"a number", `12345678`, rpcInvalidRequest},
		{"a string", `"` + marker + `"`, rpcInvalidRequest},
		{"wrong version", `{"jsonrpc":"` + marker + `","id":7,"method":"ping"}`, rpcInvalidRequest},
		{"method not a string", `{"jsonrpc":"2.0","id":7,"method":{"m":"` + marker + `"}}`, rpcInvalidRequest},
		{"empty batch", `[]`, rpcInvalidRequest},
		{"batch", `[{"jsonrpc":"2.0","id":7,"method":"ping"}]`, rpcInvalidRequest},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s.write(t, []byte(tt.frame))
			m := s.next(t)
			e, _ := m["error"].(map[string]any)
			if m["id"] != nil || e == nil || e["code"] != tt.code {
				t.Errorf("answer %v; want a JSON-RPC error %v with a null id", m, tt.code)
			}
			if b, _ := json.Marshal(m); bytes.Contains(b, []byte(marker)) {
				t.Errorf("the answer echoes the frame: %s", b)
			}
			s.alive(t)
		})
	}
}

// TestFrameGuardLongFrame checks the frame length limit with a small one:
// the long frame is refused whole, and the next frame passes.
func TestFrameGuardLongFrame(t *testing.T) {
	var out bytes.Buffer
	long := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 300) + `"}}`
	short := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	g := newFrameGuard(strings.NewReader(long+"\n"+short+"\n"), &out)
	g.max = 100
	var got []any
	for {
		msg, _, err := g.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		req, _ := msg.(*jsonrpc.Request)
		if req == nil {
			t.Fatalf("passed on %#v, want a request", msg)
		}
		got = append(got, req.ID.Raw())
	}
	if want := []any{int64(2)}; !slices.Equal(got, want) {
		t.Errorf("passed on the requests of ids %v, want only the short frame's %v", got, want)
	}
	if !strings.Contains(out.String(), `"code":-32600`) || strings.Contains(out.String(), "aaaa") {
		t.Errorf("answer to the long frame = %q, want an Invalid Request error without the frame", out.String())
	}
}

// TestMCPHTTPMalformed checks that what the SDK refuses over HTTP comes back
// as a JSON-RPC error of a fixed message (the SDK's own text quoted the
// body), never a 5xx.
func TestMCPHTTPMalformed(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	for _, tt := range []struct {
		name, body string
		accept     string
		refused    bool // a 4xx JSON-RPC error; else the SDK may answer
	}{
		{"truncated", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + marker + `"`, "", true},
		// The SDK reads one JSON value and ignores what follows; the
		// tool arguments are still checked whole by the engine.
		{"trailing garbage", `{"jsonrpc":"2.0","id":1,"method":"ping"}` + marker, "", false},
		{"wrong version", `{"jsonrpc":"` + marker + `","id":1,"method":"ping"}`, "", true},
		{"not an object", `"` + marker + `"`, "", true},
		{"no accept", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + marker + `"}}`, "text/html", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			accept := tt.accept
			if accept == "" {
				accept = "application/json, text/event-stream"
			}
			resp, body := f.do(t, http.MethodPost, "/mcp", strings.NewReader(tt.body),
				http.Header{"Content-Type": {"application/json"}, "Accept": {accept}})
			if resp.StatusCode >= 500 || tt.refused && resp.StatusCode < 400 {
				t.Errorf("status %d, want a 4xx (refused %v): %s", resp.StatusCode, tt.refused, body)
			}
			if bytes.Contains(body, []byte(marker)) {
				t.Errorf("the answer echoes the request: %s", body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q, want application/json: %s", ct, body)
			}
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil || tt.refused && m["error"] == nil {
				t.Errorf("body is not a JSON-RPC error: %s", body)
			}
		})
	}
}

// toolAnswer classifies a verify_schema answer over stdio: a verdict, an
// error result (its code), or a JSON-RPC error (its code).
func toolAnswer(t *testing.T, m map[string]any) (result, code string, rpcCode float64) {
	t.Helper()
	if e, ok := m["error"].(map[string]any); ok {
		c, _ := e["code"].(float64)
		return "", "", c
	}
	r, _ := m["result"].(map[string]any)
	sc, _ := r["structuredContent"].(map[string]any)
	if sc == nil {
		t.Fatalf("tool result without structured content: %v", m)
	}
	if r["isError"] == true {
		c, _ := sc["code"].(string)
		if st, _ := sc["status"].(float64); st >= 500 {
			t.Errorf("error result with status %v: %v", st, sc)
		}
		return "", c, 0
	}
	res, _ := sc["result"].(string)
	return res, "", 0
}
