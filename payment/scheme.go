package payment

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"strings"
	"time"
)

// Bounds on how long a used payment id is remembered.
const (
	// maxReplayWindow caps an EVM authorization's validBefore: past it the
	// chain itself refuses the spent nonce.
	maxReplayWindow = 366 * 24 * time.Hour
	// svmReplayWindow is how long a Solana transaction is remembered: far
	// longer than a blockhash stays valid (about a minute).
	svmReplayWindow = 15 * time.Minute
)

// checkScheme checks the signed payload against the requirement it claims
// to pay, before the facilitator is asked: the recipient and amount signed
// must be the ones offered. It returns the payment's replay id, how long
// the id must be remembered, and a reason ("" when the checks pass).
func checkScheme(p *PaymentPayload, req PaymentRequirements, now time.Time) (id string, expires time.Time, reason string) {
	if strings.HasPrefix(req.Network, "eip155:") {
		return checkEVM(p, req, now)
	}
	return checkSVM(p, req, now)
}

func checkEVM(p *PaymentPayload, req PaymentRequirements, now time.Time) (string, time.Time, string) {
	var pl EVMPayload
	if err := json.Unmarshal(p.Payload, &pl); err != nil {
		return "", time.Time{}, "invalid_exact_evm_payload"
	}
	a := pl.Authorization
	if !isHex(pl.Signature, 0) || !isHex(a.From, 20) || !isHex(a.To, 20) || !isHex(a.Nonce, 32) {
		return "", time.Time{}, "invalid_exact_evm_payload"
	}
	value, ok1 := uint256(a.Value)
	_, ok2 := uint256(a.ValidAfter)
	validBefore, ok3 := uint256(a.ValidBefore)
	if !ok1 || !ok2 || !ok3 {
		return "", time.Time{}, "invalid_exact_evm_payload"
	}
	if !sameEVMAddress(a.To, req.PayTo) {
		return "", time.Time{}, "invalid_exact_evm_recipient_mismatch"
	}
	if amount, _ := new(big.Int).SetString(req.Amount, 10); value.Cmp(amount) != 0 {
		return "", time.Time{}, "invalid_exact_evm_payload_authorization_value_mismatch"
	}
	if validBefore.Cmp(big.NewInt(now.Unix())) <= 0 {
		return "", time.Time{}, "invalid_exact_evm_payload_authorization_valid_before"
	}
	expires := now.Add(maxReplayWindow)
	if validBefore.Cmp(big.NewInt(expires.Unix())) < 0 {
		expires = time.Unix(validBefore.Int64(), 0)
	}
	id := "evm:" + req.Network + ":" + strings.ToLower(a.From) + ":" + strings.ToLower(a.Nonce)
	return id, expires, ""
}

func checkSVM(p *PaymentPayload, req PaymentRequirements, now time.Time) (string, time.Time, string) {
	var pl SVMPayload
	if err := json.Unmarshal(p.Payload, &pl); err != nil || pl.Transaction == "" {
		return "", time.Time{}, "invalid_exact_svm_payload"
	}
	tx, err := base64.StdEncoding.DecodeString(pl.Transaction)
	if err != nil || len(tx) == 0 {
		return "", time.Time{}, "invalid_exact_svm_payload"
	}
	sum := sha256.Sum256(tx)
	return "svm:" + req.Network + ":" + hex.EncodeToString(sum[:]), now.Add(svmReplayWindow), ""
}

// isHex reports whether s is 0x followed by n bytes of hex (any non-zero
// number of bytes when n is 0).
func isHex(s string, n int) bool {
	if !strings.HasPrefix(s, "0x") || len(s) == 2 || len(s)%2 != 0 {
		return false
	}
	if n > 0 && len(s) != 2+2*n {
		return false
	}
	_, err := hex.DecodeString(s[2:])
	return err == nil
}

// uint256 parses a decimal uint256 without sign or leading zeros (other
// than "0" itself).
func uint256(s string) (*big.Int, bool) {
	if s == "" || len(s) > 78 || !allDigits(s) || (len(s) > 1 && s[0] == '0') {
		return nil, false
	}
	n, ok := new(big.Int).SetString(s, 10)
	if !ok || n.BitLen() > 256 {
		return nil, false
	}
	return n, true
}
