package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/verifier-dev/verifier/internal/pgtest"
	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/tools/rest"
)

// replica is a real `verifier --http` process.
type replica struct {
	base    string
	dataDir string
	cmd     *exec.Cmd
	stderr  *lockedBuffer
	exited  chan struct{}
}

// startReplica runs the built binary on 127.0.0.1:0 with a data dir of its
// own, the shared signing key and store, and args; stopped (SIGTERM) when
// the test ends unless it was killed first.
func startReplica(t *testing.T, bin, storeURL, seed string, args ...string) *replica {
	t.Helper()
	return startReplicaIn(t, t.TempDir(), bin, storeURL, seed, args...)
}

// replicaLogKey is the VERIFIER_LOG_KEY the replicas share: one store's
// log has one key, and a replica with another is refused.
var replicaLogKey = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{11}, 32))

// startReplicaIn is startReplica with the data dir dataDir.
func startReplicaIn(t *testing.T, dataDir, bin, storeURL, seed string, args ...string) *replica {
	t.Helper()
	return startReplicaEnv(t, dataDir, bin, storeURL, []string{"VERIFIER_SIGNING_KEY=" + seed, "VERIFIER_LOG_KEY=" + replicaLogKey}, args...)
}

// startReplicaEnv is startReplicaIn with the environment variables env
// (VERIFIER_SIGNING_KEY, VERIFIER_LOG_KEY) instead of the shared keys.
func startReplicaEnv(t *testing.T, dataDir, bin, storeURL string, env []string, args ...string) *replica {
	t.Helper()
	// A long --queue-wait: on a loaded machine a burst must wait, not be
	// refused, for the counts to mean what they say.
	all := append([]string{"--http", "127.0.0.1:0", "--data-dir", dataDir, "--store", storeURL, "--trust-proxy", "--queue-wait", "60s"}, args...)
	r := &replica{dataDir: dataDir, cmd: exec.Command(bin, all...), stderr: &lockedBuffer{}, exited: make(chan struct{})}
	r.cmd.Env = append(os.Environ(), env...)
	r.cmd.Stderr = r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = r.cmd.Wait(); close(r.exited) }()
	t.Cleanup(func() {
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-r.exited:
		case <-time.After(30 * time.Second):
			_ = r.cmd.Process.Kill()
			t.Error("a replica did not stop on SIGTERM")
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if m := servingLine.FindStringSubmatch(r.stderr.String()); m != nil {
			r.base = "http://" + m[1]
			return r
		}
		select {
		case <-r.exited:
			t.Fatalf("the replica exited:\n%s", r.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("the replica did not start:\n%s", r.stderr)
	return nil
}

// verifyAs posts body to /verify/schema as the client address client (the
// balancer's X-Forwarded-For) and returns the status and the verification
// id of a 200; err is a transport failure (a killed replica).
func (r *replica) verifyAs(client string, body []byte) (int, string, error) {
	reply, err := postVerify(r.base, client, body)
	return reply.status, reply.id, err
}

// verifyReply is what a client keeps of an answer to POST /verify/schema.
type verifyReply struct {
	status   int
	id       string // the verification id of a 200
	logIndex string // its Log-Index header
}

// postVerify posts body to base's /verify/schema, as the client address
// client (X-Forwarded-For) unless client is "". err is a transport failure
// (a killed server) or a 200 without a verification id.
func postVerify(base, client string, body []byte) (verifyReply, error) {
	req, err := http.NewRequest(http.MethodPost, base+"/verify/schema", bytes.NewReader(body))
	if err != nil {
		return verifyReply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if client != "" {
		req.Header.Set("X-Forwarded-For", client)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return verifyReply{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return verifyReply{}, err
	}
	reply := verifyReply{status: resp.StatusCode, logIndex: resp.Header.Get(rest.LogIndexHeader)}
	if resp.StatusCode == http.StatusOK {
		var v struct {
			VerificationID string `json:"verification_id"`
		}
		if err := json.Unmarshal(raw, &v); err != nil || v.VerificationID == "" {
			return verifyReply{}, fmt.Errorf("a 200 without a verification id: %s", raw)
		}
		reply.id = v.VerificationID
	}
	return reply, nil
}

func (r *replica) get(t *testing.T, path string) (int, []byte) {
	t.Helper()
	resp, b := getURL(t, r.base+path)
	return resp.StatusCode, b
}

// replicaKey is the VERIFIER_SIGNING_KEY the replicas share.
var replicaKey = base64.StdEncoding.EncodeToString(testSeed)

// TestTwoReplicasOnePostgres runs two real processes on one database: 50
// concurrent requests from one client, split across them, are served free
// exactly 5 times (--free-per-day 5); reputation and receipts agree on
// both, and so does the transparency log: both serve the same signed
// checkpoint (they share the log key) of the 5 verdicts, and each
// verdict's /log/proof on either verifies against it.
func TestTwoReplicasOnePostgres(t *testing.T) {
	bin := buildVerifier(t)
	url := pgtest.NewDatabase(t)
	first := startReplica(t, bin, url, replicaKey, "--free-per-day", "5", "--public-url", "http://verifier.example")
	replicas := []*replica{first, startReplica(t, bin, url, replicaKey, "--free-per-day", "5", "--public-url", "http://verifier.example")}
	body := mustRead(t, filepath.Join("testdata", "invoice-pass.json"))
	const requests = 50
	statuses := make([]int, requests)
	ids := make([]string, requests)
	var wg sync.WaitGroup
	for i := range requests {
		wg.Go(func() {
			var err error
			statuses[i], ids[i], err = replicas[i%2].verifyAs("203.0.113.7", body)
			if err != nil {
				t.Errorf("request %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	counts := map[int]int{}
	var served []string
	for i, s := range statuses {
		counts[s]++
		if s == http.StatusOK {
			served = append(served, ids[i])
		}
	}
	if counts[http.StatusOK] != 5 || counts[http.StatusTooManyRequests] != requests-5 {
		t.Fatalf("statuses across two replicas = %v, want exactly 5 × 200 and %d × 429", counts, requests-5)
	}
	_, repA := replicas[0].get(t, "/reputation/seller-7")
	_, repB := replicas[1].get(t, "/reputation/seller-7")
	var rep store.Reputation
	if err := json.Unmarshal(repA, &rep); err != nil || rep.Total != 5 || !bytes.Equal(repA, repB) {
		t.Errorf("reputation on A:\n%s\non B:\n%s\nwant the same, 5 verdicts", repA, repB)
	}
	for _, id := range served {
		sa, a := replicas[0].get(t, "/receipts/"+id)
		sb, b := replicas[1].get(t, "/receipts/"+id)
		if sa != http.StatusOK || !bytes.Equal(a, b) {
			t.Errorf("GET /receipts/%s: A %d, B %d, bodies equal %v", id, sa, sb, bytes.Equal(a, b))
		}
	}
	_, cpA := replicas[0].get(t, "/log/checkpoint")
	_, cpB := replicas[1].get(t, "/log/checkpoint")
	if !bytes.Equal(cpA, cpB) {
		t.Errorf("checkpoints differ:\nA %s\nB %s", cpA, cpB)
	}
	for _, r := range replicas {
		_, tree := servedCheckpoint(t, r.base)
		if tree.size != int64(len(served)) {
			t.Errorf("checkpoint of %s has %d records, want the %d verdicts stored", r.base, tree.size, len(served))
		}
		for _, id := range served {
			checkLogProof(t, r.base, id, tree)
		}
	}
}

// openStoreAt opens the database as a replica does, closed when the test
// ends.
func openStoreAt(t *testing.T, url string) *store.Postgres {
	t.Helper()
	st, err := store.OpenPostgres(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// TestReplicaKilledUnderLoad SIGKILLs one of two replicas while both serve:
// every verdict either acknowledged (a 200 with its id) is in the store.
func TestReplicaKilledUnderLoad(t *testing.T) {
	bin := buildVerifier(t)
	url := pgtest.NewDatabase(t)
	replicas := []*replica{startReplica(t, bin, url, replicaKey), startReplica(t, bin, url, replicaKey)}
	body := mustRead(t, filepath.Join("testdata", "invoice-pass.json"))
	var (
		mu    sync.Mutex
		acked []string
		wg    sync.WaitGroup
	)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	for w := range 8 {
		wg.Go(func() {
			r := replicas[w%2]
			for i := 0; ctx.Err() == nil; i++ {
				// A client address per request: the free allowance is
				// not what this test is about.
				status, id, err := r.verifyAs(fmt.Sprintf("198.51.%d.%d", w, i%250), body)
				if err != nil {
					if r == replicas[0] {
						return // killed
					}
					t.Errorf("the surviving replica failed: %v", err)
					return
				}
				if status == http.StatusOK {
					mu.Lock()
					acked = append(acked, id)
					mu.Unlock()
				}
			}
		})
	}
	time.Sleep(time.Second)
	if err := replicas[0].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-replicas[0].exited
	wg.Wait()
	t.Logf("%d verdicts acknowledged by the two replicas, one killed after 1s", len(acked))
	if len(acked) < 10 {
		t.Fatalf("only %d verdicts acknowledged under load; the test needs more", len(acked))
	}
	st := openStoreAt(t, url)
	missing := 0
	for _, id := range acked {
		if _, err := st.Receipt(context.Background(), id); err != nil {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d acknowledged verdicts are not in the store after a replica was killed", missing, len(acked))
	}
	rep, err := st.Reputation(context.Background(), "seller-7", store.Page{})
	if err != nil || rep.Total < len(acked) {
		t.Errorf("reputation counts %d verdicts (%v), want at least the %d acknowledged", rep.Total, err, len(acked))
	}
	// The log holds every stored verdict and nothing else, and every
	// acknowledged verdict's proof on the survivor verifies.
	_, tree := servedCheckpoint(t, replicas[1].base)
	var stored int64
	if err := pgxCount(url, "SELECT count(*) FROM verdicts", &stored); err != nil || tree.size != stored {
		t.Errorf("log size %d after the SIGKILL, %d verdicts stored (%v); want equal", tree.size, stored, err)
	}
	for _, id := range acked {
		checkLogProof(t, replicas[1].base, id, tree)
	}
}

// pgxCount runs a count query on the database at url.
func pgxCount(url, sql string, n *int64) error {
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	return conn.QueryRow(context.Background(), sql).Scan(n)
}

// TestPaymentReplayedAcrossReplicas pays replica A, then sends the same
// payment for another request to replica B: B refuses it as replayed
// without asking the facilitator, which settled it once.
func TestPaymentReplayedAcrossReplicas(t *testing.T) {
	var settles atomic.Int32
	facilitator := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			PaymentRequirements payment.PaymentRequirements `json:"paymentRequirements"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/supported": // the check at start: exact on Base, the default network
			fmt.Fprint(w, `{"kinds":[{"x402Version":2,"scheme":"exact","network":"eip155:8453"}],"extensions":[],"signers":{}}`)
		case "/verify":
			fmt.Fprint(w, `{"isValid":true,"payer":"0x3F6F8187C480D0FeE3e9536Eeee62CEED2CACD58"}`)
		case "/settle":
			settles.Add(1)
			fmt.Fprintf(w, `{"success":true,"payer":"0x3F6F8187C480D0FeE3e9536Eeee62CEED2CACD58","transaction":"0xabc","network":%q}`, req.PaymentRequirements.Network)
		default:
			http.NotFound(w, r)
		}
	}))
	defer facilitator.Close()
	bin := buildVerifier(t)
	url := pgtest.NewDatabase(t)
	args := []string{"--free-per-day", "0", "--pay-to-evm", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "--facilitator", facilitator.URL}
	a := startReplica(t, bin, url, replicaKey, args...)
	b := startReplica(t, bin, url, replicaKey, args...)
	pass := mustRead(t, filepath.Join("testdata", "invoice-pass.json"))
	fail := mustRead(t, filepath.Join("testdata", "invoice-fail.json"))

	status, header, _ := a.post(t, "/verify/schema", pass, "")
	if status != http.StatusPaymentRequired {
		t.Fatalf("unpaid POST = %d, want 402", status)
	}
	required, err := payment.DecodePaymentRequired(header.Get("Payment-Required"))
	if err != nil || len(required.Accepts) == 0 {
		t.Fatalf("Payment-Required header: %v", err)
	}
	offer := required.Accepts[0]
	pl, _ := json.Marshal(payment.EVMPayload{
		Signature: "0x" + hex.EncodeToString(make([]byte, 65)), // the fake facilitator does not check it
		Authorization: payment.EVMAuthorization{From: "0x3F6F8187C480D0FeE3e9536Eeee62CEED2CACD58", To: offer.PayTo, Value: offer.Amount,
			ValidAfter: "0", ValidBefore: strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10), Nonce: "0x" + strings.Repeat("ab", 32)},
	})
	sig, err := payment.EncodeHeader(payment.PaymentPayload{X402Version: 2, Accepted: offer, Payload: pl})
	if err != nil {
		t.Fatal(err)
	}
	if status, _, body := a.post(t, "/verify/schema", pass, sig); status != http.StatusOK {
		t.Fatalf("paid POST to A = %d %s, want 200", status, body)
	}
	status, _, body := b.post(t, "/verify/schema", fail, sig)
	if status != http.StatusPaymentRequired || !bytes.Contains(body, []byte(`"`+payment.CodePaymentReplayed+`"`)) {
		t.Errorf("the same payment for another request on B = %d %s, want 402 %s", status, body, payment.CodePaymentReplayed)
	}
	if n := settles.Load(); n != 1 {
		t.Errorf("the facilitator settled %d times, want once", n)
	}
}

// post sends body to path, with a Payment-Signature when sig is not "".
func (r *replica) post(t *testing.T, path string, body []byte, sig string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, r.base+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if sig != "" {
		req.Header.Set("Payment-Signature", sig)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, raw
}
