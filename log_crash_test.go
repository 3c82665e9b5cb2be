//go:build unix

package main

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gowebpki/jcs"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	bolt "go.etcd.io/bbolt"

	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/rest"
)

// TestLogKilledUnderLoad SIGKILLs a real bbolt server while 8 clients post
// verifications, then restarts it on the same data dir: every acknowledged
// verdict (a 200 with its verification id and Log-Index) has an inclusion
// proof, checked with transparency-dev/merkle (not the writer's
// x/mod/sumdb/tlog) against the restarted server's checkpoint, whose note
// verifies under the card's log key; its proof names the Log-Index it was
// answered with, and its entry is the SHA-256 of the RFC 8785 form (gowebpki/jcs)
// of its stored receipt. Once the server is stopped, the number of verdicts
// in the store file, counted with bbolt directly, equals the checkpoint's
// tree size: no verdict without an entry, no entry without a verdict.
func TestLogKilledUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildVerifier(t)
	dir := t.TempDir()
	// A long --queue-wait: on a loaded machine a burst waits rather than
	// being refused, so that many verdicts are acknowledged before the kill.
	args := []string{"--http", "127.0.0.1:0", "--data-dir", dir, "--public-url", "https://verifier.example/",
		"--free-per-day", "1000000000", "--queue-wait", "60s"}
	first := startProc(t, bin, args...)
	body := mustRead(t, filepath.Join("testdata", "invoice-pass.json"))

	const workers, wantAcked = 8, 40
	var (
		mu       sync.Mutex
		acked    = map[string]int64{} // verification id → Log-Index
		spans    [][2]time.Time       // each call's start and end
		killed   atomic.Bool
		stop     = make(chan struct{})
		wg       sync.WaitGroup
		refusals atomic.Int32
	)
	for range workers {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				reply, err := postVerify(first.base, "", body)
				mu.Lock()
				spans = append(spans, [2]time.Time{start, time.Now()})
				mu.Unlock()
				switch {
				case err != nil && killed.Load():
					return
				case err != nil:
					t.Errorf("a call before the kill failed: %v", err)
					return
				case reply.status != http.StatusOK:
					refusals.Add(1) // not acknowledged: nothing to hold the log to
					continue
				}
				index, err := strconv.ParseInt(reply.logIndex, 10, 64)
				if err != nil || index < 0 {
					t.Errorf("verdict %s acknowledged with %s %q", reply.id, rest.LogIndexHeader, reply.logIndex)
					return
				}
				mu.Lock()
				acked[reply.id] = index
				mu.Unlock()
			}
		})
	}
	deadline := time.Now().Add(60 * time.Second * raceSlowdown)
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= wantAcked || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	killed.Store(true)
	killedAt := time.Now()
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.cmd.Wait()
	close(stop)
	wg.Wait()
	midCall := 0
	for _, sp := range spans {
		if sp[0].Before(killedAt) && sp[1].After(killedAt) {
			midCall++
		}
	}
	t.Logf("%d verdicts acknowledged, %d calls refused, %d calls in flight at the SIGKILL", len(acked), refusals.Load(), midCall)
	if len(acked) < wantAcked {
		t.Fatalf("only %d verdicts acknowledged before the kill; the test needs %d", len(acked), wantAcked)
	}
	if midCall == 0 {
		t.Error("no call was in flight when the server was killed")
	}

	again := startProc(t, bin, args...)
	_, tree := servedCheckpoint(t, again.base)
	if tree.size < int64(len(acked)) {
		t.Errorf("the checkpoint after restart holds %d entries, fewer than the %d acknowledged verdicts", tree.size, len(acked))
	}
	indexes := map[int64]string{}
	for id, index := range acked {
		if other, dup := indexes[index]; dup {
			t.Errorf("verdicts %s and %s were both answered with %s %d", other, id, rest.LogIndexHeader, index)
		}
		indexes[index] = id
		if got := checkLogProof(t, again.base, id, tree); got != index {
			t.Errorf("verdict %s: proof of index %d, want the answered %s %d", id, got, rest.LogIndexHeader, index)
		}
	}

	stopProc(t, again)
	stored := countVerdicts(t, filepath.Join(dir, storeFile))
	if stored != tree.size {
		t.Errorf("the store file holds %d verdicts, the log's checkpoint %d entries", stored, tree.size)
	}
	t.Logf("after restart: %d verdicts stored, %d log entries", stored, tree.size)
	if t.Failed() {
		t.Logf("stderr of the killed server:\n%s\nstderr of the restarted one:\n%s", first.stderr, again.stderr)
	}
}

// checkLogProof checks GET /log/proof/{id} of the server at base and
// returns the proof's index: its tree is tree, its inclusion proof
// verifies with transparency-dev/merkle (RFC 6962 hasher) against tree's
// root, and its entry is the SHA-256 of the JCS form of GET /receipts/{id}
// (gowebpki/jcs). It returns -1 when the proof could not be checked.
func checkLogProof(t *testing.T, base, id string, tree checkpoint) int64 {
	t.Helper()
	resp, raw := getURL(t, base+"/log/proof/"+id)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("acknowledged verdict %s: GET /log/proof = %d: %s", id, resp.StatusCode, raw)
		return -1
	}
	var p tools.LogProof
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Errorf("GET /log/proof/%s: %v: %s", id, err, raw)
		return -1
	}
	if p.TreeSize != tree.size {
		t.Errorf("verdict %s: proof in a tree of %d, want the checkpoint's %d", id, p.TreeSize, tree.size)
		return -1
	}
	entry, err := base64.StdEncoding.DecodeString(p.Entry)
	if err != nil {
		t.Errorf("verdict %s: entry %q: %v", id, p.Entry, err)
		return -1
	}
	hashes := make([][]byte, len(p.InclusionProof))
	for i, h := range p.InclusionProof {
		if hashes[i], err = base64.StdEncoding.DecodeString(h); err != nil {
			t.Errorf("verdict %s: proof hash %q: %v", id, h, err)
			return -1
		}
	}
	leaf := rfc6962.DefaultHasher.HashLeaf(entry)
	if err := proof.VerifyInclusion(rfc6962.DefaultHasher, uint64(p.LogIndex), uint64(tree.size), leaf, hashes, tree.root); err != nil {
		t.Errorf("verdict %s: inclusion proof of index %d in %d: %v", id, p.LogIndex, tree.size, err)
	}
	resp, receipt := getURL(t, base+"/receipts/"+id)
	canonical, err := jcs.Transform(receipt)
	if resp.StatusCode != http.StatusOK || err != nil {
		t.Errorf("verdict %s: GET /receipts = %d (%v): %s", id, resp.StatusCode, err, receipt)
		return -1
	}
	if sum := sha256.Sum256(canonical); string(sum[:]) != string(entry) {
		t.Errorf("verdict %s: the log entry is not the SHA-256 of its receipt's RFC 8785 form", id)
	}
	return p.LogIndex
}

// stopProc stops an HTTP server process with SIGTERM and waits for it to
// exit, killing it after 30 s.
func stopProc(t *testing.T, p *verifierProc) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- p.cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("the server exited with %v on SIGTERM:\n%s", err, p.stderr)
		}
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-exited
		t.Fatalf("the server did not stop on SIGTERM:\n%s", p.stderr)
	}
}

// countVerdicts opens the store file read-only with bbolt and counts the
// keys of its verdicts bucket.
func countVerdicts(t *testing.T, path string) int64 {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("verdicts"))
		if b == nil {
			return fmt.Errorf("no verdicts bucket")
		}
		n = int64(b.Stats().KeyN)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
