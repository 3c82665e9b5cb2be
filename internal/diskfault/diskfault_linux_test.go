package diskfault

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestBreakWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte("before"), 0); err != nil {
		t.Fatal(err)
	}
	restore, err := BreakWrites(path)
	if err != nil {
		t.Fatalf("BreakWrites() error = %v", err)
	}
	if _, err := f.WriteAt([]byte("during"), 0); !errors.Is(err, syscall.EBADF) {
		t.Errorf("WriteAt while broken: error = %v, want EBADF", err)
	}
	if err := f.Truncate(1 << 20); err == nil {
		t.Error("Truncate while broken succeeded")
	}
	got := make([]byte, 6)
	if _, err := f.ReadAt(got, 0); err != nil || !bytes.Equal(got, []byte("before")) {
		t.Errorf("ReadAt while broken = %q, %v; want %q", got, err, "before")
	}
	if err := restore(); err != nil {
		t.Fatalf("restore() error = %v", err)
	}
	if _, err := f.WriteAt([]byte("after!"), 0); err != nil {
		t.Errorf("WriteAt after restore: %v", err)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, []byte("after!")) {
		t.Errorf("file = %q, want %q", b, "after!")
	}
}

func TestBreakWritesNotOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := BreakWrites(path); err == nil {
		t.Error("BreakWrites() of a file nobody holds open succeeded")
	}
}
