package mcpserver

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
//
// Reading is bounded by answering (back-pressure): the SDK handles every
// request in a goroutine of its own and keeps its answer until the answer
// is written, so a client that pipelines requests without reading stdout
// made the server read and hold them all (40,000 pipelined tools/list held
// 1.4 GiB). The connection reads the next frame only while fewer than
// maxPendingCalls requests, and fewer than maxPendingBytes of their frames,
// wait for their answers to be written; a client that does not read stdout
// stops the server reading stdin until it does.
type stdioTransport struct {
	ctx   context.Context
	guard *frameGuard
}

// Bounds of the requests a stdio connection holds unanswered (see
// stdioTransport). One request is always taken, however long its frame
// (up to MaxStdioFrame).
const (
	maxPendingCalls = 64
	maxPendingBytes = 16 << 20
)

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
		sizes:    make(map[jsonrpc.ID]int),
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

	mu           sync.Mutex
	pending      int                // requests read and not yet answered
	pendingBytes int                // the length of their frames
	sizes        map[jsonrpc.ID]int // the frame length of each, by id
	// unnamed are the frame lengths of requests whose answer carries no
	// id: the SDK answers a request that reuses the id of one in flight
	// with a null id.
	unnamed []int
	changed chan struct{} // signalled when pending drops
}

// readLoop passes the input's messages to Read until the input ends or the
// connection is closed, counting the requests among them, and reads the
// next one only when there is room for it (waitRoom).
func (c *stdioConn) readLoop() {
	for {
		if !c.waitRoom() {
			c.deliver(messageOrErr{err: io.EOF})
			return
		}
		msg, size, err := c.guard.next()
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			c.taken(req.ID, size)
		}
		if errors.Is(err, io.EOF) {
			c.waitAnswered()
		}
		if !c.deliver(messageOrErr{msg, err}) || err != nil {
			return
		}
	}
}

// deliver hands m to Read, or reports false when the connection closed
// first.
func (c *stdioConn) deliver(m messageOrErr) bool {
	select {
	case c.incoming <- m:
		return true
	case <-c.closed:
		return false
	}
}

// taken counts a request read, of id and a frame of size bytes.
func (c *stdioConn) taken(id jsonrpc.ID, size int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending++
	c.pendingBytes += size
	if _, inFlight := c.sizes[id]; inFlight {
		c.unnamed = append(c.unnamed, size)
	} else {
		c.sizes[id] = size
	}
}

// answered counts the answer to the request of id written.
func (c *stdioConn) answered(id jsonrpc.ID) {
	c.mu.Lock()
	size, ok := c.sizes[id]
	if ok {
		delete(c.sizes, id)
	} else if len(c.unnamed) > 0 {
		size, c.unnamed = c.unnamed[0], c.unnamed[1:]
	}
	c.pending--
	c.pendingBytes -= size
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

// waitRoom waits until another request may be read: none is unanswered, or
// fewer than maxPendingCalls are and their frames total less than
// maxPendingBytes. It reports false when ctx is done or the connection
// closed first.
func (c *stdioConn) waitRoom() bool {
	return c.waitUntil(func() bool {
		return c.pending <= 0 || c.pending < maxPendingCalls && c.pendingBytes < maxPendingBytes
	})
}

// waitAnswered waits until every request read has been answered, ctx is
// done or the connection closed.
func (c *stdioConn) waitAnswered() {
	c.waitUntil(func() bool { return c.pending <= 0 })
}

// waitUntil waits until cond (called with c.mu held) holds, and reports
// false when ctx is done or the connection closed first.
func (c *stdioConn) waitUntil(cond func() bool) bool {
	for {
		c.mu.Lock()
		done := cond()
		c.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-c.changed:
		case <-c.ctx.Done():
			return false
		case <-c.closed:
			return false
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
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.answered(resp.ID)
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
