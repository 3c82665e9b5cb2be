package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"

	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/tools"
)

// TestServeHTTPTransparencyLog: the server makes log.key (0600) in the
// data dir on first start, publishes its verifier key in the card and
// signs /log/checkpoint with it; the key survives a restart, and neither
// its seed nor the key file's text reaches stderr or the card.
func TestServeHTTPTransparencyLog(t *testing.T) {
	srv := startHTTP(t, "--public-url", "https://verifier.example/")
	body, err := os.ReadFile(filepath.Join("testdata", "invoice-pass.json"))
	if err != nil {
		t.Fatal(err)
	}
	if resp, answer := srv.post(t, "/verify/schema", body); resp.StatusCode != http.StatusOK {
		t.Fatalf("verify status %d: %s", resp.StatusCode, answer)
	}
	keyPath := filepath.Join(srv.dataDir, signing.LogKeyFile)
	info, err := os.Stat(keyPath)
	if err != nil {
		t.Fatalf("log key not made: %v", err)
	}
	if runtime.GOOS != "windows" && info.Mode().Perm() != 0o600 {
		t.Errorf("log key mode %04o, want 0600", info.Mode().Perm())
	}
	vkey := checkServedCheckpoint(t, srv, "1")
	if err := srv.stop(t); err != nil {
		t.Fatalf("stop: %v", err)
	}
	seed, _ := os.ReadFile(keyPath)
	if strings.Contains(srv.stderr.String(), strings.TrimSpace(string(seed))) {
		t.Error("stderr shows the log key's seed")
	}

	again := startHTTP(t, "--data-dir", srv.dataDir, "--public-url", "https://verifier.example/")
	if got := checkServedCheckpoint(t, again, "1"); got != vkey {
		t.Errorf("after restart the card's log key is %q, want %q", got, vkey)
	}
}

// checkServedCheckpoint checks that srv's card publishes a log key under
// the origin of its public URL, that /log/checkpoint verifies with it and
// holds size entries, and returns the key.
func checkServedCheckpoint(t *testing.T, srv *httpServer, size string) string {
	t.Helper()
	key, cp := servedCheckpoint(t, srv.base)
	if origin := strings.SplitN(key, "+", 2)[0]; origin != "verifier.example/log" {
		t.Errorf("the log key is named %q, want the public URL's origin verifier.example/log", origin)
	}
	if got := strconv.FormatInt(cp.size, 10); got != size {
		t.Errorf("checkpoint of %s entries, want %s", got, size)
	}
	return key
}

// checkpoint is the tree a signed checkpoint names.
type checkpoint struct {
	size int64
	root []byte
}

// servedCheckpoint reads the card of the server at base, checks that it
// publishes a log key, that /log/checkpoint is a note signed by that key
// (golang.org/x/mod/sumdb/note) with the card's origin, a size and a root
// hash, and returns the key and the checkpoint's tree.
func servedCheckpoint(t *testing.T, base string) (string, checkpoint) {
	t.Helper()
	_, raw := getURL(t, base+"/.well-known/agent-card.json")
	var card tools.AgentCard
	if err := json.Unmarshal(raw, &card); err != nil {
		t.Fatal(err)
	}
	tl := card.Capabilities.Extensions[0].Params.TransparencyLog
	if tl == nil {
		t.Fatalf("the card of %s publishes no transparency log", base)
	}
	v, err := note.NewVerifier(tl.VerifierKey)
	if err != nil {
		t.Fatalf("note.NewVerifier(%q) error = %v", tl.VerifierKey, err)
	}
	resp, cp := getURL(t, base+"/log/checkpoint")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /log/checkpoint = %d: %s", resp.StatusCode, cp)
	}
	n, err := note.Open(cp, note.VerifierList(v))
	if err != nil {
		t.Fatalf("note.Open(checkpoint) error = %v\n%s", err, cp)
	}
	lines := strings.Split(n.Text, "\n")
	if len(lines) != 4 || lines[0] != tl.Origin || lines[3] != "" {
		t.Fatalf("checkpoint = %q, want the origin %s, a size and a root hash", n.Text, tl.Origin)
	}
	var tree checkpoint
	tree.size, err = strconv.ParseInt(lines[1], 10, 64)
	if err == nil {
		tree.root, err = base64.StdEncoding.DecodeString(lines[2])
	}
	if err != nil || tree.size < 0 || len(tree.root) != 32 {
		t.Fatalf("checkpoint = %q: size or root hash malformed (%v)", n.Text, err)
	}
	return tl.VerifierKey, tree
}

// TestServeHTTPLogKeyFromEnv: with VERIFIER_LOG_KEY the checkpoints are
// signed by that seed's key (two servers given one seed publish one log
// key, as replicas must) and no log.key is made in the data dir; a seed
// that is not 32 bytes of base64 stops the start, naming the variable and
// not the value.
func TestServeHTTPLogKeyFromEnv(t *testing.T) {
	const seed = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=" // bytes 0…31
	want, err := signing.LogKeyFromSeed(seed, "verifier.example/log")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"VERIFIER_LOG_KEY": seed}
	for range 2 {
		srv := startHTTPEnv(t, env, "--public-url", "https://verifier.example/")
		if got := checkServedCheckpoint(t, srv, "0"); got != want.VerifierKey() {
			t.Errorf("card's log key = %s, want the seed's %s", got, want.VerifierKey())
		}
		if _, err := os.Stat(filepath.Join(srv.dataDir, signing.LogKeyFile)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a log key file was made beside VERIFIER_LOG_KEY (stat: %v)", err)
		}
	}

	const bad = "c2VjcmV0LXNob3J0" // 12 bytes
	var stderr bytes.Buffer
	err = run(context.Background(), []string{"--http", "127.0.0.1:0", "--data-dir", t.TempDir()}, strings.NewReader(""), io.Discard, &stderr,
		envWith(map[string]string{"VERIFIER_LOG_KEY": bad}))
	if err == nil || !strings.Contains(err.Error(), "VERIFIER_LOG_KEY") || strings.Contains(err.Error()+stderr.String(), bad) {
		t.Errorf("start with a 12-byte VERIFIER_LOG_KEY: %v (stderr %q); want a refusal naming the variable, not its value", err, stderr.String())
	}
}
