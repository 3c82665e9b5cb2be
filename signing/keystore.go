package signing

import (
	"bytes"
	"cmp"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Names inside the key folder.
const (
	keyFileSuffix = ".key"    // <version>.key holds the base64 seed
	currentFile   = "current" // holds the current version, replaced by rename
	lockFileName  = ".lock"   // flock'ed by every writer
	tempPrefix    = ".tmp-"   // files being written; never end in .key
)

// Modes of what the key store creates. Group and other bits on either are
// refused at open.
const (
	keyDirMode  fs.FileMode = 0o700
	keyFileMode fs.FileMode = 0o600
)

// envVersionPrefix starts the version of a key from VERIFIER_SIGNING_KEY.
const envVersionPrefix = "env-"

// KeyStoreOptions configures OpenKeyStore and RotateKey. A nil
// *KeyStoreOptions and zero fields mean the defaults.
type KeyStoreOptions struct {
	// EnvSeed is the value of VERIFIER_SIGNING_KEY: standard base64 of a
	// 32-byte Ed25519 seed. "" (the default) means unset. When set, that key
	// is the current one and the folder's keys are only published. The env
	// key is published only while it is set: nothing of it is written to
	// the folder, so after retiring it its receipts verify only with its
	// public key kept elsewhere (an agent card, --key).
	EnvSeed string
	// Now gives the time that names new keys (their month). Nil means
	// time.Now.
	Now func() time.Time
	// NoCreate opens the keys that exist and creates nothing: a missing
	// folder, or one without a key file, is ErrNoKey (unless EnvSeed is
	// set), where OpenKeyStore would otherwise make a first key.
	NoCreate bool
}

func (o *KeyStoreOptions) now() time.Time {
	if o.Now == nil {
		return time.Now().UTC()
	}
	return o.Now().UTC()
}

// KeyStore holds the current signer and every public key ever used. It is
// read once at open and immutable after, so it is safe for concurrent use; a
// rotation by another process shows after the store is opened again.
type KeyStore struct {
	current *Signer
	public  []PublicKey // oldest first
	byVer   map[string]ed25519.PublicKey
}

// OpenKeyStore opens the key folder dir (normally <data-dir>/keys).
//
// Without an env seed it creates dir (mode 0700) and a first key (0600) when
// there is none — or, with opts.NoCreate, returns ErrNoKey —, and the
// current key signs. With opts.EnvSeed the env key signs, a missing dir is
// not created, and the folder's keys are still published so older receipts
// keep verifying.
//
// It refuses a key folder or key file that group or others can access, with
// an error (ErrInsecurePermissions) that states the chmod that fixes it.
func OpenKeyStore(dir string, opts *KeyStoreOptions) (*KeyStore, error) {
	if dir == "" {
		return nil, errors.New("opening key store: no folder given")
	}
	opts = cmp.Or(opts, &KeyStoreOptions{})
	var env *Signer
	if seed := opts.EnvSeed; seed != "" {
		var err error
		if env, err = signerFromEnv(seed); err != nil {
			return nil, fmt.Errorf("opening key store: %w", err)
		}
	}
	st, err := readKeyFolder(dir, env == nil && !opts.NoCreate, opts)
	if errors.Is(err, errDanglingCurrent) && env != nil {
		err = nil // the env key signs; "current" is not used
	}
	if err != nil {
		return nil, fmt.Errorf("opening key store: %w", err)
	}
	if env == nil && len(st.versions) == 0 {
		return nil, fmt.Errorf("opening key store: %w: %s holds no key file", ErrNoKey, dir)
	}
	if env == nil && st.current == "" {
		// A crash between the first key file and "current": the newest
		// key signs.
		st.current = st.versions[len(st.versions)-1]
	}
	ks := &KeyStore{byVer: make(map[string]ed25519.PublicKey, len(st.versions)+1)}
	for _, v := range st.versions {
		seed, err := readSeed(filepath.Join(dir, v+keyFileSuffix))
		if err != nil {
			return nil, fmt.Errorf("opening key store: %w", err)
		}
		s, _ := NewSigner(v, seed) // readSeed checked the length
		clear(seed)
		ks.add(s.public(), v)
		if env == nil && v == st.current {
			ks.current = s
		}
	}
	if env != nil {
		ks.add(env.public(), env.version)
		ks.current = env
	}
	return ks, nil
}

func (k *KeyStore) add(pub ed25519.PublicKey, version string) {
	k.public = append(k.public, newPublicKey(version, pub))
	k.byVer[version] = pub
}

// Current returns the signer for new attestations.
func (k *KeyStore) Current() *Signer { return k.current }

// PublicKeys returns every key ever used, oldest first; the env key, when
// set, is last. The slice is the caller's.
func (k *KeyStore) PublicKeys() []PublicKey { return slices.Clone(k.public) }

// Lookup returns the public key of keyVersion. KeyStore is a KeyResolver.
func (k *KeyStore) Lookup(keyVersion string) (ed25519.PublicKey, bool) {
	pub, ok := k.byVer[keyVersion]
	return bytes.Clone(pub), ok // the caller cannot change the store's key
}

// RotateKey makes a new key the current one in dir and returns its public
// key; the old keys stay and remain published. The new key is written to a
// temporary file, synced and renamed, and only then does "current" move (by
// the same steps), so a crash leaves either the old or the new key current,
// never a broken store. Writers hold an exclusive lock on dir/.lock, so
// concurrent rotations, from any number of processes, each make their own
// version. It refuses when opts.EnvSeed is set: that key would still win.
func RotateKey(dir string, opts *KeyStoreOptions) (PublicKey, error) {
	if dir == "" {
		return PublicKey{}, errors.New("rotating key: no folder given")
	}
	if opts = cmp.Or(opts, &KeyStoreOptions{}); opts.EnvSeed != "" {
		return PublicKey{}, errors.New("rotating key: VERIFIER_SIGNING_KEY is set and overrides the key store; " +
			"rotate by giving every replica a new VERIFIER_SIGNING_KEY, or unset it to use the key store")
	}
	if err := ensureDir(dir); err != nil {
		return PublicKey{}, fmt.Errorf("rotating key: %w", err)
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return PublicKey{}, fmt.Errorf("rotating key: %w", err)
	}
	defer unlock()
	st, err := readState(dir)
	if err != nil && !errors.Is(err, errDanglingCurrent) {
		// A dangling "current" is what a rotation repairs; anything else
		// (bad permissions, stray files) must be fixed by hand first.
		return PublicKey{}, fmt.Errorf("rotating key: %w", err)
	}
	s, err := createKey(dir, st.versions, opts.now())
	if err != nil {
		return PublicKey{}, fmt.Errorf("rotating key: %w", err)
	}
	return s.PublicKey(), nil
}

// EnvKeyVersion returns the key version of an env key with public key pub:
// "env-" and the first 8 hex digits of SHA-256 over the raw key.
func EnvKeyVersion(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return envVersionPrefix + hex.EncodeToString(sum[:4])
}

func signerFromEnv(b64 string) (*Signer, error) {
	seed, err := decodeSeed(b64)
	if err != nil {
		return nil, fmt.Errorf("VERIFIER_SIGNING_KEY %w", err)
	}
	defer clear(seed)
	priv := ed25519.NewKeyFromSeed(seed)
	return &Signer{version: EnvKeyVersion(priv.Public().(ed25519.PublicKey)), priv: priv}, nil
}

// decodeSeed decodes base64 of a seed. Its errors say what is wrong in
// words, never quoting the input (base64 errors give an offset only, but
// nothing of the value is worth the risk).
func decodeSeed(b64 string) ([]byte, error) {
	s := strings.TrimSpace(b64)
	seed, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		if seed, err = base64.RawStdEncoding.DecodeString(s); err != nil {
			return nil, fmt.Errorf("is not standard base64 (%w); it must be the base64 of a 32-byte Ed25519 seed, e.g. from: openssl rand -base64 32", ErrInvalidSeed)
		}
	}
	if len(seed) != SeedSize {
		n := len(seed)
		clear(seed)
		return nil, fmt.Errorf("decodes to %d bytes, want %d (%w); it must be the base64 of a 32-byte Ed25519 seed, e.g. from: openssl rand -base64 32", n, SeedSize, ErrInvalidSeed)
	}
	return seed, nil
}

// versionPattern is the key version scheme v<N>-<YYYY-MM><letters>.
var versionPattern = regexp.MustCompile(`^v([1-9][0-9]{0,8})-([0-9]{4})-(0[1-9]|1[0-2])([a-z]+)$`)

// parseVersion reads a version's key count n and month (YYYY-MM).
func parseVersion(s string) (n int, month string, ok bool) {
	m := versionPattern.FindStringSubmatch(s)
	if m == nil {
		return 0, "", false
	}
	n, _ = strconv.Atoi(m[1]) // at most nine digits, by the pattern
	return n, m[2] + "-" + m[3], true
}

// nextVersion names the key after existing (all valid versions) at now.
func nextVersion(existing []string, now time.Time) string {
	month := now.UTC().Format("2006-01")
	maxN, sameMonth := 0, 0
	for _, s := range existing {
		n, m, _ := parseVersion(s)
		maxN = max(maxN, n)
		if m == month {
			sameMonth++
		}
	}
	return fmt.Sprintf("v%d-%s%s", maxN+1, month, monthLetters(sameMonth+1))
}

// monthLetters is i (1-based) in bijective base 26: a … z, aa, ab, ….
func monthLetters(i int) string {
	var b []byte
	for ; i > 0; i = (i - 1) / 26 {
		b = append(b, byte('a'+(i-1)%26))
	}
	slices.Reverse(b)
	return string(b)
}

// state is what the key folder holds.
type state struct {
	versions []string // oldest first
	current  string   // "" when there is no current file
}

var errDanglingCurrent = errors.New("current key has no key file")

// readState lists the key folder, checking every permission on the way.
func readState(dir string) (state, error) {
	if err := checkPerm(dir, true); err != nil {
		return state{}, err
	}
	// "current" first: a rotation writes the key file before it moves
	// "current", so the listing that follows includes the key it names.
	var st state
	b, err := os.ReadFile(filepath.Join(dir, currentFile))
	hasCurrent := err == nil
	switch {
	case hasCurrent:
		st.current = strings.TrimSpace(string(b))
	case !errors.Is(err, fs.ErrNotExist):
		return state{}, fmt.Errorf("reading current key version: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return state{}, fmt.Errorf("reading key folder: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, keyFileSuffix) || strings.HasPrefix(name, tempPrefix) {
			continue
		}
		v := strings.TrimSuffix(name, keyFileSuffix)
		if _, _, ok := parseVersion(v); !ok {
			return state{}, fmt.Errorf("key file %s is not named <version>.key with a version like v1-2026-11a; move it out of the key folder",
				filepath.Join(dir, name))
		}
		if err := checkPerm(filepath.Join(dir, name), false); err != nil {
			return state{}, err
		}
		st.versions = append(st.versions, v)
	}
	slices.SortFunc(st.versions, func(a, b string) int {
		na, _, _ := parseVersion(a)
		nb, _, _ := parseVersion(b)
		return cmp.Or(cmp.Compare(na, nb), strings.Compare(a, b))
	})
	if hasCurrent && !slices.Contains(st.versions, st.current) {
		return st, fmt.Errorf("%w: %s names %q; point it at one of the key files or run `verifier keys rotate`",
			errDanglingCurrent, filepath.Join(dir, currentFile), st.current)
	}
	return st, nil
}

// readKeyFolder reads the key folder. With create it first makes the
// folder and, when it holds no key, a first key; without, the folder need
// not exist. Key files without "current" (a crash before it was first
// written) are left as they are: OpenKeyStore signs with the newest.
func readKeyFolder(dir string, create bool, opts *KeyStoreOptions) (state, error) {
	if !create {
		if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
			return state{}, nil
		}
		return readState(dir)
	}
	if err := ensureDir(dir); err != nil {
		return state{}, err
	}
	if st, err := readState(dir); err != nil || len(st.versions) > 0 {
		return st, err
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return state{}, err
	}
	defer unlock()
	// Another process may have got here first.
	if st, err := readState(dir); err != nil || len(st.versions) > 0 {
		return st, err
	}
	s, err := createKey(dir, nil, opts.now())
	if err != nil {
		return state{}, err
	}
	return state{versions: []string{s.version}, current: s.version}, nil
}

// createKey writes a new key after existing and makes it current. The caller
// holds the lock.
func createKey(dir string, existing []string, now time.Time) (*Signer, error) {
	removeTemps(dir)
	v := nextVersion(existing, now)
	seed, err := writeNewSeed(filepath.Join(dir, v+keyFileSuffix))
	if err != nil {
		return nil, err
	}
	defer clear(seed)
	s, _ := NewSigner(v, seed)
	if err := WriteFileAtomic(filepath.Join(dir, currentFile), []byte(v+"\n"), false); err != nil {
		return nil, err
	}
	return s, nil
}

// writeNewSeed writes a new random seed, in base64, to path, refusing to
// replace a file, and returns it.
func writeNewSeed(path string) ([]byte, error) {
	seed := make([]byte, SeedSize)
	rand.Read(seed) // never fails; it crashes the program instead
	text := base64.StdEncoding.AppendEncode(make([]byte, 0, base64.StdEncoding.EncodedLen(SeedSize)+1), seed)
	defer clear(text)
	if err := WriteFileAtomic(path, append(text, '\n'), true); err != nil {
		clear(seed)
		return nil, err
	}
	return seed, nil
}

// readSeed reads the base64 seed in the key file at path; the caller has
// checked its mode.
func readSeed(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading key file: %w", err)
	}
	defer clear(b)
	seed, err := decodeSeed(string(b))
	if err != nil {
		return nil, fmt.Errorf("key file %s %w", path, err)
	}
	return seed, nil
}

// ensureDir creates dir with mode 0700 if it is missing.
func ensureDir(dir string) error {
	if err := os.MkdirAll(dir, keyDirMode); err != nil {
		return fmt.Errorf("creating key folder: %w", err)
	}
	return nil
}

// checkPerm refuses a key folder (dir) or key file that group or others may
// access, naming the chmod that fixes it. Windows has no such mode bits;
// there the folder's ACL is the operator's business.
func checkPerm(path string, dir bool) error {
	what, chmod := "key file", "600"
	if dir {
		what, chmod = "key folder", "700"
	}
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("checking %s: %w", what, err)
	}
	if dir != info.IsDir() || (!dir && !info.Mode().IsRegular()) {
		return fmt.Errorf("%s %s is not a %s", what, path, map[bool]string{true: "folder", false: "regular file"}[dir])
	}
	if runtime.GOOS == "windows" {
		return nil
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%w: %s %s has mode %04o, so other users can reach the signing key; fix it with: chmod %s %s",
			ErrInsecurePermissions, what, path, perm, chmod, path)
	}
	return nil
}

// WriteFileAtomic writes data to path, mode 0600, so that a reader finds
// the old file or the new one, never part of one: a temporary file beside
// path is written, synced and renamed over it, and the folder is synced so
// the rename itself is durable. A missing folder is made with mode 0700.
// With exclusive it refuses (fs.ErrExist) to replace an existing file.
func WriteFileAtomic(path string, data []byte, exclusive bool) (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("writing %s: %w", path, err)
		}
	}()
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, keyDirMode); err != nil {
		return err
	}
	if exclusive {
		if _, err := os.Lstat(path); err == nil {
			return fs.ErrExist
		}
	}
	f, err := os.CreateTemp(dir, tempPrefix+"*") // mode 0600
	if err != nil {
		return err
	}
	if err = f.Chmod(keyFileMode); err == nil {
		if _, err = f.Write(data); err == nil {
			err = f.Sync()
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return err
	}
	return syncDir(dir)
}

// removeTemps deletes files left by a crash mid-write. The caller holds the
// lock, so no writer is using them.
func removeTemps(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tempPrefix) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
