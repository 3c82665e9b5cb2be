package payment

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/net/http/httpguts"
)

// CDPTokenLifetime is how long a CDP bearer token is valid (exp − nbf), as
// CDP's own SDKs sign them.
const CDPTokenLifetime = 120 * time.Second

// CDPAuth signs each facilitator request with a CDP API key, as Coinbase's
// facilitator requires: Authorization: Bearer <JWT>, the JWT bound to the
// request's method, host and path and valid for CDPTokenLifetime. It holds
// the parsed private key only; printing it shows the key id and algorithm.
type CDPAuth struct {
	keyID  string
	method jwt.SigningMethod
	key    any // *ecdsa.PrivateKey (ES256) or ed25519.PrivateKey (EdDSA)
	now    func() time.Time
}

// ErrCDPKey is wrapped by every error about a CDP API key. The messages
// never quote the secret.
var ErrCDPKey = errors.New("invalid CDP API key")

// NewCDPAuth parses a CDP API key: keyID is the key's id (a UUID, or the
// older organizations/…/apiKeys/… name) and secret its private key, either a
// PEM EC P-256 key (SEC 1 or PKCS #8; ES256) or the base64 of a 64-byte
// Ed25519 private key (seed and public key; EdDSA), told apart by their form.
// A PEM key whose newlines were written as \n (as in a .env file) is
// accepted. now is the clock (nil: time.Now).
func NewCDPAuth(keyID, secret string, now func() time.Time) (*CDPAuth, error) {
	keyID = strings.TrimSpace(keyID)
	secret = strings.TrimSpace(secret)
	switch {
	case keyID == "":
		return nil, fmt.Errorf("%w: the key id is empty", ErrCDPKey)
	case !httpguts.ValidHeaderFieldValue(keyID) || strings.ContainsAny(keyID, " \t\""):
		return nil, fmt.Errorf("%w: the key id has spaces, quotes or control characters", ErrCDPKey)
	case secret == "":
		return nil, fmt.Errorf("%w: the key secret is empty", ErrCDPKey)
	}
	if now == nil {
		now = time.Now
	}
	a := &CDPAuth{keyID: keyID, now: now}
	if strings.HasPrefix(secret, "-----BEGIN") {
		k, err := parseCDPECKey(strings.ReplaceAll(secret, `\n`, "\n"))
		if err != nil {
			return nil, err
		}
		a.method, a.key = jwt.SigningMethodES256, k
		return a, nil
	}
	k, err := parseCDPEd25519Key(secret)
	if err != nil {
		return nil, err
	}
	a.method, a.key = jwt.SigningMethodEdDSA, k
	return a, nil
}

// parseCDPECKey reads a PEM EC P-256 private key (SEC 1 or PKCS #8).
func parseCDPECKey(secret string) (*ecdsa.PrivateKey, error) {
	block, rest := pem.Decode([]byte(secret))
	if block == nil || strings.TrimSpace(string(rest)) != "" {
		return nil, fmt.Errorf("%w: the secret starts like PEM but is not one PEM block", ErrCDPKey)
	}
	var key any
	var err error
	switch block.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("%w: a PEM %q block is not an EC private key", ErrCDPKey, block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: the PEM block is not a valid EC private key", ErrCDPKey)
	}
	ec, ok := key.(*ecdsa.PrivateKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, fmt.Errorf("%w: the PEM key is not an EC P-256 key (ES256)", ErrCDPKey)
	}
	return ec, nil
}

// parseCDPEd25519Key reads the base64 of a 64-byte Ed25519 private key and
// checks that its public half belongs to its seed.
func parseCDPEd25519Key(secret string) (ed25519.PrivateKey, error) {
	raw, err := base64.StdEncoding.DecodeString(secret)
	if err != nil {
		return nil, fmt.Errorf("%w: the secret is neither a PEM EC key nor base64 (an Ed25519 key)", ErrCDPKey)
	}
	if len(raw) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("%w: a base64 secret must hold a %d-byte Ed25519 private key, not %d bytes", ErrCDPKey, ed25519.PrivateKeySize, len(raw))
	}
	key := ed25519.NewKeyFromSeed(raw[:ed25519.SeedSize])
	if !key.Equal(ed25519.PrivateKey(raw)) {
		return nil, fmt.Errorf("%w: the Ed25519 key's public half does not match its seed", ErrCDPKey)
	}
	return key, nil
}

// cdpClaims are the claims of a CDP bearer token.
type cdpClaims struct {
	jwt.RegisteredClaims
	URIs []string `json:"uris"`
}

// Authorize sets Authorization: Bearer <JWT> for req.
func (a *CDPAuth) Authorize(req *http.Request) error {
	token, err := a.Token(req.Method, req.URL.Host, req.URL.EscapedPath())
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return nil
}

// Token is the JWT for one request: method, host (with its port, if the URL
// has one) and path become its uris claim ["METHOD hostpath"].
func (a *CDPAuth) Token(method, host, path string) (string, error) {
	nonce := make([]byte, 16)
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("signing the CDP token: %w", err)
	}
	now := a.now().Truncate(time.Second)
	t := jwt.NewWithClaims(a.method, cdpClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer: "cdp", Subject: a.keyID,
			NotBefore: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(CDPTokenLifetime)),
		},
		URIs: []string{method + " " + host + path},
	})
	t.Header["kid"] = a.keyID
	t.Header["typ"] = "JWT"
	t.Header["nonce"] = hex.EncodeToString(nonce)
	s, err := t.SignedString(a.key)
	if err != nil {
		// The library's errors name the method or key type, never the key.
		return "", fmt.Errorf("signing the CDP token: %w", err)
	}
	return s, nil
}

// KeyID is the API key's id (not a secret: it names the key).
func (a *CDPAuth) KeyID() string { return a.keyID }

// Algorithm is the JWS algorithm of the key: ES256 or EdDSA.
func (a *CDPAuth) Algorithm() string { return a.method.Alg() }

// String describes the key without its secret.
func (a *CDPAuth) String() string { return "CDP API key " + a.keyID + " (" + a.Algorithm() + ")" }

// Format prints a as String does, whatever the verb (%+v and %#v included),
// so that no formatting of a value holding it prints the private key.
func (a *CDPAuth) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(a.String())) }

// LogValue is a's description for log/slog.
func (a *CDPAuth) LogValue() slog.Value { return slog.StringValue(a.String()) }

// CDPKeyFile is the JSON key file that the CDP portal downloads: the key's
// id ("id"; older files have the organizations/…/apiKeys/… "name") and its
// privateKey.
type CDPKeyFile struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	PrivateKey string `json:"privateKey"`
}

// ParseCDPKeyFile reads a CDP key file's content: the key id and secret.
func ParseCDPKeyFile(data []byte) (keyID, secret string, err error) {
	var f CDPKeyFile
	if json.Unmarshal(data, &f) != nil {
		return "", "", fmt.Errorf("%w: the key file is not the JSON object CDP downloads ({\"id\": …, \"privateKey\": …})", ErrCDPKey)
	}
	keyID = f.ID
	if keyID == "" {
		keyID = f.Name
	}
	if keyID == "" || f.PrivateKey == "" {
		return "", "", fmt.Errorf("%w: the key file needs both \"id\" (or \"name\") and \"privateKey\"", ErrCDPKey)
	}
	return keyID, f.PrivateKey, nil
}
