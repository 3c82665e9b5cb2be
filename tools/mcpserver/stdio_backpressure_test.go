package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/tools/internal/testkit"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// pipelineHeapBound bounds the heap ServeStdio may add while a client
// pipelines requests without reading its answers: the answers held for the
// maxPendingCalls requests in flight, and the buffers, with room to spare.
const pipelineHeapBound = 64 << 20

// TestServeStdioPipelineBounded pipes 40,000 tools/list requests (4,000
// under the race detector, still more than the pipes buffer) into ServeStdio and reads none of the answers
// until the server stops taking requests: the server must stop reading
// (back-pressure) with its heap, sampled all along from runtime/metrics,
// under pipelineHeapBound over the heap before. Then every answer is read
// and each request must be answered exactly once. Without the bound the
// server read every request and held every answer (1.4 GiB for 40,000);
// the test stops the run as soon as the heap passes the bound.
func TestServeStdioPipelineBounded(t *testing.T) {
	calls := 40000
	if testkit.RaceSlowdown > 1 {
		calls = 4000
	}
	svc := testkit.QuietService(t, false)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	runtime.GC()
	base := testkit.HeapNow()
	var peak atomic.Uint64
	over := make(chan struct{})
	abort := sync.OnceFunc(func() {
		close(over)
		cancel()
		inW.CloseWithError(io.ErrClosedPipe)
		outR.CloseWithError(io.ErrClosedPipe)
	})
	stopSampling := make(chan struct{})
	var sampling sync.WaitGroup
	sampling.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			var n uint64
			if cur := testkit.HeapNow(); cur > base {
				n = cur - base
			}
			if n > peak.Load() {
				peak.Store(n)
			}
			if n > pipelineHeapBound {
				abort() // the server is holding what it should not: stop it growing
			}
			select {
			case <-stopSampling:
				return
			case <-tick.C:
			}
		}
	})

	served := make(chan error, 1)
	go func() {
		served <- ServeStdio(ctx, svc, inR, outW)
		outW.Close()
	}()

	// The client: initialize, then every request at once, in 64 KiB writes.
	var sent atomic.Int64
	wrote := make(chan error, 1)
	go func() {
		w := bufio.NewWriterSize(inW, 64<<10)
		fmt.Fprintln(w, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pipeline","version":"0"}}}`)
		fmt.Fprintln(w, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		for id := 1; id <= calls; id++ {
			if _, err := fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`+"\n", id); err != nil {
				wrote <- err
				return
			}
			sent.Store(int64(id))
		}
		err := w.Flush()
		if err == nil {
			err = inW.Close()
		}
		wrote <- err
	}()

	// Stdout is not read until the client can send no more: its requests
	// stopped moving for a second (or the heap passed the bound).
	stalled := waitStalled(&sent, over, time.Second, 60*time.Second*testkit.RaceSlowdown)
	select {
	case <-over:
		close(stopSampling)
		sampling.Wait()
		t.Fatalf("the heap grew by more than %d MiB while stdout was not read (%d of %d requests taken); want reading to stop",
			pipelineHeapBound>>20, sent.Load(), calls)
	default:
	}
	if !stalled {
		t.Errorf("the client's requests never stopped moving while stdout was not read (%d of %d sent)", sent.Load(), calls)
	}
	taken := sent.Load()
	t.Logf("stdout unread: the server stopped taking requests after %d of %d; heap peak +%.1f MiB",
		taken, calls, float64(peak.Load())/(1<<20))
	if taken >= int64(calls) {
		t.Errorf("all %d requests were taken while stdout was not read; want back-pressure", calls)
	}

	// Now read every answer: each id once, each a result.
	seen := make([]int, calls+1)
	results, frames := 0, 0
	r := bufio.NewReaderSize(outR, 1<<20)
	for {
		line, err := r.ReadSlice('\n')
		if len(line) > 0 && err == nil {
			frames++
			id, isResult, perr := answerID(line)
			if perr != nil || id < 0 || id > calls {
				t.Fatalf("output frame %d: id %d, %v: %.200s", frames, id, perr, line)
			}
			seen[id]++
			if isResult {
				results++
			}
		}
		if err != nil {
			select {
			case <-over:
				close(stopSampling)
				sampling.Wait()
				t.Fatalf("the heap grew by more than %d MiB while the answers were read (%d read, %d of %d requests sent); want it bounded",
					pipelineHeapBound>>20, frames, sent.Load(), calls)
			default:
			}
			if err != io.EOF {
				t.Fatalf("reading stdout: %v", err)
			}
			break
		}
	}
	close(stopSampling)
	sampling.Wait()
	if err := <-wrote; err != nil {
		t.Errorf("writing the requests: %v", err)
	}
	if err := <-served; err != nil {
		t.Errorf("ServeStdio: %v", err)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("request %d answered %d times, want once", id, n)
			break
		}
	}
	if results != calls+1 {
		t.Errorf("%d results among %d answers, want %d", results, frames, calls+1)
	}
	t.Logf("%d answers read; heap peak over the whole run +%.1f MiB (bound %d MiB)",
		frames, float64(peak.Load())/(1<<20), pipelineHeapBound>>20)
	if p := peak.Load(); p > pipelineHeapBound {
		t.Errorf("heap peak +%d MiB, want under %d MiB", p>>20, pipelineHeapBound>>20)
	}
}

// waitStalled waits until n has not changed for quiet, and reports true; or
// reports false when over is closed or limit passes first.
func waitStalled(n *atomic.Int64, over <-chan struct{}, quiet, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	last, since := n.Load(), time.Now()
	for time.Now().Before(deadline) {
		select {
		case <-over:
			return false
		case <-time.After(20 * time.Millisecond):
		}
		if cur := n.Load(); cur != last {
			last, since = cur, time.Now()
		} else if time.Since(since) >= quiet {
			return true
		}
	}
	return false
}

// answerID reads the id of a JSON-RPC answer frame, and whether it is a
// result, without decoding the result.
func answerID(frame []byte) (id int, isResult bool, err error) {
	dec := jsontext.NewDecoder(bytes.NewReader(frame))
	if _, err := dec.ReadToken(); err != nil {
		return -1, false, err
	}
	id = -1
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return -1, false, err
		}
		switch name.String() {
		case "id":
			v, err := dec.ReadValue()
			if err != nil {
				return -1, false, err
			}
			if id, err = strconv.Atoi(string(v)); err != nil {
				return -1, false, err
			}
			continue
		case "result":
			return id, true, nil
		case "error":
			return id, false, nil
		}
		if err := dec.SkipValue(); err != nil {
			return -1, false, err
		}
	}
	return id, false, nil
}

// TestStdioConnPendingAccounting: the requests a connection counts as
// unanswered, and their bytes, return to zero once each is answered, also
// when a request reuses the id of one in flight (the SDK answers it with a
// null id).
func TestStdioConnPendingAccounting(t *testing.T) {
	c := &stdioConn{sizes: make(map[jsonrpc.ID]int), changed: make(chan struct{}, 1)}
	one, err1 := jsonrpc.MakeID(float64(1))
	two, err2 := jsonrpc.MakeID("two")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	c.taken(one, 10)
	c.taken(two, 20)
	c.taken(one, 40) // a reused id, answered with a null id
	if c.pending != 3 || c.pendingBytes != 70 {
		t.Fatalf("after three requests: %d pending, %d bytes; want 3, 70", c.pending, c.pendingBytes)
	}
	for _, step := range []struct {
		id           jsonrpc.ID
		pending, val int
	}{{jsonrpc.ID{}, 2, 30}, {two, 1, 10}, {one, 0, 0}} {
		c.answered(step.id)
		if c.pending != step.pending || c.pendingBytes != step.val {
			t.Errorf("answered %v: %d pending, %d bytes; want %d, %d", step.id.Raw(), c.pending, c.pendingBytes, step.pending, step.val)
		}
	}
}
