//go:build unix

package main

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/verifier-dev/verifier/store"
)

// TestServeRefusesWritableStore: a data folder or verifier.db that group or
// others may write stops the server at start, in both modes, with the chmod
// that fixes it and before anything (a first key) is created; a folder and
// file others may only read start.
func TestServeRefusesWritableStore(t *testing.T) {
	noEnv := func(string) string { return "" } // no env key: a start would create keys/
	modes := []struct {
		name string
		args []string
	}{{"http", []string{"--http", "127.0.0.1:0"}}, {"stdio", nil}}
	tests := []struct {
		name    string
		dirMode fs.FileMode
		dbMode  fs.FileMode // 0: no store file yet
		refused string      // "dir", "db" or "" (starts)
	}{
		{"world-writable folder", 0o777, 0, "dir"},
		{"group-writable folder", 0o775, 0o600, "dir"},
		{"world-writable verifier.db", 0o700, 0o666, "db"},
		{"group-writable verifier.db", 0o700, 0o620, "db"},
		{"readable by others", 0o755, 0o644, ""},
		{"private", 0o700, 0o600, ""},
	}
	for _, m := range modes {
		for _, tt := range tests {
			t.Run(m.name+"/"+tt.name, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "data")
				if err := os.Mkdir(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				db := filepath.Join(dir, storeFile)
				if tt.dbMode != 0 {
					s, err := store.OpenBolt(db, nil)
					if err != nil {
						t.Fatal(err)
					}
					s.Close()
					if err := os.Chmod(db, tt.dbMode); err != nil {
						t.Fatal(err)
					}
				}
				if err := os.Chmod(dir, tt.dirMode); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				if m.args != nil {
					cancel() // HTTP: stop as soon as it serves
				}
				defer cancel()
				var stderr lockedBuffer
				err := run(ctx, append([]string{"--data-dir", dir}, m.args...), strings.NewReader(""), io.Discard, &stderr, noEnv)
				_, keysErr := os.Stat(filepath.Join(dir, "keys"))
				if tt.refused == "" {
					if err != nil {
						t.Fatalf("run() = %v, want a start\n%s", err, stderr.String())
					}
					if !strings.Contains(stderr.String(), "serving") || keysErr != nil {
						t.Errorf("the server did not start (keys: %v):\n%s", keysErr, stderr.String())
					}
					return
				}
				if err == nil {
					t.Fatalf("run() = nil, want a refusal\n%s", stderr.String())
				}
				if !errors.Is(err, store.ErrInsecurePermissions) {
					t.Errorf("run() = %v, want ErrInsecurePermissions", err)
				}
				fix := "chmod go-w " + map[string]string{"dir": dir, "db": db}[tt.refused]
				if !strings.Contains(err.Error(), fix) {
					t.Errorf("run() = %q, want the fix %q", err, fix)
				}
				if !errors.Is(keysErr, fs.ErrNotExist) {
					t.Errorf("a refused start created keys/ (stat: %v)", keysErr)
				}
				if strings.Contains(stderr.String(), "serving") {
					t.Errorf("a refused start served:\n%s", stderr.String())
				}
			})
		}
	}
}
