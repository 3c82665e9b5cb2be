//go:build !unix

package mcpserver

import (
	"io"
	"os"
)

// PollableInput returns f unchanged where descriptors cannot be made
// non-blocking (see the Unix version).
func PollableInput(f *os.File) (io.Reader, func()) { return f, func() {} }
