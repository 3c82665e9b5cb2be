package payment

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// testCDPKey is a CDP API key made for a test: the secret as CDP hands it
// out, and the public half that checks its tokens.
type testCDPKey struct {
	name   string
	secret string
	alg    string
	pub    any // *ecdsa.PublicKey or ed25519.PublicKey
}

func ecTestKey(t *testing.T) (*ecdsa.PrivateKey, testCDPKey) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}))
	return k, testCDPKey{name: "EC P-256 (SEC 1 PEM)", secret: pemKey, alg: "ES256", pub: &k.PublicKey}
}

func edTestKey(t *testing.T) testCDPKey {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return testCDPKey{name: "Ed25519 (base64)", secret: base64.StdEncoding.EncodeToString(priv), alg: "EdDSA", pub: pub}
}

// testCDPKeys are one key of each kind CDP issues, and the forms an
// operator may paste them in.
func testCDPKeys(t *testing.T) []testCDPKey {
	ec, sec1 := ecTestKey(t)
	der, err := x509.MarshalPKCS8PrivateKey(ec)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8 := testCDPKey{name: "EC P-256 (PKCS #8 PEM)", alg: "ES256", pub: &ec.PublicKey,
		secret: string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))}
	escaped := testCDPKey{name: "EC P-256 (PEM with \\n escapes)", alg: "ES256", pub: &ec.PublicKey,
		secret: strings.ReplaceAll(sec1.secret, "\n", `\n`)}
	return []testCDPKey{sec1, pkcs8, escaped, edTestKey(t)}
}

// jwtParts is a compact JWS taken apart, checked by hand (crypto/ecdsa and
// crypto/ed25519, not the library that signed it).
type jwtParts struct {
	header map[string]any
	claims map[string]any
}

// checkJWT verifies token's signature with pub and returns its header and
// claims.
func checkJWT(t *testing.T, token string, alg string, pub any) (jwtParts, error) {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return jwtParts{}, fmt.Errorf("%d parts, want 3", len(parts))
	}
	var out jwtParts
	for i, dst := range []*map[string]any{&out.header, &out.claims} {
		raw, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			return jwtParts{}, fmt.Errorf("part %d: %v", i, err)
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			return jwtParts{}, fmt.Errorf("part %d: %v", i, err)
		}
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return jwtParts{}, fmt.Errorf("signature: %v", err)
	}
	input := []byte(parts[0] + "." + parts[1])
	switch alg {
	case "ES256":
		digest := sha256.Sum256(input)
		if len(sig) != 64 {
			return jwtParts{}, fmt.Errorf("ES256 signature of %d bytes, want 64 (r‖s)", len(sig))
		}
		r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
		if !ecdsa.Verify(pub.(*ecdsa.PublicKey), digest[:], r, s) {
			return jwtParts{}, errors.New("ES256 signature does not verify")
		}
	case "EdDSA":
		if !ed25519.Verify(pub.(ed25519.PublicKey), input, sig) {
			return jwtParts{}, errors.New("EdDSA signature does not verify")
		}
	}
	return out, nil
}

// seenRequest is what a test facilitator saw of one request.
type seenRequest struct {
	method, host, path, auth string
	header                   http.Header
}

// authFacilitator is an httptest facilitator under /platform/v2/x402 that
// records each request and answers /verify, /settle and /supported.
func authFacilitator(t *testing.T, supported string) (*httptest.Server, func() []seenRequest) {
	t.Helper()
	var mu sync.Mutex
	var seen []seenRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, seenRequest{r.Method, r.Host, r.URL.Path, r.Header.Get("Authorization"), r.Header.Clone()})
		mu.Unlock()
		switch r.URL.Path {
		case "/platform/v2/x402/verify":
			fmt.Fprint(w, `{"isValid":true,"payer":"0x1"}`)
		case "/platform/v2/x402/settle":
			fmt.Fprint(w, `{"success":true,"transaction":"0xab","network":"eip155:84532"}`)
		case "/platform/v2/x402/supported":
			fmt.Fprint(w, supported)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() []seenRequest {
		mu.Lock()
		defer mu.Unlock()
		return append([]seenRequest(nil), seen...)
	}
}

const testnetSupported = `{"kinds":[{"x402Version":2,"scheme":"exact","network":"eip155:84532"}]}`

// TestCDPAuthToken: every call to the facilitator carries a bearer JWT as
// CDP documents it, checked here without the signing library: the header
// (alg from the key's kind, kid, typ, a fresh nonce), the claims (iss cdp,
// sub the key id, a 120 s lifetime from now) and uris naming that very
// request's method, host and path; the signature verifies with the key's
// public half and not with another key.
func TestCDPAuthToken(t *testing.T) {
	const keyID = "5e1f3c2a-8d9b-4e7f-a1b2-c3d4e5f60718"
	p := &PaymentPayload{Raw: json.RawMessage(`{"x402Version":2}`)}
	_, other := ecTestKey(t)
	otherEd := edTestKey(t)
	for _, k := range testCDPKeys(t) {
		t.Run(k.name, func(t *testing.T) {
			srv, seen := authFacilitator(t, testnetSupported)
			auth, err := NewCDPAuth(keyID, k.secret, nil)
			if err != nil {
				t.Fatal(err)
			}
			if auth.Algorithm() != k.alg {
				t.Fatalf("algorithm = %s, want %s", auth.Algorithm(), k.alg)
			}
			f := &Facilitator{URL: srv.URL + "/platform/v2/x402", Timeout: 5 * time.Second, Auth: auth}
			before := time.Now().Add(-time.Second)
			ctx := context.Background()
			if _, err := f.Verify(ctx, p, PaymentRequirements{}); err != nil {
				t.Fatal(err)
			}
			if _, err := f.Settle(ctx, p, PaymentRequirements{}); err != nil {
				t.Fatal(err)
			}
			if _, err := f.Supported(ctx); err != nil {
				t.Fatal(err)
			}
			after := time.Now().Add(time.Second)
			reqs := seen()
			if len(reqs) != 3 {
				t.Fatalf("%d requests, want 3", len(reqs))
			}
			nonces := map[string]bool{}
			for _, r := range reqs {
				token, ok := strings.CutPrefix(r.auth, "Bearer ")
				if !ok {
					t.Fatalf("%s %s: Authorization = %q, want a bearer token", r.method, r.path, r.auth)
				}
				jwt, err := checkJWT(t, token, k.alg, k.pub)
				if err != nil {
					t.Fatalf("%s %s: %v", r.method, r.path, err)
				}
				wrong := other.pub
				if k.alg == "EdDSA" {
					wrong = otherEd.pub
				}
				if _, err := checkJWT(t, token, k.alg, wrong); err == nil {
					t.Fatalf("%s %s: the token verifies with another key", r.method, r.path)
				}
				h, c := jwt.header, jwt.claims
				if h["alg"] != k.alg || h["kid"] != keyID || h["typ"] != "JWT" {
					t.Errorf("header = %v, want alg %s, kid %s, typ JWT", h, k.alg, keyID)
				}
				nonce, _ := h["nonce"].(string)
				if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(nonce) || nonces[nonce] {
					t.Errorf("nonce %q: want 32 fresh hex digits", nonce)
				}
				nonces[nonce] = true
				if c["iss"] != "cdp" || c["sub"] != keyID {
					t.Errorf("claims = %v, want iss cdp, sub %s", c, keyID)
				}
				nbf, _ := c["nbf"].(float64)
				exp, _ := c["exp"].(float64)
				if exp-nbf != 120 || nbf < float64(before.Unix()) || nbf > float64(after.Unix()) {
					t.Errorf("nbf %v, exp %v: want nbf = now and exp = nbf + 120", nbf, exp)
				}
				want := []any{r.method + " " + r.host + r.path}
				if diff := cmp.Diff(want, c["uris"]); diff != "" {
					t.Errorf("uris (-want +got):\n%s", diff)
				}
			}
			if reqs[0].path != "/platform/v2/x402/verify" || reqs[1].path != "/platform/v2/x402/settle" || reqs[2].method != "GET" {
				t.Errorf("requests = %+v", reqs)
			}
		})
	}
}

// TestCDPAuthExpiry: a token's lifetime runs from the clock's now
// (whole seconds) for CDPTokenLifetime.
func TestCDPAuthExpiry(t *testing.T) {
	k := edTestKey(t)
	now := time.Date(2026, 12, 1, 21, 0, 7, 900_000_000, time.UTC)
	auth, err := NewCDPAuth("key-1", k.secret, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	token, err := auth.Token("POST", "api.cdp.coinbase.com", "/platform/v2/x402/settle")
	if err != nil {
		t.Fatal(err)
	}
	jwt, err := checkJWT(t, token, "EdDSA", k.pub)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"iss": "cdp", "sub": "key-1", "nbf": float64(now.Unix()), "exp": float64(now.Unix() + 120),
		"uris": []any{"POST api.cdp.coinbase.com/platform/v2/x402/settle"}}
	if diff := cmp.Diff(want, jwt.claims); diff != "" {
		t.Errorf("claims (-want +got):\n%s", diff)
	}
}

// TestCDPKeyRefused: secrets that are not a CDP key are refused with a
// message that says what is wrong and never quotes the secret.
func TestCDPKeyRefused(t *testing.T) {
	_, ec := ecTestKey(t)
	ed := edTestKey(t)
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p384DER, _ := x509.MarshalECPrivateKey(p384)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rsaDER, _ := x509.MarshalPKCS8PrivateKey(rsaKey)
	edRaw, _ := base64.StdEncoding.DecodeString(ed.secret)
	mismatched := append(append([]byte(nil), edRaw[:32]...), bytes.Repeat([]byte{7}, 32)...)
	tests := []struct {
		name, id, secret, want string
	}{
		{"no id", "", ed.secret, "key id is empty"},
		{"id with a space", "my key", ed.secret, "spaces"},
		{"no secret", "k", "  ", "secret is empty"},
		{"not base64", "k", "sk_live_not/a*key", "neither a PEM EC key nor base64"},
		{"32-byte seed only", "k", base64.StdEncoding.EncodeToString(edRaw[:32]), "not 32 bytes"},
		{"public half does not match", "k", base64.StdEncoding.EncodeToString(mismatched), "does not match its seed"},
		{"P-384", "k", string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: p384DER})), "P-256"},
		{"RSA", "k", string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: rsaDER})), "P-256"},
		{"certificate", "k", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1}})), "not an EC private key"},
		{"PEM and junk", "k", ec.secret + "junk", "not one PEM block"},
		{"truncated PEM", "k", ec.secret[:len(ec.secret)/2], "not one PEM block"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewCDPAuth(tt.id, tt.secret, nil)
			if !errors.Is(err, ErrCDPKey) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want ErrCDPKey about %q", err, tt.want)
			}
			if s := strings.TrimSpace(tt.secret); s != "" && strings.Contains(err.Error(), s) {
				t.Errorf("the error quotes the secret: %v", err)
			}
		})
	}
}

// TestCDPAuthPrintsNoSecret: formatting the key with any verb, inside a
// Config, or logging it shows the key id and algorithm only.
func TestCDPAuthPrintsNoSecret(t *testing.T) {
	ec, k := ecTestKey(t)
	auth, err := NewCDPAuth("key-1", k.secret, nil)
	if err != nil {
		t.Fatal(err)
	}
	headers, err := ParseStaticHeaders([]string{"X-Api-Key: $KEY"}, func(string) string { return "hdr-secret-value" })
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{FacilitatorAuth: Authorizers{headers, auth}}
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, nil)).Info("x", "auth", auth, "cfg", cfg, "headers", headers)
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("x", "auth", auth, "headers", headers)
	out := fmt.Sprintf("%v %+v %#v %s %q %v %+v %#v", auth, auth, auth, auth, auth, cfg, cfg, cfg) + buf.String()
	raw, err := ec.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	d := new(big.Int).SetBytes(raw) // the private scalar, as printed digits would show it
	for _, secret := range []string{k.secret, d.String(), d.Text(16), "hdr-secret-value", "MHcCAQEE"} {
		if strings.Contains(out, secret) {
			t.Fatalf("printed output holds a secret:\n%s", out)
		}
	}
	if !strings.Contains(out, "CDP API key key-1 (ES256)") || !strings.Contains(out, "headers X-Api-Key") {
		t.Errorf("printed output does not describe the credentials:\n%s", out)
	}
}

func TestParseCDPKeyFile(t *testing.T) {
	tests := []struct {
		name, file, wantID, wantSecret, wantErr string
	}{
		{"current form", `{"id":"5e1f","privateKey":"c2VjcmV0"}`, "5e1f", "c2VjcmV0", ""},
		{"older form", `{"name":"organizations/o/apiKeys/k","privateKey":"-----BEGIN EC PRIVATE KEY-----\nX\n-----END EC PRIVATE KEY-----\n"}`,
			"organizations/o/apiKeys/k", "-----BEGIN EC PRIVATE KEY-----\nX\n-----END EC PRIVATE KEY-----\n", ""},
		{"no private key", `{"id":"5e1f"}`, "", "", "needs both"},
		{"no id", `{"privateKey":"c2VjcmV0"}`, "", "", "needs both"},
		{"two lines", "5e1f\nc2VjcmV0\n", "", "", "not the JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, secret, err := ParseCDPKeyFile([]byte(tt.file))
			if tt.wantErr != "" {
				if !errors.Is(err, ErrCDPKey) || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "c2VjcmV0") {
					t.Errorf("error = %v, want ErrCDPKey about %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || id != tt.wantID || secret != tt.wantSecret {
				t.Errorf("= %q, %q, %v", id, secret, err)
			}
		})
	}
}
