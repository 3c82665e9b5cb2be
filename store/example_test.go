package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/verifier-dev/verifier/store"
)

func Example() {
	dir, err := os.MkdirTemp("", "store-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	s, err := store.OpenBolt(filepath.Join(dir, "verifier.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	ctx := context.Background()
	at := time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)
	for i, result := range []string{"pass", "pass", "fail"} {
		err := s.PutVerdict(ctx, store.Verdict{
			VerificationID: fmt.Sprintf("00000000-0000-4000-8000-00000000000%d", i),
			TaskID:         "invoice-42",
			AgentID:        "seller-7",
			Result:         result,
			VerifiedAt:     at.Add(time.Duration(i) * time.Hour),
			KeyVersion:     "v1-2026-11a",
			Receipt:        json.RawMessage(`{"result":"` + result + `"}`),
		})
		if err != nil {
			log.Fatal(err)
		}
	}

	rep, err := s.Reputation(ctx, "seller-7", store.Page{Limit: 2})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("total %d, passed %d, pass rate %.3f, newest %s, more: %v\n",
		rep.Total, rep.Passed, rep.PassRate, rep.Recent[0].Result, rep.NextCursor != "")

	sc, err := s.Score(ctx, "seller-7", at.Add(24*time.Hour))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("score %.2f, interval [%.2f, %.2f]\n", sc.Score, sc.Interval[0], sc.Interval[1])

	r, err := s.Receipt(ctx, "00000000-0000-4000-8000-000000000000")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(r.Receipt))
	// Output:
	// total 3, passed 2, pass rate 0.667, newest fail, more: true
	// score 20.47, interval [20.47, 93.94]
	// {"result":"pass"}
}
