package signing

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestOpenKeyStoreNoCreate: with NoCreate, a missing or keyless folder is
// ErrNoKey and nothing is created; existing keys open as without it.
func TestOpenKeyStoreNoCreate(t *testing.T) {
	noCreate := &KeyStoreOptions{NoCreate: true}

	t.Run("missing folder", func(t *testing.T) {
		dir := keyDir(t)
		if _, err := OpenKeyStore(dir, noCreate); !errors.Is(err, ErrNoKey) {
			t.Errorf("OpenKeyStore() = %v, want ErrNoKey", err)
		}
		if _, err := os.Stat(filepath.Dir(dir)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("OpenKeyStore(NoCreate) created the data folder (stat: %v)", err)
		}
	})

	t.Run("empty folder", func(t *testing.T) {
		dir := keyDir(t)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenKeyStore(dir, noCreate); !errors.Is(err, ErrNoKey) {
			t.Errorf("OpenKeyStore() = %v, want ErrNoKey", err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("OpenKeyStore(NoCreate) wrote %d entries into the folder", len(entries))
		}
	})

	t.Run("existing keys", func(t *testing.T) {
		dir := keyDir(t)
		made := openStore(t, dir, nil)
		if _, err := RotateKey(dir, nil); err != nil {
			t.Fatal(err)
		}
		got := openStore(t, dir, noCreate)
		if want := versionsOf(openStore(t, dir, nil).PublicKeys()); !slices.Equal(versionsOf(got.PublicKeys()), want) || len(want) != 2 {
			t.Errorf("NoCreate keys = %v, want %v", versionsOf(got.PublicKeys()), want)
		}
		if got.Current().KeyVersion() == made.Current().KeyVersion() {
			t.Errorf("NoCreate current = %s, want the rotated key", got.Current().KeyVersion())
		}
	})

	t.Run("key file without current", func(t *testing.T) {
		dir := keyDir(t)
		ks := openStore(t, dir, nil)
		if err := os.Remove(filepath.Join(dir, currentFile)); err != nil {
			t.Fatal(err)
		}
		got := openStore(t, dir, noCreate)
		if got.Current().KeyVersion() != ks.Current().KeyVersion() {
			t.Errorf("current = %s, want the only key %s", got.Current().KeyVersion(), ks.Current().KeyVersion())
		}
		if _, err := os.Stat(filepath.Join(dir, currentFile)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("OpenKeyStore(NoCreate) wrote %s (stat: %v)", currentFile, err)
		}
	})

	t.Run("current names a missing key", func(t *testing.T) {
		dir := keyDir(t)
		openStore(t, dir, nil)
		if err := os.WriteFile(filepath.Join(dir, currentFile), []byte("v9-2026-01a\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := OpenKeyStore(dir, noCreate)
		if err == nil || !strings.Contains(err.Error(), "v9-2026-01a") || !strings.Contains(err.Error(), "verifier keys rotate") {
			t.Fatalf("OpenKeyStore error = %v, want one naming the version and the fix", err)
		}
	})

	t.Run("env key, missing folder", func(t *testing.T) {
		dir := keyDir(t)
		ks := openStore(t, dir, &KeyStoreOptions{NoCreate: true, EnvSeed: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="})
		if len(ks.PublicKeys()) != 1 {
			t.Errorf("keys = %v, want the env key alone", versionsOf(ks.PublicKeys()))
		}
	})
}
