package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/verifier-dev/verifier/tools/internal/testkit"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestMCPStdioBadFrames sends frames the SDK cannot read: each gets a
// JSON-RPC error with a null id and a fixed message, and the session goes on
// (the SDK alone ended it at the first one).
func TestMCPStdioBadFrames(t *testing.T) {
	s := testkit.StartStdioSession(t, ServeStdio, testkit.QuietService(t, true))
	for _, tt := range []struct {
		name  string
		frame string
		code  float64
	}{
		{"truncated", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + testkit.Marker + `"`, rpcParseError},
		{"trailing comma", `{"jsonrpc":"2.0","id":7,"method":"ping",}`, rpcParseError},
		{"two values", `{"jsonrpc":"2.0","id":7,"method":"ping"} {"x":"` + testkit.Marker + `"}`, rpcParseError},
		{"not JSON", testkit.Marker + ` hello`, rpcParseError},
		{"empty object", `{}`, rpcInvalidRequest},
		{"a number", `12345678`, rpcInvalidRequest},
		{"a string", `"` + testkit.Marker + `"`, rpcInvalidRequest},
		{"wrong version", `{"jsonrpc":"` + testkit.Marker + `","id":7,"method":"ping"}`, rpcInvalidRequest},
		{"method not a string", `{"jsonrpc":"2.0","id":7,"method":{"m":"` + testkit.Marker + `"}}`, rpcInvalidRequest},
		{"empty batch", `[]`, rpcInvalidRequest},
		{"batch", `[{"jsonrpc":"2.0","id":7,"method":"ping"}]`, rpcInvalidRequest},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s.Write(t, []byte(tt.frame))
			m := s.Next(t)
			e, _ := m["error"].(map[string]any)
			if m["id"] != nil || e == nil || e["code"] != tt.code {
				t.Errorf("answer %v; want a JSON-RPC error %v with a null id", m, tt.code)
			}
			if b, _ := json.Marshal(m); bytes.Contains(b, []byte(testkit.Marker)) {
				t.Errorf("the answer echoes the frame: %s", b)
			}
			s.Alive(t)
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
