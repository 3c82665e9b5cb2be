package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// PaymentState is where a used payment stands.
type PaymentState uint8

// States of a used payment.
const (
	// PaymentUsed: used, nothing more recorded (a payment recorded before
	// states were kept).
	PaymentUsed PaymentState = iota
	// PaymentPending: taken for a request, its settlement not yet recorded.
	PaymentPending
	// PaymentSettled: the facilitator settled it; the answer is kept.
	PaymentSettled
	// PaymentUnknown: sent for settlement, but the facilitator's answer
	// never came, so whether it was charged is not known; the answer is
	// kept.
	PaymentUnknown
	// PaymentFailed: the facilitator refused to settle it; nothing was
	// charged and the answer was withheld.
	PaymentFailed
)

// String names the state.
func (s PaymentState) String() string {
	switch s {
	case PaymentPending:
		return "pending"
	case PaymentSettled:
		return "settled"
	case PaymentUnknown:
		return "unknown"
	case PaymentFailed:
		return "failed"
	}
	return "used"
}

// PaymentUse is what the store records of a used payment: the request it
// was taken for and, once settled (or sent for settlement without an
// answer), the answer kept for a retry of that request with that payment.
type PaymentUse struct {
	State PaymentState
	// RequestKey identifies the request the payment was taken for (a
	// digest chosen by the caller).
	RequestKey string
	// Since is when the state was recorded.
	Since time.Time
	// Settlement is the facilitator's settle response (JSON), when it
	// answered.
	Settlement []byte
	// Text is the MCP result's text of the kept answer ("" over REST).
	Text string
	// Answer is the kept answer, byte for byte.
	Answer []byte
}

// paymentFormat is the byte after the deadline of a payments-bucket value
// that carries a PaymentUse.
const paymentFormat = 1

// UsePayment records paymentID as used by use (normally PaymentPending,
// with the request's key), kept until expires plus PaymentRetention. first
// is false when the id was already recorded — a replay, or a retry of the
// same request — and recorded is then what the store holds for it.
func (b *Bolt) UsePayment(ctx context.Context, paymentID string, expires time.Time, use PaymentUse) (first bool, recorded PaymentUse, err error) {
	if err := ctx.Err(); err != nil {
		return false, PaymentUse{}, err
	}
	if err := checkKey("payment id", paymentID); err != nil {
		return false, PaymentUse{}, fmt.Errorf("recording payment: %w", err)
	}
	if expires.Before(minVerifiedAt) || !expires.Before(maxVerifiedAt) {
		return false, PaymentUse{}, fmt.Errorf("recording payment: %w: expiry %s out of range", ErrInvalidArgument, expires.Format(time.RFC3339))
	}
	id := []byte(paymentID)
	deadline := appendTime(nil, expires.Add(PaymentRetention).UnixNano())
	value := appendPaymentUse(bytes.Clone(deadline), use)
	err = b.write(func(tx *bolt.Tx) error {
		payments := tx.Bucket(bucketPayments)
		if old := payments.Get(id); old != nil {
			first = false
			var err error
			recorded, err = decodePaymentUse(old)
			return err
		}
		first, recorded = true, use
		if err := payments.Put(id, value); err != nil {
			return err
		}
		return tx.Bucket(bucketPaymentExp).Put(append(bytes.Clone(deadline), id...), nil)
	})
	if err != nil {
		return false, PaymentUse{}, fmt.Errorf("recording payment: %w", err)
	}
	b.maybePurge()
	return first, recorded, nil
}

// LookupPayment reads what is recorded of paymentID; found is false when
// it was never used (or its retention ended).
func (b *Bolt) LookupPayment(ctx context.Context, paymentID string) (use PaymentUse, found bool, err error) {
	if err := ctx.Err(); err != nil {
		return PaymentUse{}, false, err
	}
	if err := checkKey("payment id", paymentID); err != nil {
		return PaymentUse{}, false, fmt.Errorf("reading payment: %w", err)
	}
	err = b.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketPayments).Get([]byte(paymentID))
		if v == nil {
			return nil
		}
		found = true
		var err error
		use, err = decodePaymentUse(v)
		return err
	})
	if err != nil {
		return PaymentUse{}, false, fmt.Errorf("reading payment: %w", err)
	}
	return use, found, nil
}

// SettlePayment records the outcome of paymentID's settlement (use
// replaces what was recorded; the retention is unchanged) and, when v is
// not nil, stores the verdict of the answer in the same transaction, so a
// verdict enters reputation exactly when its paid answer is released.
func (b *Bolt) SettlePayment(ctx context.Context, paymentID string, use PaymentUse, v *Verdict) error {
	w, err := prepareSettlement(paymentID, v)
	if err != nil {
		return err
	}
	w.noLog = b.noLog
	id := []byte(paymentID)
	err = b.write(func(tx *bolt.Tx) error {
		payments := tx.Bucket(bucketPayments)
		old := payments.Get(id)
		if len(old) < 8 {
			return fmt.Errorf("%w: payment not recorded as used", ErrNotFound)
		}
		if err := payments.Put(id, appendPaymentUse(bytes.Clone(old[:8]), use)); err != nil {
			return err
		}
		if v == nil {
			return nil
		}
		return w.apply(tx)
	})
	if err != nil {
		return fmt.Errorf("recording settlement: %w", err)
	}
	return nil
}

// prepareSettlement checks a SettlePayment call's payment id and prepares
// its verdict's write (none when v is nil), for either backend.
func prepareSettlement(paymentID string, v *Verdict) (verdictWrite, error) {
	if err := checkKey("payment id", paymentID); err != nil {
		return verdictWrite{}, fmt.Errorf("recording settlement: %w", err)
	}
	if v == nil {
		return verdictWrite{}, nil
	}
	w, err := prepareVerdict(nil, *v)
	if err != nil {
		return verdictWrite{}, fmt.Errorf("recording settlement: storing verdict %s: %w", v.VerificationID, err)
	}
	return w, nil
}

// ReleasePayment forgets paymentID if it is still pending: it was taken
// for work that failed and was never sent for settlement, so the payer may
// use it again. Any other state is left as it is.
func (b *Bolt) ReleasePayment(ctx context.Context, paymentID string) error {
	if err := checkKey("payment id", paymentID); err != nil {
		return fmt.Errorf("releasing payment: %w", err)
	}
	id := []byte(paymentID)
	err := b.write(func(tx *bolt.Tx) error {
		payments := tx.Bucket(bucketPayments)
		old := payments.Get(id)
		if old == nil {
			return nil
		}
		use, err := decodePaymentUse(old)
		if err != nil || use.State != PaymentPending {
			return err
		}
		expKey := append(bytes.Clone(old[:8]), id...)
		if err := payments.Delete(id); err != nil {
			return err
		}
		return tx.Bucket(bucketPaymentExp).Delete(expKey)
	})
	if err != nil {
		return fmt.Errorf("releasing payment: %w", err)
	}
	return nil
}

// appendPaymentUse appends a payments-bucket value's tail to dst (the
// deadline): paymentFormat, the state, Since (Unix nanos), the request key,
// the settlement and the text each as a uvarint length and the bytes, then
// the answer bytes verbatim.
func appendPaymentUse(dst []byte, u PaymentUse) []byte {
	dst = append(dst, paymentFormat, byte(u.State))
	var since int64
	if !u.Since.IsZero() {
		since = u.Since.UnixNano()
	}
	dst = binary.BigEndian.AppendUint64(dst, uint64(since))
	for _, part := range [][]byte{[]byte(u.RequestKey), u.Settlement, []byte(u.Text)} {
		dst = binary.AppendUvarint(dst, uint64(len(part)))
		dst = append(dst, part...)
	}
	return append(dst, u.Answer...)
}

// decodePaymentUse reads a payments-bucket value into a PaymentUse that
// shares no memory with it. A value of the deadline alone is PaymentUsed.
func decodePaymentUse(v []byte) (PaymentUse, error) {
	bad := fmt.Errorf("%w: malformed payment record", ErrCorrupt)
	switch {
	case len(v) == 8:
		return PaymentUse{State: PaymentUsed}, nil
	case len(v) < 8+2+8 || v[8] != paymentFormat || v[9] > byte(PaymentFailed):
		return PaymentUse{}, bad
	}
	u := PaymentUse{State: PaymentState(v[9])}
	if since := int64(binary.BigEndian.Uint64(v[10:])); since != 0 {
		u.Since = time.Unix(0, since).UTC()
	}
	rest := v[18:]
	var parts [3][]byte
	for i := range parts {
		n, size := binary.Uvarint(rest)
		if size <= 0 || n > uint64(len(rest)-size) {
			return PaymentUse{}, bad
		}
		parts[i], rest = bytes.Clone(rest[size:size+int(n)]), rest[size+int(n):]
	}
	u.RequestKey, u.Settlement, u.Text = string(parts[0]), parts[1], string(parts[2])
	if len(rest) > 0 {
		u.Answer = bytes.Clone(rest)
	}
	return u, nil
}
