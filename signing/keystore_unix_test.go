//go:build unix

package signing

import (
	"errors"
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
