//go:build unix

package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenBoltPermissions: a store file or data folder that group or
// others may write is refused, naming the chmod that fixes it, and nothing
// is created; modes that only let others read are accepted.
func TestOpenBoltPermissions(t *testing.T) {
	tests := []struct {
		name    string
		dirMode fs.FileMode
		dbMode  fs.FileMode // 0: no store file yet
		refused string      // "dir", "db" or "" (opens)
	}{
		{"private folder, new file", 0o700, 0, ""},
		{"private folder and file", 0o700, 0o600, ""},
		{"readable by others", 0o755, 0o644, ""},
		{"world-writable folder", 0o777, 0o600, "dir"},
		{"group-writable folder", 0o770, 0o600, "dir"},
		{"world-writable sticky folder", 0o777 | fs.ModeSticky, 0, "dir"},
		{"world-writable file", 0o700, 0o666, "db"},
		{"group-writable file", 0o700, 0o660, "db"},
		{"other-writable file only", 0o755, 0o602, "db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "verifier.db")
			if tt.dbMode != 0 {
				s, err := OpenBolt(path, nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, tt.dbMode); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chmod(dir, tt.dirMode); err != nil {
				t.Fatal(err)
			}
			s, err := OpenBolt(path, nil)
			if tt.refused == "" {
				if err != nil {
					t.Fatalf("OpenBolt() error = %v, want it to open", err)
				}
				s.Close()
				return
			}
			if err == nil {
				s.Close()
				t.Fatal("OpenBolt() error = nil, want ErrInsecurePermissions")
			}
			if !errors.Is(err, ErrInsecurePermissions) {
				t.Errorf("OpenBolt() error = %v, want ErrInsecurePermissions", err)
			}
			fix := "chmod go-w " + map[string]string{"dir": dir, "db": path}[tt.refused]
			if !strings.HasSuffix(err.Error(), fix) {
				t.Errorf("OpenBolt() error = %q, want it to end with %q", err, fix)
			}
			if _, statErr := os.Stat(path); tt.dbMode == 0 && !errors.Is(statErr, fs.ErrNotExist) {
				t.Errorf("a refused OpenBolt created the store file (stat: %v)", statErr)
			}
		})
	}
}
