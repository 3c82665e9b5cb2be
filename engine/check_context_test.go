package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/engine/schema"
)

// TestCheckContext checks that a request deadline reaches the schema
// evaluation: a schema whose 2^32 applications (hours of work) the raised
// step limit allows stops soon after the deadline with the context's
// error, not an *InvalidRequestError, and a cancelled context stops it at
// once.
func TestCheckContext(t *testing.T) {
	var defs []string
	for i := range 32 {
		defs = append(defs, fmt.Sprintf(`"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i+1, i+1))
	}
	body := `{"task_id":"t","expected_schema":{"$defs":{` + strings.Join(defs, ",") + `,"d32":{"type":"integer"}},"$ref":"#/$defs/d0"},"submitted_output":1}`
	v := New(&Options{Schema: schema.Options{MaxSteps: 1 << 40}})
	req, err := v.DecodeRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"cancelled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, context.Canceled},
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 50*time.Millisecond)
		}, context.DeadlineExceeded},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := tt.ctx()
			defer cancel()
			start := time.Now()
			_, err := v.CheckContext(ctx, req, "")
			var invalid *InvalidRequestError
			if !errors.Is(err, tt.want) || errors.As(err, &invalid) {
				t.Errorf("CheckContext = %v, want an error wrapping %v", err, tt.want)
			}
			// A wide margin, far short of the work, keeps a loaded
			// machine from failing the test.
			if took := time.Since(start); took > 5*time.Second*raceSlowdown {
				t.Errorf("CheckContext returned after %v, want soon after the deadline", took)
			}
		})
	}
}
