package main

// The binary carries Mozilla's CA roots (through Go's x509roots/fallback),
// used only where the system has none: the release image is FROM scratch,
// with no /etc/ssl, and still reaches the x402 facilitator over HTTPS.
import _ "golang.org/x/crypto/x509roots/fallback"
