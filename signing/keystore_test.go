package signing

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fixedNow returns options whose clock reads the given UTC month.
func fixedNow(year int, month time.Month) *KeyStoreOptions {
	return &KeyStoreOptions{Now: func() time.Time { return time.Date(year, month, 15, 12, 0, 0, 0, time.UTC) }}
}

func keyDir(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "data", "keys")
}

func openStore(t *testing.T, dir string, opts *KeyStoreOptions) *KeyStore {
	t.Helper()
	ks, err := OpenKeyStore(dir, opts)
	if err != nil {
		t.Fatalf("OpenKeyStore: %v", err)
	}
	return ks
}

func versionsOf(keys []PublicKey) []string {
	var out []string
	for _, k := range keys {
		out = append(out, k.KeyVersion)
	}
	return out
}

// checkConsistent opens dir and checks it holds keys v1…vN with no gaps or
// twins, "current" names vN, and no temporary file is left. It returns the
// versions, oldest first.
func checkConsistent(t *testing.T, dir string, n int) []string {
	t.Helper()
	ks := openStore(t, dir, nil)
	versions := versionsOf(ks.PublicKeys())
	if len(versions) != n {
		t.Fatalf("store has %d keys (%v), want %d", len(versions), versions, n)
	}
	for i, v := range versions {
		if !strings.HasPrefix(v, fmt.Sprintf("v%d-", i+1)) {
			t.Errorf("key %d is %s, want v%d-…", i, v, i+1)
		}
		if pub, ok := ks.Lookup(v); !ok || len(pub) != ed25519.PublicKeySize {
			t.Errorf("Lookup(%s) = %x, %v", v, pub, ok)
		}
	}
	if got := ks.Current().KeyVersion(); got != versions[n-1] {
		t.Errorf("current key is %s, want the newest %s", got, versions[n-1])
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tempPrefix) {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
	return versions
}

func TestOpenKeyStoreCreatesFirstKey(t *testing.T) {
	dir := keyDir(t)
	ks := openStore(t, dir, fixedNow(2026, time.November))
	if got := ks.Current().KeyVersion(); got != "v1-2026-11a" {
		t.Errorf("first key version = %s, want v1-2026-11a", got)
	}
	if got := versionsOf(ks.PublicKeys()); !slices.Equal(got, []string{"v1-2026-11a"}) {
		t.Errorf("PublicKeys versions = %v", got)
	}
	cur, err := os.ReadFile(filepath.Join(dir, currentFile))
	if err != nil || string(cur) != "v1-2026-11a\n" {
		t.Errorf("current file = %q (err %v)", cur, err)
	}
	seed, err := os.ReadFile(filepath.Join(dir, "v1-2026-11a.key"))
	if err != nil {
		t.Fatal(err)
	}
	if raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(seed))); err != nil || len(raw) != SeedSize {
		t.Errorf("key file is not base64 of a 32-byte seed (err %v)", err)
	}
	again := openStore(t, dir, fixedNow(2027, time.March))
	if again.Current().PublicKey() != ks.Current().PublicKey() {
		t.Errorf("reopened store has key %+v, want %+v", again.Current().PublicKey(), ks.Current().PublicKey())
	}
	if pk := ks.Current().PublicKey(); pk.Algorithm != Algorithm || pk.PublicKeyEncoding != PublicKeyEncoding {
		t.Errorf("PublicKey() = %+v", pk)
	}
}

func TestRotateKey(t *testing.T) {
	dir := keyDir(t)
	nov := fixedNow(2026, time.November)
	before := openStore(t, dir, nov)
	const at = "2026-11-20T10:00:00.000000+00:00"
	answer := []byte(`{"result":"pass","verified_at":"` + at + `"}`)
	oldReceipt := sign(t, before.Current(), ContextVerify, answer, at)

	pk, err := RotateKey(dir, nov)
	if err != nil {
		t.Fatalf("RotateKey: %v", err)
	}
	if pk.KeyVersion != "v2-2026-11b" || pk.Algorithm != Algorithm {
		t.Errorf("RotateKey = %+v, want v2-2026-11b", pk)
	}
	after := openStore(t, dir, nov)
	if after.Current().PublicKey() != pk {
		t.Errorf("current after rotation = %+v, want %+v", after.Current().PublicKey(), pk)
	}
	newReceipt := sign(t, after.Current(), ContextVerify, answer, at)
	for name, receipt := range map[string][]byte{"before": oldReceipt, "after": newReceipt} {
		report, err := VerifyReceipt(receipt, after)
		if err != nil {
			t.Errorf("receipt signed %s rotation: %v", name, err)
		} else if want := map[string]string{"before": "v1-2026-11a", "after": "v2-2026-11b"}[name]; report.KeyVersion != want {
			t.Errorf("receipt signed %s rotation has key %s, want %s", name, report.KeyVersion, want)
		}
	}
	// The store opened before the rotation does not know the new key.
	if _, err := VerifyReceipt(newReceipt, before); !errors.Is(err, ErrUnknownKey) || !strings.Contains(err.Error(), "v2-2026-11b") {
		t.Errorf("VerifyReceipt with the old store = %v, want ErrUnknownKey naming v2-2026-11b", err)
	}

	if pk, err = RotateKey(dir, fixedNow(2026, time.December)); err != nil || pk.KeyVersion != "v3-2026-12a" {
		t.Errorf("RotateKey in December = %+v, %v; want v3-2026-12a", pk, err)
	}
	got := checkConsistent(t, dir, 3)
	if want := []string{"v1-2026-11a", "v2-2026-11b", "v3-2026-12a"}; !slices.Equal(got, want) {
		t.Errorf("versions = %v, want %v", got, want)
	}
}

func TestNextVersion(t *testing.T) {
	nov := time.Date(2026, time.November, 30, 23, 59, 0, 0, time.UTC)
	tests := []struct {
		name     string
		existing []string
		now      time.Time
		want     string
	}{
		{"first", nil, nov, "v1-2026-11a"},
		{"same month", []string{"v1-2026-11a"}, nov, "v2-2026-11b"},
		{"new month", []string{"v1-2026-11a", "v2-2026-11b"}, nov.Add(time.Hour), "v3-2026-12a"},
		{"clock in another zone", nil, time.Date(2026, time.December, 1, 0, 30, 0, 0, time.FixedZone("x", 3600)), "v1-2026-11a"},
		{"gap", []string{"v1-2026-10a", "v7-2026-11c"}, nov, "v8-2026-11b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nextVersion(tt.existing, tt.now); got != tt.want {
				t.Errorf("nextVersion(%v) = %s, want %s", tt.existing, got, tt.want)
			}
		})
	}
	for i, want := range map[int]string{1: "a", 2: "b", 26: "z", 27: "aa", 28: "ab", 52: "az", 53: "ba", 702: "zz", 703: "aaa"} {
		if got := monthLetters(i); got != want {
			t.Errorf("monthLetters(%d) = %s, want %s", i, got, want)
		}
	}
	var existing []string
	for range 30 {
		v := nextVersion(existing, nov)
		if _, _, ok := parseVersion(v); !ok {
			t.Fatalf("nextVersion made %s, which parseVersion rejects", v)
		}
		existing = append(existing, v)
	}
	if existing[26] != "v27-2026-11aa" {
		t.Errorf("27th key of a month = %s, want v27-2026-11aa", existing[26])
	}
}

func TestRotateKeyConcurrentGoroutines(t *testing.T) {
	dir := keyDir(t)
	openStore(t, dir, nil)
	const workers, each = 6, 4
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		made []string
	)
	done := make(chan struct{})
	readers := sync.WaitGroup{}
	for range 2 {
		// Opening while others rotate always sees a whole store.
		readers.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				ks, err := OpenKeyStore(dir, nil)
				if err != nil {
					t.Errorf("OpenKeyStore during rotations: %v", err)
					return
				}
				if _, ok := ks.Lookup(ks.Current().KeyVersion()); !ok {
					t.Errorf("current key %s is not among the published keys", ks.Current().KeyVersion())
					return
				}
			}
		})
	}
	for range workers {
		wg.Go(func() {
			for range each {
				pk, err := RotateKey(dir, nil)
				if err != nil {
					t.Errorf("RotateKey: %v", err)
					return
				}
				mu.Lock()
				made = append(made, pk.KeyVersion)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(done)
	readers.Wait()
	versions := checkConsistent(t, dir, 1+workers*each)
	slices.Sort(made)
	want := slices.Sorted(slices.Values(versions[1:]))
	if !slices.Equal(made, want) {
		t.Errorf("rotations returned %v, store holds %v", made, want)
	}
}

const (
	rotateHelperDir = "SIGNING_TEST_ROTATE_DIR"
	rotateHelperN   = "SIGNING_TEST_ROTATE_N"
	rotatedPrefix   = "rotated "
)

// TestRotateKeyTwoProcesses re-executes the test binary twice; both copies
// rotate the same key folder at once.
func TestRotateKeyTwoProcesses(t *testing.T) {
	if dir := os.Getenv(rotateHelperDir); dir != "" {
		rotateHelper(t, dir)
		return
	}
	dir := keyDir(t)
	openStore(t, dir, nil)
	const procs, each = 2, 12
	goFile := filepath.Join(t.TempDir(), "go")
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRotateKeyTwoProcesses$", "-test.count=1")
		cmd.Env = append(os.Environ(), rotateHelperDir+"="+dir, rotateHelperN+"="+strconv.Itoa(each)+","+goFile)
		out := new(bytes.Buffer)
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting helper: %v", err)
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	// Both wait for this file, so their rotations overlap.
	if err := os.WriteFile(goFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var made []string
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper %d: %v\n%s", i, err, outs[i])
		}
		sc := bufio.NewScanner(outs[i])
		n := 0
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), rotatedPrefix); ok {
				made, n = append(made, v), n+1
			}
		}
		if n != each {
			t.Fatalf("helper %d reported %d rotations, want %d:\n%s", i, n, each, outs[i])
		}
	}
	versions := checkConsistent(t, dir, 1+procs*each)
	slices.Sort(made)
	if want := slices.Sorted(slices.Values(versions[1:])); !slices.Equal(made, want) {
		t.Errorf("helpers made %v, store holds %v", made, want)
	}
}

func rotateHelper(t *testing.T, dir string) {
	nText, goFile, _ := strings.Cut(os.Getenv(rotateHelperN), ",")
	n, err := strconv.Atoi(nText)
	if err != nil {
		t.Fatalf("bad %s: %v", rotateHelperN, err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(goFile); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no go signal")
		}
	}
	for range n {
		pk, err := RotateKey(dir, nil)
		if err != nil {
			t.Fatalf("RotateKey: %v", err)
		}
		fmt.Println(rotatedPrefix + pk.KeyVersion)
	}
}

func TestEnvKey(t *testing.T) {
	seed := testSeed("env")
	b64 := base64.StdEncoding.EncodeToString(seed)
	pub := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
	sum := sha256.Sum256(pub)
	wantVersion := "env-" + hex.EncodeToString(sum[:])[:8]

	t.Run("missing folder", func(t *testing.T) {
		dir := keyDir(t)
		ks := openStore(t, dir, &KeyStoreOptions{EnvSeed: b64})
		if got := ks.Current().KeyVersion(); got != wantVersion {
			t.Errorf("env key version = %s, want %s", got, wantVersion)
		}
		if got := EnvKeyVersion(pub); got != wantVersion {
			t.Errorf("EnvKeyVersion = %s, want %s", got, wantVersion)
		}
		if !ks.Current().public().Equal(pub) {
			t.Error("env signer has another key")
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("env key store created %s (err %v)", dir, err)
		}
	})
	t.Run("replicas agree, disk keys stay published", func(t *testing.T) {
		dir := keyDir(t)
		disk := openStore(t, dir, fixedNow(2026, time.October)).Current()
		a := openStore(t, dir, &KeyStoreOptions{EnvSeed: b64})
		b := openStore(t, keyDir(t), &KeyStoreOptions{EnvSeed: " " + b64 + "\n"})
		if a.Current().PublicKey() != b.Current().PublicKey() {
			t.Errorf("replicas differ: %+v vs %+v", a.Current().PublicKey(), b.Current().PublicKey())
		}
		if got := versionsOf(a.PublicKeys()); !slices.Equal(got, []string{"v1-2026-10a", wantVersion}) {
			t.Errorf("PublicKeys versions = %v, want the disk key then the env key", got)
		}
		const at = "2026-10-02T00:00:00.000000+00:00"
		answer := []byte(`{"verified_at":"` + at + `"}`)
		for _, s := range []*Signer{disk, a.Current()} {
			if _, err := VerifyReceipt(sign(t, s, ContextVerify, answer, at), a); err != nil {
				t.Errorf("receipt of %s: %v", s.KeyVersion(), err)
			}
		}
		if _, err := RotateKey(dir, &KeyStoreOptions{EnvSeed: b64}); err == nil {
			t.Error("RotateKey with an env key gave no error")
		}
	})
	unpadded := strings.TrimRight(b64, "=")
	if ks := openStore(t, keyDir(t), &KeyStoreOptions{EnvSeed: unpadded}); ks.Current().KeyVersion() != wantVersion {
		t.Errorf("unpadded env seed gave %s", ks.Current().KeyVersion())
	}
}

func TestEnvKeyInvalid(t *testing.T) {
	long := base64.StdEncoding.EncodeToString(append(testSeed("long"), 1, 2, 3))
	short := base64.StdEncoding.EncodeToString(testSeed("short")[:16])
	tests := map[string]string{
		"too long":        long,
		"too short":       short,
		"64-byte key":     base64.StdEncoding.EncodeToString(ed25519.NewKeyFromSeed(testSeed("k"))),
		"hex":             hex.EncodeToString(testSeed("hex")),
		"not base64":      "this is my secret signing key!!!",
		"url alphabet":    base64.URLEncoding.EncodeToString(bytes.Repeat([]byte{0xfb}, 32)),
		"inner newline":   long[:10] + "\n" + long[10:],
		"just whitespace": " \t",
	}
	for name, value := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := OpenKeyStore(keyDir(t), &KeyStoreOptions{EnvSeed: value})
			if !errors.Is(err, ErrInvalidSeed) {
				t.Fatalf("OpenKeyStore error = %v, want ErrInvalidSeed", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, "VERIFIER_SIGNING_KEY") || !strings.Contains(msg, "32-byte") {
				t.Errorf("error %q does not say what is wrong", msg)
			}
			for _, part := range []string{strings.TrimSpace(value), value[:min(len(value), 12)]} {
				if strings.TrimSpace(part) != "" && strings.Contains(msg, part) {
					t.Errorf("error %q contains the value", msg)
				}
			}
		})
	}
}

func TestKeyStoreRecovery(t *testing.T) {
	t.Run("key file without current", func(t *testing.T) {
		dir := keyDir(t)
		first := openStore(t, dir, nil).Current().PublicKey()
		if err := os.Remove(filepath.Join(dir, currentFile)); err != nil {
			t.Fatal(err)
		}
		if got := openStore(t, dir, nil).Current().PublicKey(); got != first {
			t.Errorf("after losing current, key = %+v, want %+v", got, first)
		}
		checkConsistent(t, dir, 1)
	})
	t.Run("leftover temporary file", func(t *testing.T) {
		dir := keyDir(t)
		openStore(t, dir, nil)
		if err := os.WriteFile(filepath.Join(dir, tempPrefix+"123"), []byte("half a se"), 0o600); err != nil {
			t.Fatal(err)
		}
		openStore(t, dir, nil)
		if _, err := RotateKey(dir, nil); err != nil {
			t.Fatalf("RotateKey: %v", err)
		}
		checkConsistent(t, dir, 2)
	})
	t.Run("current names a missing key", func(t *testing.T) {
		dir := keyDir(t)
		openStore(t, dir, nil)
		if err := os.WriteFile(filepath.Join(dir, currentFile), []byte("v9-2026-01a\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := OpenKeyStore(dir, nil)
		if err == nil || !strings.Contains(err.Error(), "v9-2026-01a") || !strings.Contains(err.Error(), "verifier keys rotate") {
			t.Fatalf("OpenKeyStore error = %v, want one naming the version and the fix", err)
		}
		if _, err := RotateKey(dir, nil); err != nil {
			t.Fatalf("RotateKey did not repair: %v", err)
		}
		checkConsistent(t, dir, 2)
	})
	t.Run("stray key file", func(t *testing.T) {
		dir := keyDir(t)
		openStore(t, dir, nil)
		if err := os.WriteFile(filepath.Join(dir, "backup.key"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenKeyStore(dir, nil); err == nil || !strings.Contains(err.Error(), "backup.key") {
			t.Errorf("OpenKeyStore error = %v, want one naming backup.key", err)
		}
	})
	t.Run("corrupt key file", func(t *testing.T) {
		dir := keyDir(t)
		v := openStore(t, dir, nil).Current().KeyVersion()
		const junk = "c2VjcmV0IGJ1dCB0cnVuY2F0ZWQ="
		if err := os.WriteFile(filepath.Join(dir, v+keyFileSuffix), []byte(junk), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := OpenKeyStore(dir, nil)
		if !errors.Is(err, ErrInvalidSeed) || strings.Contains(err.Error(), junk) {
			t.Errorf("OpenKeyStore error = %v, want ErrInvalidSeed without the content", err)
		}
	})
	t.Run("no folder given", func(t *testing.T) {
		if _, err := OpenKeyStore("", nil); err == nil {
			t.Error("OpenKeyStore(\"\") gave no error")
		}
		if _, err := RotateKey("", nil); err == nil {
			t.Error("RotateKey(\"\") gave no error")
		}
	})
}
