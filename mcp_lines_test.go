package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"
)

// mcpLines is an MCP client over newline-delimited JSON-RPC, as a stdio
// client speaks it to a verifier's stdin and stdout: in-process (pipes into
// run) or a real process.
type mcpLines struct {
	in     io.Writer
	out    *bufio.Scanner
	nextID int
}

func newMCPLines(in io.Writer, out io.Reader) *mcpLines {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	return &mcpLines{in: in, out: sc}
}

// request sends one JSON-RPC request and returns its answer's result.
func (c *mcpLines) request(method, params string) (json.RawMessage, error) {
	c.nextID++
	id := c.nextID
	var line bytes.Buffer // one line per message: params may be indented
	if err := json.Compact(&line, []byte(params)); err != nil {
		return nil, fmt.Errorf("params of %s: %w", method, err)
	}
	if _, err := fmt.Fprintf(c.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, line.Bytes()); err != nil {
		return nil, fmt.Errorf("sending %s: %w", method, err)
	}
	for c.out.Scan() {
		var msg struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(c.out.Bytes(), &msg); err != nil {
			return nil, fmt.Errorf("answer to %s is not JSON: %q", method, c.out.Text())
		}
		if msg.ID == nil || *msg.ID != id {
			continue // a notification (a log message)
		}
		if msg.Error != nil {
			return nil, fmt.Errorf("%s: JSON-RPC error %s", method, msg.Error)
		}
		return msg.Result, nil
	}
	return nil, fmt.Errorf("no answer to %s: %v", method, c.out.Err())
}

// handshake initializes the session.
func (c *mcpLines) handshake() error {
	if _, err := c.request("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}`); err != nil {
		return err
	}
	_, err := io.WriteString(c.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	return err
}

// toolResult is what a test reads of a tools/call result.
type toolResult struct {
	IsError    bool            `json:"isError"`
	Structured json.RawMessage `json:"structuredContent"`
	Content    []struct {
		Text string `json:"text"`
	} `json:"content"`
}

// call calls a tool with args (a JSON object).
func (c *mcpLines) call(tool, args string) (*toolResult, error) {
	raw, err := c.request("tools/call", fmt.Sprintf(`{"name":%q,"arguments":%s}`, tool, args))
	if err != nil {
		return nil, err
	}
	var res toolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("tools/call %s result: %w", tool, err)
	}
	return &res, nil
}

// mustCall is call that ends the test on a transport error or an isError
// result.
func (c *mcpLines) mustCall(t *testing.T, tool, args string) json.RawMessage {
	t.Helper()
	res, err := c.call(tool, args)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("%s: isError: %s", tool, res.Structured)
	}
	return res.Structured
}

// startStdio runs the program in stdio mode on dir in a goroutine, as a
// client starts it: stdin and stdout are pipes the test writes and reads;
// done receives what run returned once stdin is closed.
func startStdio(dir string) (stdin *io.PipeWriter, stdout *io.PipeReader, stderr *lockedBuffer, done <-chan error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	stderr = &lockedBuffer{}
	ran := make(chan error, 1)
	go func() {
		ran <- run(context.Background(), []string{"--data-dir", dir}, inR, outW, stderr, testEnv)
		outW.Close()
	}()
	return inW, outR, stderr, ran
}
