package tools

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/internal/ijson"
	"github.com/verifier-dev/verifier/signing"
)

// ReceiptReport says which checks of a receipt held; Valid only when all did.
type ReceiptReport = signing.ReceiptReport

// CheckReceipt verifies a receipt offline: its signature under keys and,
// when request is not nil, that the receipt's hashes are those of request
// and that re-running the verification reproduces its verdict and counts.
// The report lists every check; the error joins the ones that failed.
func (s *Service) CheckReceipt(receipt, request []byte, keys signing.KeyResolver) (*ReceiptReport, error) {
	report, sigErr := signing.VerifyReceipt(receipt, keys)
	if request == nil {
		return report, sigErr
	}
	errs := []error{sigErr}
	add := func(name string, ok bool, detail string) {
		report.Checks = append(report.Checks, signing.Check{Name: name, OK: ok, Detail: detail})
		if !ok {
			errs = append(errs, fmt.Errorf("%s: %s", name, detail))
			report.Valid = false
		}
	}
	fields, err := receiptFields(receipt)
	if err != nil {
		add("receipt_fields", false, err.Error())
		return report, errors.Join(errs...)
	}
	req, err := s.Engine.DecodeRequest(request)
	if err != nil {
		add("request", false, "the request does not decode: "+err.Error())
		return report, errors.Join(errs...)
	}
	hashes, err := s.Engine.Hashes(req, signing.HashCanonical)
	if err != nil {
		add("request", false, "the request cannot be canonicalized")
		return report, errors.Join(errs...)
	}
	for _, h := range []struct{ name, got string }{
		{"output_hash", hashes.Output}, {"schema_hash", hashes.Schema},
		{"rules_hash", hashes.Rules}, {"request_hash", hashes.Request},
	} {
		want, present := fields[h.name].(string)
		if !present {
			if h.name != "request_hash" { // compact receipts carry no request_hash
				add(h.name, false, "the receipt has no "+h.name)
			}
			continue
		}
		add(h.name, want == h.got, matchDetail(h.name, want == h.got))
	}
	out, err := s.Engine.Check(req, hashes.Schema)
	if err != nil {
		add("verdict", false, "the request cannot be re-verified: "+err.Error())
		return report, errors.Join(errs...)
	}
	result, _ := fields["result"].(string)
	add("verdict", result == out.Result(), fmt.Sprintf("re-running the verification gives %q, the receipt says %q", out.Result(), result))
	for _, r := range []struct {
		name string
		got  engine.Ratio
	}{{"schema_compliance", out.Schema}, {"integrity_checks", out.Integrity}, {"overall", out.Overall}} {
		want, present := fields[r.name].(map[string]any)
		if !present {
			continue // compact receipts carry no ratios
		}
		ok := numberIs(want["passed"], r.got.Passed) && numberIs(want["total"], r.got.Total)
		add(r.name, ok, fmt.Sprintf("re-run counts %d/%d", r.got.Passed, r.got.Total))
	}
	if report.Valid {
		return report, nil
	}
	return report, errors.Join(errs...)
}

func matchDetail(name string, ok bool) string {
	if ok {
		return "recomputed from the request: matches"
	}
	return "recomputed from the request: differs (the receipt is for another " + name[:len(name)-5] + ")"
}

func receiptFields(receipt []byte) (map[string]any, error) {
	v, err := ijson.Decode(receipt, nil)
	if err != nil {
		return nil, fmt.Errorf("the receipt is not I-JSON: %w", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("the receipt is not a JSON object")
	}
	return m, nil
}

func numberIs(v any, want int) bool {
	n, ok := v.(json.Number)
	return ok && string(n) == fmt.Sprint(want)
}
