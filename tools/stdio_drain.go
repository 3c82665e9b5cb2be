package tools

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"sync"
)

// drainingStdio sits between the stdio streams and the MCP transport so that
// a client which writes its requests and closes stdin at once (a pipe, a
// script) still gets every answer: at end of input it holds back the EOF
// until each request read has been answered, or ctx is done. It counts
// newline-delimited JSON-RPC frames: a frame with an id and a method is a
// request, a frame with an id and no method is a response.
type drainingStdio struct {
	ctx     context.Context
	in      *bufio.Reader
	buf     []byte // the rest of the current input line
	out     io.Writer
	mu      sync.Mutex
	pending int
	changed chan struct{} // signalled when pending drops
}

func newDrainingStdio(ctx context.Context, in io.Reader, out io.Writer) *drainingStdio {
	return &drainingStdio{ctx: ctx, in: bufio.NewReaderSize(in, 64<<10), out: out, changed: make(chan struct{}, 1)}
}

// frame is what classifying a JSON-RPC message needs.
type frame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

func classifyFrame(line []byte) (isRequest, isResponse bool) {
	var f frame
	if json.Unmarshal(line, &f) != nil || len(f.ID) == 0 || string(f.ID) == "null" {
		return false, false
	}
	return f.Method != "", f.Method == ""
}

// Read passes input through line by line and delays EOF until every request
// has its response.
func (d *drainingStdio) Read(p []byte) (int, error) {
	if len(d.buf) == 0 {
		line, err := d.in.ReadBytes('\n')
		if len(line) > 0 {
			if req, _ := classifyFrame(line); req {
				d.mu.Lock()
				d.pending++
				d.mu.Unlock()
			}
			d.buf = line
		} else if err != nil {
			if err == io.EOF {
				d.waitAnswered()
			}
			return 0, err
		}
	}
	n := copy(p, d.buf)
	d.buf = d.buf[n:]
	return n, nil
}

func (d *drainingStdio) waitAnswered() {
	for {
		d.mu.Lock()
		done := d.pending <= 0
		d.mu.Unlock()
		if done {
			return
		}
		select {
		case <-d.changed:
		case <-d.ctx.Done():
			return
		}
	}
}

// Write passes one output frame through and counts answered requests.
func (d *drainingStdio) Write(p []byte) (int, error) {
	n, err := d.out.Write(p)
	if _, resp := classifyFrame(p); resp {
		d.mu.Lock()
		d.pending--
		d.mu.Unlock()
		select {
		case d.changed <- struct{}{}:
		default:
		}
	}
	return n, err
}
