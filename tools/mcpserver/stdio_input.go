//go:build unix

package mcpserver

import (
	"io"
	"os"
	"syscall"
)

// PollableInput returns a reader of f that waits in Go's network poller
// instead of in a blocking read(2), and a function that closes that reader
// and puts f's descriptor back in blocking mode. It applies to a blocking
// pipe or socket (what an MCP client hands a stdio server); anything else
// (a terminal, a file, a descriptor already non-blocking) comes back as f.
//
// Why: a goroutine blocked in read(2) holds a thread in a system call; the
// runtime's monitor hands its processor off after 20 µs and, the program
// looking busy, goes on polling every 20 µs. Between the calls of an MCP
// session that polling cost a stdio server about a seventh of its CPU
// (BENCHMARKS.md, MCP); a read parked in the poller costs nothing while it
// waits.
func PollableInput(f *os.File) (io.Reader, func()) {
	keep := func() (io.Reader, func()) { return f, func() {} }
	rc, err := f.SyscallConn() // unlike Fd, leaves the descriptor's mode alone
	if err != nil {
		return keep()
	}
	fd := -1
	if err := rc.Control(func(d uintptr) { fd = int(d) }); err != nil || fd < 0 {
		return keep()
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return keep()
	}
	if mode := st.Mode & syscall.S_IFMT; mode != syscall.S_IFIFO && mode != syscall.S_IFSOCK {
		return keep()
	}
	if nonblocking(fd) {
		return keep() // os.NewFile already made f pollable
	}
	// The poller gets a duplicate of its own, so that the File it polls
	// owns its descriptor: a second File over fd itself would close fd when
	// collected, and with it whatever had since reused the number.
	syscall.ForkLock.RLock()
	dup, err := syscall.Dup(fd)
	if err == nil {
		syscall.CloseOnExec(dup)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return keep()
	}
	// O_NONBLOCK belongs to the open file, which fd and dup share.
	if err := syscall.SetNonblock(dup, true); err != nil {
		syscall.Close(dup)
		return keep()
	}
	// os.NewFile registers a non-blocking descriptor with the poller (a
	// pipe or a socket that no File polls yet always can be).
	polled := os.NewFile(uintptr(dup), f.Name())
	return polled, func() {
		polled.Close()
		_ = syscall.SetNonblock(fd, false)
	}
}

// nonblocking reports whether fd has O_NONBLOCK set.
func nonblocking(fd int) bool {
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFL, 0)
	return errno == 0 && flags&syscall.O_NONBLOCK != 0
}
