package signing

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"

	"golang.org/x/mod/sumdb/note"
)

// LogKeyFile is the transparency log key's file in the data dir: the
// base64 of a 32-byte Ed25519 seed, mode 0600, made on first start.
const LogKeyFile = "log.key"

// LogKey signs the transparency log's checkpoints as C2SP signed notes. It
// implements note.Signer; its name is the log's origin.
type LogKey struct {
	name string
	hash uint32
	priv ed25519.PrivateKey
	vkey string
}

// OpenLogKey reads the log key at path, creating it (mode 0600, the folder
// 0700) when there is none, and names it origin, the log's origin line,
// which must be a valid note key name (no space or '+'). Like the receipt
// keys, a key file that group or others can access is refused.
func OpenLogKey(path, origin string) (*LogKey, error) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		seed, err := writeNewSeed(path)
		clear(seed)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("opening log key: %w", err)
		}
	}
	if err := checkPerm(path, false); err != nil {
		return nil, fmt.Errorf("opening log key: %w", err)
	}
	seed, err := readSeed(path)
	if err != nil {
		return nil, fmt.Errorf("opening log key: %w", err)
	}
	defer clear(seed)
	return newLogKey(seed, origin)
}

// LogKeyFromSeed is the log key of seed, the base64 of a 32-byte Ed25519
// seed (as VERIFIER_LOG_KEY holds it), named origin: for replicas that
// must sign one log's checkpoints without copying a key file.
func LogKeyFromSeed(seedBase64, origin string) (*LogKey, error) {
	seed, err := decodeSeed(seedBase64)
	if err != nil {
		return nil, fmt.Errorf("reading log key: the seed %w", err)
	}
	defer clear(seed)
	return newLogKey(seed, origin)
}

// newLogKey is the log key of a 32-byte seed, named origin, which note
// must accept as a key name (not empty, no space or '+').
func newLogKey(seed []byte, origin string) (*LogKey, error) {
	priv := ed25519.NewKeyFromSeed(seed)
	// It fails only on a public key of another size.
	vkey, _ := note.NewEd25519VerifierKey(origin, priv.Public().(ed25519.PublicKey))
	v, err := note.NewVerifier(vkey)
	if err != nil || v.Name() != origin {
		return nil, fmt.Errorf("opening log key: origin %q is not a note key name (empty, a space or a '+')", origin)
	}
	return &LogKey{name: origin, hash: v.KeyHash(), priv: priv, vkey: vkey}, nil
}

// PublicKey is the key's 32 raw Ed25519 public bytes (the caller's copy).
func (k *LogKey) PublicKey() ed25519.PublicKey {
	return bytes.Clone(k.priv.Public().(ed25519.PublicKey))
}

// WithOrigin is the same key named origin: a log's origin is fixed when it
// is first served (recorded in its store), not by each process's URL.
func (k *LogKey) WithOrigin(origin string) (*LogKey, error) {
	if origin == k.name {
		return k, nil
	}
	seed := k.priv.Seed()
	defer clear(seed)
	return newLogKey(seed, origin)
}

// Name is the key's name, the log's origin (note.Signer).
func (k *LogKey) Name() string { return k.name }

// KeyHash is the note key hash of the key (note.Signer).
func (k *LogKey) KeyHash() uint32 { return k.hash }

// Sign signs msg with Ed25519 (note.Signer).
func (k *LogKey) Sign(msg []byte) ([]byte, error) { return ed25519.Sign(k.priv, msg), nil }

// VerifierKey is the public key in note verifier key format,
// "<name>+<hash>+<base64>", as published in the agent card.
func (k *LogKey) VerifierKey() string { return k.vkey }

// Checkpoint returns the C2SP tlog-checkpoint of a tree of size leaves and
// root hash root, signed by k as a C2SP signed note.
func (k *LogKey) Checkpoint(size int64, root [32]byte) ([]byte, error) {
	text := k.name + "\n" + strconv.FormatInt(size, 10) + "\n" + base64.StdEncoding.EncodeToString(root[:]) + "\n"
	signed, err := note.Sign(&note.Note{Text: text}, k)
	if err != nil {
		return nil, fmt.Errorf("signing checkpoint: %w", err)
	}
	return signed, nil
}
