package diskfault

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// BreakWrites makes every write to the file at path through the
// descriptors this process already holds for it fail with EBADF, until
// restore is called: each descriptor is pointed at a read-only open of the
// same file. Reads, memory maps and file locks keep working (a lock stays
// with the original open, which is kept aside), so a program sees what a
// full or failing disk shows it: its write, truncate and allocate calls fail
// and nothing reaches the file.
//
// Descriptors are found by their /proc/self/fd links. The program must not
// open or close the file meanwhile. It is an error when no descriptor
// refers to path.
func BreakWrites(path string) (restore func() error, err error) {
	target, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("breaking writes: %w", err)
	}
	if target, err = filepath.EvalSymlinks(target); err != nil {
		return nil, fmt.Errorf("breaking writes: %w", err)
	}
	fds, err := descriptorsOf(target)
	if err != nil {
		return nil, fmt.Errorf("breaking writes to %s: %w", path, err)
	}
	ro, err := os.Open(target)
	if err != nil {
		return nil, fmt.Errorf("breaking writes: %w", err)
	}
	var saved []int // saved[i] is the original open of fds[i]
	undo := func() error {
		var errs []error
		for i, s := range saved {
			errs = append(errs, syscall.Dup3(s, fds[i], syscall.O_CLOEXEC), syscall.Close(s))
		}
		errs = append(errs, ro.Close())
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("restoring writes to %s: %w", path, err)
		}
		return nil
	}
	for _, fd := range fds {
		s, err := syscall.Dup(fd)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("breaking writes: %w", err), undo())
		}
		syscall.CloseOnExec(s)
		if err := syscall.Dup3(int(ro.Fd()), fd, syscall.O_CLOEXEC); err != nil {
			_ = syscall.Close(s)
			return nil, errors.Join(fmt.Errorf("breaking writes: %w", err), undo())
		}
		saved = append(saved, s)
	}
	return undo, nil
}

// descriptorsOf lists this process's descriptors open on target.
func descriptorsOf(target string) ([]int, error) {
	entries, err := os.ReadDir("/proc/self/fd") // the folder's own descriptor is closed once read
	if err != nil {
		return nil, err
	}
	var fds []int
	for _, e := range entries {
		fd, _ := strconv.Atoi(e.Name()) // procfs names each entry by its number
		if link, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && link == target {
			fds = append(fds, fd)
		}
	}
	if len(fds) == 0 {
		return nil, errors.New("no open descriptor refers to it")
	}
	return fds, nil
}
