//go:build unix

package mcpserver

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// blockingPipe returns a pipe made with pipe(2), as a stdio server inherits
// it: blocking, and polled by no File (os.Pipe's are both non-blocking and
// polled). fd is r's descriptor; both ends are closed when the test ends.
func blockingPipe(t *testing.T) (r, w *os.File, fd int) {
	t.Helper()
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	r, w = os.NewFile(uintptr(fds[0]), "stdin"), os.NewFile(uintptr(fds[1]), "client")
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w, fds[0]
}

// TestPollableInputPipe reads a blocking pipe, as a stdio server inherits
// it, through the poller: the frames arrive and EOF ends the reading as
// before, and restore makes the descriptor blocking again.
func TestPollableInputPipe(t *testing.T) {
	r, w, fd := blockingPipe(t)
	in, restore := PollableInput(r)
	if in == io.Reader(r) {
		t.Fatal("a blocking pipe came back unchanged")
	}
	if !nonblocking(fd) {
		t.Fatal("the pipe is still blocking")
	}
	go func() {
		w.Write([]byte("first frame\nsecond frame\n"))
		w.Close()
	}()
	got, err := io.ReadAll(in)
	if err != nil || string(got) != "first frame\nsecond frame\n" {
		t.Fatalf("read %q, %v", got, err)
	}
	restore()
	if nonblocking(fd) {
		t.Fatal("restore left the pipe non-blocking")
	}
}

// TestPollableInputUnchanged leaves alone what is not a blocking pipe or
// socket: a regular file, and a pipe the os package already polls.
func TestPollableInputUnchanged(t *testing.T) {
	file, err := os.Create(filepath.Join(t.TempDir(), "frames"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	polled, w, err := os.Pipe() // non-blocking, registered with the poller
	if err != nil {
		t.Fatal(err)
	}
	defer polled.Close()
	defer w.Close()
	for name, f := range map[string]*os.File{"file": file, "polled pipe": polled} {
		in, restore := PollableInput(f)
		restore()
		if in != io.Reader(f) {
			t.Errorf("%s: replaced", name)
		}
	}
	// Fd would have put the polled pipe in blocking mode; SyscallConn does not.
	rc, err := polled.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	rc.Control(func(fd uintptr) {
		if !nonblocking(int(fd)) {
			t.Error("the polled pipe was made blocking")
		}
	})
}

// TestPollableInputOwnsItsDescriptor: the reader polls a descriptor of its
// own, so collecting it unclosed (a server that returned without restore)
// never closes f's, whose number another file could have taken since.
func TestPollableInputOwnsItsDescriptor(t *testing.T) {
	r, _, fd := blockingPipe(t)
	func() {
		if in, _ := PollableInput(r); in == io.Reader(r) {
			t.Fatal("a blocking pipe came back unchanged")
		}
	}()
	for range 20 { // the reader is unreachable: let its cleanup run
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		t.Fatalf("f's descriptor was closed with the reader: %v", err)
	}
}
