package tools

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioTransport is the MCP transport of ServeStdio: newline-delimited
// JSON-RPC messages, as mcp.IOTransport frames them, read through a
// frameGuard. Each message is decoded once, by the SDK's own
// jsonrpc.DecodeMessage, when the guard checks it — the SDK's transport
// would decode it again (after trying it as a batch, which the guard has
// already refused) — and written with jsonrpc.EncodeMessage, so the SDK
// still owns the protocol and this type only the framing.
//
// A client that writes its requests and closes stdin at once (a pipe, a
// script) still gets every answer: at end of input the EOF is held back
// until each request read has been answered, or ctx is done.
type stdioTransport struct {
	ctx   context.Context
	guard *frameGuard
}

// newStdioTransport serves in and out through a frameGuard.
func newStdioTransport(ctx context.Context, in io.Reader, out io.Writer) *stdioTransport {
	return &stdioTransport{ctx: ctx, guard: newFrameGuard(in, out)}
}

// Connect starts reading the input; it is called once, by Server.Run.
func (t *stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &stdioConn{
		ctx:      t.ctx,
		guard:    t.guard,
		incoming: make(chan messageOrErr),
		closed:   make(chan struct{}),
		changed:  make(chan struct{}, 1),
	}
	go c.readLoop()
	return c, nil
}

type messageOrErr struct {
	msg jsonrpc.Message
	err error
}

// stdioConn is the connection of a stdioTransport.
type stdioConn struct {
	ctx      context.Context
	guard    *frameGuard
	incoming chan messageOrErr
	// closed is closed by Close. A read of the input blocked in readLoop
	// stays blocked (stdin cannot be interrupted), as in the SDK's own
	// transport, but Read returns.
	closed    chan struct{}
	closeOnce sync.Once

	mu      sync.Mutex
	pending int           // requests read and not yet answered
	changed chan struct{} // signalled when pending drops
}

// readLoop passes the input's messages to Read until the input ends or the
// connection is closed, counting the requests among them.
func (c *stdioConn) readLoop() {
	for {
		msg, err := c.guard.next()
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			c.mu.Lock()
			c.pending++
			c.mu.Unlock()
		}
		if errors.Is(err, io.EOF) {
			c.waitAnswered()
		}
		select {
		case c.incoming <- messageOrErr{msg, err}:
		case <-c.closed:
			return
		}
		if err != nil {
			return
		}
	}
}

func (c *stdioConn) waitAnswered() {
	for {
		c.mu.Lock()
		done := c.pending <= 0
		c.mu.Unlock()
		if done {
			return
		}
		select {
		case <-c.changed:
		case <-c.ctx.Done():
			return
		case <-c.closed:
			return
		}
	}
}

// Read returns the next message from the input.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	default:
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case m := <-c.incoming:
		return m.msg, m.err
	case <-c.closed:
		return nil, io.EOF
	}
}

// Write writes msg as one line, and counts an answered request. An error
// answer goes out as safeRPCError makes it: the SDK answers an unknown
// method, or params it cannot decode, before any middleware runs, quoting
// the caller.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
	}
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.Error != nil {
		safe := *resp
		safe.Error = safeRPCError(resp.Error)
		msg = &safe
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	_, err = c.guard.out.Write(append(data, '\n'))
	if _, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		c.pending--
		c.mu.Unlock()
		select {
		case c.changed <- struct{}{}:
		default:
		}
	}
	return err
}

// Close ends the connection; it may be called more than once.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// SessionID is empty: stdio has one session and no session ids.
func (c *stdioConn) SessionID() string { return "" }
