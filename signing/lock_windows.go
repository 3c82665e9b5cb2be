//go:build windows

package signing

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// lockDir takes an exclusive lock on dir/.lock, waiting for any other holder.
// LockFileEx locks belong to the handle, so two goroutines of one process
// exclude each other as two processes do. The returned func releases the
// lock.
func lockDir(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, lockFileName), os.O_RDWR|os.O_CREATE, keyFileMode)
	if err != nil {
		return nil, fmt.Errorf("locking key folder: %w", err)
	}
	h := windows.Handle(f.Fd())
	ol := new(windows.Overlapped)
	if err := windows.LockFileEx(h, windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, ol); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("locking key folder: %w", err)
	}
	return func() {
		_ = windows.UnlockFileEx(h, 0, 1, 0, ol)
		_ = f.Close()
	}, nil
}

// syncDir is a no-op: Windows cannot open a folder for syncing, and NTFS
// journals renames itself.
func syncDir(string) error { return nil }
