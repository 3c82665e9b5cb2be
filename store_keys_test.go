package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/internal/pgtest"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/mcpserver"
	"github.com/verifier-dev/verifier/tools/rest"
)

// stop ends the replica with SIGTERM and waits for it to exit.
func (r *replica) stop(t *testing.T) {
	t.Helper()
	_ = r.cmd.Process.Signal(os.Interrupt)
	select {
	case <-r.exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("the server did not stop:\n%s", r.stderr)
	}
}

// storedReceipt posts the passing invoice to r and returns the file in
// dir it saved the stored compact receipt of that verification to.
func storedReceipt(t *testing.T, r *replica, dir, name string) string {
	t.Helper()
	reply, err := postVerify(r.base, "", mustRead(t, filepath.Join("testdata", "invoice-pass.json")))
	if err != nil || reply.status != http.StatusOK {
		t.Fatalf("POST /verify/schema to %s: %d, %v", r.base, reply.status, err)
	}
	resp, stored := getURL(t, r.base+"/receipts/"+reply.id)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /receipts/%s = %d", reply.id, resp.StatusCode)
	}
	path := filepath.Join(dir, name+".json")
	if err := os.WriteFile(path, stored, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// saveCard saves the agent card r serves now in dir.
func saveCard(t *testing.T, r *replica, dir string) string {
	t.Helper()
	_, card := getURL(t, r.base+"/.well-known/agent-card.json")
	path := filepath.Join(dir, "card-"+strings.TrimPrefix(r.base, "http://127.0.0.1:")+".json")
	if err := os.WriteFile(path, card, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// receiptVerifies runs `receipt verify` with args and reports whether it
// passed, with its output.
func receiptVerifies(t *testing.T, args ...string) (bool, string) {
	t.Helper()
	out, code := runCLI(t, "", append([]string{"receipt", "verify"}, args...)...)
	return code == 0, string(out)
}

// TestKeysSurviveCopyAndReplicas follows the README: a bbolt server signs
// with its data dir's key; `store copy` moves its history to PostgreSQL;
// replicas start there with VERIFIER_SIGNING_KEY (each its own) and the
// old data dir's log key. Every replica's card publishes the old key and
// both replicas' keys, so the receipt signed before the move and those
// of either replica verify with any replica's card, the old one with its
// log proof too.
func TestKeysSurviveCopyAndReplicas(t *testing.T) {
	bin := buildVerifier(t)
	url := pgtest.NewDatabase(t)
	work := t.TempDir()
	oldDir := t.TempDir()
	old := startReplicaEnv(t, oldDir, bin, "", []string{"VERIFIER_SIGNING_KEY=", "VERIFIER_LOG_KEY="}, "--public-url", "http://verifier.example")
	oldReceipt := storedReceipt(t, old, work, "old")
	old.stop(t)

	if out, code := runCLI(t, "", "store", "copy", "--from", filepath.Join(oldDir, storeFile), "--to", url); code != 0 {
		t.Fatalf("store copy exit %d: %s", code, out)
	}
	logSeed, err := os.ReadFile(filepath.Join(oldDir, signing.LogKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	logEnv := "VERIFIER_LOG_KEY=" + strings.TrimSpace(string(logSeed))
	seedB := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{21}, 32))
	a := startReplicaEnv(t, t.TempDir(), bin, url, []string{"VERIFIER_SIGNING_KEY=" + replicaKey, logEnv}, "--public-url", "http://verifier.example")
	b := startReplicaEnv(t, t.TempDir(), bin, url, []string{"VERIFIER_SIGNING_KEY=" + seedB, logEnv}, "--public-url", "http://verifier.example")
	fromA := storedReceipt(t, a, work, "a")
	fromB := storedReceipt(t, b, work, "b")

	if ok, out := receiptVerifies(t, "--card", saveCard(t, a, work), oldReceipt); !ok {
		t.Errorf("the receipt signed before store copy does not verify with the replica's card:\n%s", out)
	}
	if ok, out := receiptVerifies(t, "--log", a.base, oldReceipt); !ok || !strings.Contains(out, "ok   log_inclusion") {
		t.Errorf("the receipt signed before store copy: receipt verify --log (the replica's card, log proof):\n%s", out)
	}
	// A started before B: it publishes B's key once it reads the store's
	// records again (within a few seconds).
	deadline := time.Now().Add(20 * time.Second)
	for _, r := range []*replica{a, b} {
		for _, receipt := range []string{oldReceipt, fromA, fromB} {
			for {
				ok, out := receiptVerifies(t, "--card", saveCard(t, r, work), receipt)
				if ok {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s with the card of %s:\n%s", filepath.Base(receipt), r.base, out)
				}
				time.Sleep(250 * time.Millisecond)
			}
		}
	}
	// The database the copy and both replicas wrote is consistent, its
	// key records accounting for every receipt.
	if out, code := runCLI(t, "", "store", "check", "--store", url); code != 0 || !strings.Contains(string(out), "store check passed") {
		t.Errorf("store check --store: exit %d:\n%s", code, out)
	}
}

// runRefused runs the server with env and args and expects it to exit
// without serving; it returns its stderr.
func runRefused(t *testing.T, bin string, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if servingLine.MatchString(stderr.String()) {
		t.Fatalf("the server started:\n%s", stderr.String())
	}
	if err == nil {
		t.Fatalf("the server exited 0 without serving:\n%s", stderr.String())
	}
	return stderr.String()
}

// TestReplicaWithOtherKeysRefused: on one store, a replica whose key folder
// made the same key version with another key, or whose log key is not the
// log's, refuses to start, saying how to fix it.
func TestReplicaWithOtherKeysRefused(t *testing.T) {
	bin := buildVerifier(t)
	url := pgtest.NewDatabase(t)
	logEnv := "VERIFIER_LOG_KEY=" + replicaLogKey
	// Each data dir makes its own first key: the same version, another key.
	startReplicaEnv(t, t.TempDir(), bin, url, []string{"VERIFIER_SIGNING_KEY=", logEnv})
	msg := runRefused(t, bin, []string{"VERIFIER_SIGNING_KEY=", logEnv}, "--data-dir", t.TempDir(), "--store", url)
	if !strings.Contains(msg, "already recorded with another public key") || !strings.Contains(msg, "Fix:") || !strings.Contains(msg, "VERIFIER_SIGNING_KEY") {
		t.Errorf("a replica binding a key version to another key: stderr does not name the conflict and its fix:\n%s", msg)
	}
	other := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{12}, 32))
	msg = runRefused(t, bin, []string{"VERIFIER_SIGNING_KEY=" + replicaKey, "VERIFIER_LOG_KEY=" + other}, "--data-dir", t.TempDir(), "--store", url)
	if !strings.Contains(msg, "transparency log") || !strings.Contains(msg, "Fix:") || !strings.Contains(msg, "VERIFIER_LOG_KEY") {
		t.Errorf("a replica with another log key: stderr does not name the fix:\n%s", msg)
	}
	if strings.Contains(msg, other) || strings.Contains(msg, replicaLogKey) {
		t.Errorf("the refusal quotes a log key seed:\n%s", msg)
	}
}

// TestOneOriginPerBoltLog: two HTTP servers on one data dir, without
// --public-url (each advertises its own port), sign the one log's
// checkpoints under one origin: the first's, recorded in the store.
func TestOneOriginPerBoltLog(t *testing.T) {
	bin := buildVerifier(t)
	dir := t.TempDir()
	first := startProc(t, bin, "--http", "127.0.0.1:0", "--data-dir", dir)
	second := startProc(t, bin, "--http", "127.0.0.1:0", "--data-dir", dir)
	var origins []string
	for _, p := range []*verifierProc{first, second} {
		_, cp := getURL(t, p.base+"/log/checkpoint")
		origin, _, _ := strings.Cut(string(cp), "\n")
		origins = append(origins, origin)
		servedCheckpoint(t, p.base) // the card's log origin and key sign it
	}
	if want := rest.LogOrigin(first.base); origins[0] != want || origins[1] != want {
		t.Errorf("checkpoint origins = %q, want both %q (the first server's)", origins, want)
	}
}

// switchHandler serves whichever handler was set last.
type switchHandler struct{ h atomic.Pointer[http.Handler] }

func (s *switchHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*s.h.Load()).ServeHTTP(w, r)
}

func (s *switchHandler) set(h http.Handler) { s.h.Store(&h) }

// TestLogAuditFlagsKeyChange: a log whose checkpoints come to be signed by
// another key under the same origin — the same tree, the card publishing
// the new key — fails the next audit (log_key), and its state is kept.
func TestLogAuditFlagsKeyChange(t *testing.T) {
	dir := t.TempDir()
	keys, err := signing.OpenKeyStore(filepath.Join(dir, "keys"), nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenBolt(filepath.Join(dir, storeFile), &store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	origin := rest.LogOrigin("http://verifier.test")
	handler := func(seed byte) http.Handler {
		key, err := signing.LogKeyFromSeed(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{seed}, 32)), origin)
		if err != nil {
			t.Fatal(err)
		}
		svc := &tools.Service{Engine: engine.New(nil), Keys: keys, Store: st, Version: "test",
			PublicURL: "http://verifier.test", Log: slog.New(slog.DiscardHandler)}
		opts := &rest.HTTPOptions{MCP: mcpserver.NewMCPHandler(svc)}
		rest.WithLog(svc, opts, key)
		h, err := rest.NewHTTPHandler(svc, opts)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	var sw switchHandler
	sw.set(handler(1))
	srv := httptest.NewServer(&sw)
	defer srv.Close()
	if resp, err := http.Post(srv.URL+"/verify/schema", "application/json", bytes.NewReader(mustRead(t, filepath.Join("testdata", "invoice-pass.json")))); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /verify/schema: %v", err)
	}
	state := filepath.Join(t.TempDir(), "state.json")
	if out, code := runCLI(t, "", "log", "audit", "--url", srv.URL, "--state", state); code != 0 {
		t.Fatalf("first audit exit %d:\n%s", code, out)
	}
	saved, _ := os.ReadFile(state)
	sw.set(handler(2)) // the same origin and tree, another key
	out, code := runCLI(t, "", "log", "audit", "--url", srv.URL, "--state", state)
	if code != 1 || !strings.Contains(string(out), "FAIL "+tools.CheckAuditLogKey) {
		t.Errorf("audit after the log key changed: exit %d, want 1 with a FAIL %s line:\n%s", code, tools.CheckAuditLogKey, out)
	}
	if after, _ := os.ReadFile(state); !bytes.Equal(after, saved) {
		t.Error("the failed audit replaced the saved state")
	}
	var st1 tools.AuditState
	if json.Unmarshal(saved, &st1) != nil || st1.VerifierKey == "" {
		t.Errorf("the saved state keeps no log key: %s", saved)
	}
}

// TestStoreCheck: `verifier store check` passes a data dir a server wrote
// (exit 0) and, once one stored receipt is changed inside the file, names
// what is wrong (exit 1); a server then refuses to start on the file.
func TestStoreCheck(t *testing.T) {
	bin := buildVerifier(t)
	dir := t.TempDir()
	p := startReplicaEnv(t, dir, bin, "", []string{"VERIFIER_SIGNING_KEY=", "VERIFIER_LOG_KEY="})
	for range 3 {
		storedReceipt(t, p, t.TempDir(), "r")
	}
	p.stop(t)
	out, code := runCLI(t, "", "store", "check", "--data-dir", dir)
	if code != 0 || !strings.Contains(string(out), "store check passed") {
		t.Fatalf("store check of an untouched data dir: exit %d:\n%s", code, out)
	}
	// Change the result inside one stored receipt, as an edit of the file
	// with a bbolt tool would.
	db, err := bolt.Open(filepath.Join(dir, storeFile), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("verdicts"))
		k, v := b.Cursor().First()
		return b.Put(bytes.Clone(k), bytes.Replace(bytes.Clone(v), []byte(`"result":"pass"`), []byte(`"result":"fail"`), 2))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, code = runCLI(t, "", "store", "check", "--data-dir", dir)
	if code != 1 || !strings.Contains(string(out), "store check FAILED") || !strings.Contains(string(out), "receipt") {
		t.Errorf("store check of a changed receipt: exit %d, want 1 naming it:\n%s", code, out)
	}
	// A server refuses to start on it: its last records are checked at start.
	msg := runRefused(t, bin, []string{"VERIFIER_SIGNING_KEY=", "VERIFIER_LOG_KEY="}, "--data-dir", dir)
	if !strings.Contains(msg, "verifier store check") {
		t.Errorf("a server on the changed file: stderr does not name store check:\n%s", msg)
	}
}
