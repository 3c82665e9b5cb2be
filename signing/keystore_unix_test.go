//go:build unix

package signing

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestKeyStorePermissions(t *testing.T) {
	dir := keyDir(t)
	ks := openStore(t, dir, nil)
	if _, err := RotateKey(dir, nil); err != nil {
		t.Fatalf("RotateKey: %v", err)
	}
	info, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Mode().Perm(); got != 0o700 {
		t.Errorf("key folder mode = %04o, want 0700", got)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	keyFiles := 0
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(e.Name(), keyFileSuffix) {
			keyFiles++
		}
		if got := info.Mode().Perm(); got != 0o600 {
			t.Errorf("%s mode = %04o, want 0600", e.Name(), got)
		}
	}
	if keyFiles != 2 {
		t.Errorf("%d key files, want 2", keyFiles)
	}
	keyFile := filepath.Join(dir, ks.Current().KeyVersion()+keyFileSuffix)

	tests := []struct {
		name  string
		path  string
		mode  os.FileMode
		chmod string
	}{
		{"world-readable key file", keyFile, 0o644, "chmod 600 " + keyFile},
		{"group-readable key file", keyFile, 0o640, "chmod 600 " + keyFile},
		{"world-writable key file", keyFile, 0o602, "chmod 600 " + keyFile},
		{"world-readable folder", dir, 0o755, "chmod 700 " + dir},
		{"group-readable folder", dir, 0o750, "chmod 700 " + dir},
		{"world-searchable folder", dir, 0o701, "chmod 700 " + dir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := os.FileMode(0o600)
			if tt.path == dir {
				want = 0o700
			}
			if err := os.Chmod(tt.path, tt.mode); err != nil {
				t.Fatal(err)
			}
			defer os.Chmod(tt.path, want)
			_, err := OpenKeyStore(dir, nil)
			if !errors.Is(err, ErrInsecurePermissions) {
				t.Fatalf("OpenKeyStore error = %v, want ErrInsecurePermissions", err)
			}
			if !strings.Contains(err.Error(), tt.chmod) {
				t.Errorf("error %q does not state the fix %q", err, tt.chmod)
			}
			if _, err := RotateKey(dir, nil); !errors.Is(err, ErrInsecurePermissions) {
				t.Errorf("RotateKey error = %v, want ErrInsecurePermissions", err)
			}
			if _, err := OpenKeyStore(dir, &KeyStoreOptions{EnvSeed: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}); !errors.Is(err, ErrInsecurePermissions) {
				t.Errorf("OpenKeyStore with env key error = %v, want ErrInsecurePermissions", err)
			}
		})
	}
	// Owner-only modes stricter than the default are fine.
	if err := os.Chmod(keyFile, 0o400); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenKeyStore(dir, nil); err != nil {
		t.Errorf("OpenKeyStore with a 0400 key file: %v", err)
	}
}

// TestWriteFileAtomic: WriteFileAtomic makes a missing folder 0700 and the
// file 0600, replaces a file (whatever its mode) unless exclusive, refuses
// to with exclusive (keeping it as it was), and leaves no temporary file.
func TestWriteFileAtomic(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	path := filepath.Join(dir, "state.json")
	tests := []struct {
		name      string
		data      string
		exclusive bool
		wantErr   error
		want      string
	}{
		{"new file in a missing folder", "one\n", true, nil, "one\n"},
		{"exclusive over an existing file", "two\n", true, fs.ErrExist, "one\n"},
		{"replacing", "three\n", false, nil, "three\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := WriteFileAtomic(path, []byte(tt.data), tt.exclusive)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("WriteFileAtomic error = %v, want %v", err, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name %s", err, path)
			}
			if got := readFile(t, path); string(got) != tt.want {
				t.Errorf("file holds %q, want %q", got, tt.want)
			}
			for p, want := range map[string]os.FileMode{dir: 0o700, path: 0o600} {
				info, serr := os.Stat(p)
				if serr != nil {
					t.Fatal(serr)
				}
				if got := info.Mode().Perm(); err == nil && got != want {
					t.Errorf("%s mode = %04o, want %04o", p, got, want)
				}
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("folder holds %d entries, want only %s", len(entries), path)
			}
			// The next write starts from a widened mode, which a replacement resets.
			if err := os.Chmod(path, 0o644); err != nil {
				t.Fatal(err)
			}
		})
	}
}
