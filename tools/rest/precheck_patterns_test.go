package rest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/verifier-dev/verifier/engine/schema"
	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// heavyPatternRequest is a valid verification request whose schema has n
// distinct patterns whose programs are thousands of instructions each:
// within the patterns' limits, and megabytes and tens of milliseconds to
// compile.
func heavyPatternRequest(variant, n int) []byte {
	props := make([]string, n)
	for i := range props {
		props[i] = fmt.Sprintf(`"p%d":{"type":"string","pattern":"^[a-z]{1,450}[0-9]{1,450}x{%d}y{%d}$"}`, i, i+1, variant+1)
	}
	return fmt.Appendf(nil, `{"task_id":"t","expected_schema":{"type":"object","properties":{%s}},"submitted_output":{"p0":"ab12xy"}}`,
		strings.Join(props, ","))
}

// unpaidRefusalAlloc bounds what one unpaid request of a few kilobytes
// refused with a 402 (or a 422 before any payment step) may allocate in
// the server: its body read and decoded, its schema checked, the refusal
// written — linear in the body, not what compiling its patterns would
// take (megabytes).
const unpaidRefusalAlloc = 1 << 20

// TestUnpaidRefusalCompilesNoPattern sends, with payments on and no free
// calls, requests whose schemas' patterns would take megabytes to compile:
// unpaid, with a malformed payment, and over the patterns' limit. Each is refused (402, or 422 for the one over the limit, still
// before any payment step) having compiled no pattern, cached nothing and
// allocated little. Before, the check that runs before the payment step
// compiled the whole schema into the cache: six such 402s held 1.6 GiB.
// Paid, the same request is served, its patterns compiled by the work.
func TestUnpaidRefusalCompilesNoPattern(t *testing.T) {
	fac := &testkit.FakeFacilitator{}
	fac.SettleOK.Store(true)
	fs := httptest.NewServer(fac)
	defer fs.Close()
	ts, svc := paymentServer(t, payment.Config{FreePerDay: -1, PayToEVM: testkit.TestPayToEVM, FacilitatorURL: fs.URL, Network: payment.Testnet})

	// a first valid call compiles what every call needs (the meta-schemas)
	warm := testkit.ReadTestdata(t, "invoice-pass.json")
	if res := do(t, "POST", ts.URL+"/verify/schema", warm, ""); res.status != http.StatusPaymentRequired {
		t.Fatalf("warm-up: %d, want 402", res.status)
	}
	tooLarge := []byte(`{"task_id":"t","expected_schema":{"pattern":"^(?:[a-z]{1,1000}){1,1000}$"},"submitted_output":"a"}`)
	calls := []struct {
		name string
		body []byte
		sig  string
		want int
	}{
		{"unpaid 1", heavyPatternRequest(1, 18), "", http.StatusPaymentRequired},
		{"unpaid 2", heavyPatternRequest(2, 18), "", http.StatusPaymentRequired},
		{"unpaid 3", heavyPatternRequest(3, 18), "", http.StatusPaymentRequired},
		{"unpaid 4", heavyPatternRequest(4, 18), "", http.StatusPaymentRequired},
		{"a malformed payment", heavyPatternRequest(5, 18), "not-a-payment", http.StatusPaymentRequired},
		{"over the patterns' limit", heavyPatternRequest(6, 60), "", http.StatusUnprocessableEntity},
		{"too large a pattern", tooLarge, "", http.StatusUnprocessableEntity},
	}
	before := schema.CompiledPatternUnits()
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	for _, c := range calls {
		res := do(t, "POST", ts.URL+"/verify/schema", c.body, c.sig)
		if res.status != c.want {
			t.Errorf("%s: %d %v, want %d", c.name, res.status, res.body, c.want)
		}
		if c.want == http.StatusUnprocessableEntity {
			if msg := fmt.Sprint(res.body); res.body["code"] != tools.CodeInvalidRequest || !strings.Contains(msg, "too large") {
				t.Errorf("%s: %v, want the too-large refusal", c.name, res.body)
			}
		}
	}
	runtime.ReadMemStats(&m1)
	if n := schema.CompiledPatternUnits() - before; n != 0 {
		t.Errorf("refusing unpaid requests compiled %d units of patterns", n)
	}
	if n := svc.Engine.CachedSchemas(); n != 0 {
		t.Errorf("refusing unpaid requests cached %d schemas", n)
	}
	alloc := (m1.TotalAlloc - m0.TotalAlloc) / uint64(len(calls))
	t.Logf("%d KiB allocated per refusal", alloc>>10)
	if testkit.RaceSlowdown == 1 && alloc > unpaidRefusalAlloc {
		t.Errorf("an unpaid refusal allocated %d KiB, want at most %d", alloc>>10, unpaidRefusalAlloc>>10)
	}
	if v := fac.Verifies.Load(); v != 0 {
		t.Errorf("the facilitator verified %d payments, want none", v)
	}

	// paid, the heavy request is served: the work compiles its patterns
	body := heavyPatternRequest(1, 18)
	pay := payFor(t, do(t, "POST", ts.URL+"/verify/schema", body, ""))
	if res := do(t, "POST", ts.URL+"/verify/schema", body, pay); res.status != http.StatusOK {
		t.Fatalf("paid: %d %v", res.status, res.body)
	}
	if schema.CompiledPatternUnits() == before || svc.Engine.CachedSchemas() != 1 {
		t.Errorf("the paid call compiled %d units and cached %d schemas", schema.CompiledPatternUnits()-before, svc.Engine.CachedSchemas())
	}
}
