package signing

import (
	"bytes"
	"crypto/sha256"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
)

// TestLogKeyCheckpoint: the log key is made once (0600) and read back the
// same, its checkpoint is a C2SP checkpoint that note.Open accepts with
// the published verifier key, and neither the key's text nor its seed
// appears in what it publishes.
func TestLogKeyCheckpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", LogKeyFile)
	const origin = "verifier.example/log"
	k, err := OpenLogKey(path, origin)
	if err != nil {
		t.Fatalf("OpenLogKey(new) error = %v", err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatalf("log key not written: %v", err)
	}
	if runtime.GOOS != "windows" && info.Mode().Perm() != 0o600 {
		t.Errorf("log key mode = %04o, want 0600", info.Mode().Perm())
	}
	again, err := OpenLogKey(path, origin)
	if err != nil || again.VerifierKey() != k.VerifierKey() {
		t.Fatalf("OpenLogKey(existing) = %v, %v; want the same key %s", again, err, k.VerifierKey())
	}
	if !strings.HasPrefix(k.VerifierKey(), origin+"+") {
		t.Errorf("VerifierKey() = %q, want %q+<hash>+<base64>", k.VerifierKey(), origin)
	}
	root := sha256.Sum256([]byte("root"))
	cp, err := k.Checkpoint(42, root)
	if err != nil {
		t.Fatalf("Checkpoint() error = %v", err)
	}
	v, err := note.NewVerifier(k.VerifierKey())
	if err != nil {
		t.Fatalf("note.NewVerifier(%q) error = %v", k.VerifierKey(), err)
	}
	n, err := note.Open(cp, note.VerifierList(v))
	if err != nil {
		t.Fatalf("note.Open(checkpoint) error = %v\n%s", err, cp)
	}
	// The root line is the standard base64 of SHA-256("root") (sha256sum | base64).
	want := origin + "\n42\nSBNJTRN+FjG7owHVrKtue7eqdM4RhdRWVl71HXN2d7I=\n"
	if n.Text != want {
		t.Errorf("checkpoint body = %q, want %q", n.Text, want)
	}
	seedText, _ := os.ReadFile(path)
	for _, out := range [][]byte{cp, []byte(k.VerifierKey())} {
		if bytes.Contains(out, bytes.TrimSpace(seedText)) {
			t.Errorf("published text contains the log key's seed: %s", out)
		}
	}
	other, err := OpenLogKey(filepath.Join(t.TempDir(), LogKeyFile), origin)
	if err != nil {
		t.Fatalf("OpenLogKey(other) error = %v", err)
	}
	ov, _ := note.NewVerifier(other.VerifierKey())
	if _, err := note.Open(cp, note.VerifierList(ov)); err == nil {
		t.Error("note.Open accepted the checkpoint with another log key")
	}
}

// TestLogKeyRefused: a log key others can read, a damaged one and a bad
// origin are refused with the reason.
func TestLogKeyRefused(t *testing.T) {
	dir := t.TempDir()
	loose := filepath.Join(dir, "loose.key")
	if err := os.WriteFile(loose, []byte("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	damaged := filepath.Join(dir, "damaged.key")
	if err := os.WriteFile(damaged, []byte("not base64\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, origin, want string
	}{
		{"damaged", damaged, "o.example/log", "base64"},
		{"bad origin", filepath.Join(dir, "new.key"), "has space", "origin"},
	}
	if runtime.GOOS != "windows" {
		tests = append(tests, struct{ name, path, origin, want string }{"loose mode", loose, "o.example/log", "chmod 600"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := OpenLogKey(tt.path, tt.origin)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("OpenLogKey() error = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

// TestLogKeyFromSeed: a seed given as text (VERIFIER_LOG_KEY) is the same
// key as that seed in a key file, so replicas given one seed sign one
// log; a seed that is not 32 bytes of base64, or a bad origin, is refused
// without quoting the seed.
func TestLogKeyFromSeed(t *testing.T) {
	const origin = "verifier.example/log"
	path := filepath.Join(t.TempDir(), LogKeyFile)
	fromFile, err := OpenLogKey(path, origin)
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fromSeed, err := LogKeyFromSeed(string(text), origin)
	if err != nil {
		t.Fatalf("LogKeyFromSeed(the file's seed) error = %v", err)
	}
	if fromSeed.VerifierKey() != fromFile.VerifierKey() {
		t.Errorf("LogKeyFromSeed = %s, the file's key %s", fromSeed.VerifierKey(), fromFile.VerifierKey())
	}
	for _, tt := range []struct{ seed, origin string }{
		{"c2VjcmV0LXNob3J0", origin},                            // 12 bytes
		{"not base64 at all!", origin},                          // not base64
		{strings.TrimSpace(string(text)), "two words/log"},      // a space in the origin
		{strings.TrimSpace(string(text)), "verifier.example+x"}, // a '+' in the origin
		{strings.TrimSpace(string(text)), ""},                   // no origin
		{strings.TrimSpace(string(text)), "verifier\xff/log"},   // not UTF-8
	} {
		if _, err := LogKeyFromSeed(tt.seed, tt.origin); err == nil {
			t.Errorf("LogKeyFromSeed(%q, %q) error = nil, want one", tt.seed, tt.origin)
		} else if strings.Contains(err.Error(), tt.seed) {
			t.Errorf("LogKeyFromSeed error %q quotes the seed", err)
		}
	}
}
