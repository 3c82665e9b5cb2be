package store

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Reputation returns the agent's counters and one page of its recent
// verdicts, newest first: O(1) for the counters and O(q.Limit) for the page,
// however long the history. Test agents and unknown agents have an empty
// record.
func (b *Bolt) Reputation(ctx context.Context, agentID string, q Page) (Reputation, error) {
	limit, after, err := reputationQuery(ctx, agentID, q)
	if err != nil {
		return Reputation{}, err
	}
	r := Reputation{AgentID: agentID, Recent: []VerdictSummary{}}
	err = b.db.View(func(tx *bolt.Tx) error {
		agg, err := b.loadAggregate(tx, agentID)
		if err != nil || agg.total == 0 {
			return err
		}
		r.Total, r.Passed, r.Failed = int(agg.total), int(agg.passed), int(agg.failed)
		r.PassRate = float64(agg.passed) / float64(agg.total)
		r.FirstSeen, r.LastSeen = timePtr(agg.first), timePtr(agg.last)
		var next []byte
		if r.Recent, next, err = listRecent(tx, agentID, after, limit); err != nil {
			return err
		}
		if next != nil {
			r.NextCursor = base64.RawURLEncoding.EncodeToString(next)
		}
		return nil
	})
	if err != nil {
		return Reputation{}, fmt.Errorf("reading reputation of %q: %w", agentID, err)
	}
	return r, nil
}

// reputationQuery checks a Reputation call, for either backend: the
// caller still waits, the agent id is not too long, and q is a valid page
// (its limit and the key to read after).
func reputationQuery(ctx context.Context, agentID string, q Page) (limit int, after []byte, err error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, err
	}
	if len(agentID) > maxIDLen {
		return 0, nil, fmt.Errorf("reading reputation: %w: agent id longer than %d bytes", ErrInvalidArgument, maxIDLen)
	}
	if limit, after, err = parsePage(q); err != nil {
		return 0, nil, fmt.Errorf("reading reputation of %q: %w", agentID, err)
	}
	return limit, after, nil
}

// parsePage applies the paging defaults and decodes the cursor into the
// time key (see timeKey) the page starts below; nil for the first page.
func parsePage(q Page) (limit int, after []byte, err error) {
	switch {
	case q.Limit < 0:
		return 0, nil, fmt.Errorf("%w: negative limit", ErrInvalidPage)
	case q.Limit == 0:
		limit = DefaultPageLimit
	default:
		limit = min(q.Limit, MaxPageLimit)
	}
	if q.Cursor == "" {
		return limit, nil, nil
	}
	after, err = base64.RawURLEncoding.DecodeString(q.Cursor)
	if err != nil || len(after) <= 8 || len(after) > 8+maxIDLen {
		return 0, nil, fmt.Errorf("%w: malformed cursor", ErrInvalidPage)
	}
	return limit, after, nil
}

// loadAggregate reads the agent's counters; the zero aggregate for test
// agents, the empty agent and agents never seen.
func (b *Bolt) loadAggregate(tx *bolt.Tx, agentID string) (aggregate, error) {
	if agentID == "" || IsTestAgent(agentID) {
		return aggregate{}, nil
	}
	return decodeAggregate(tx.Bucket(bucketAgents).Get([]byte(agentID)))
}

// listRecent returns up to limit summaries of the agent's verdicts, newest
// first, starting below the time key after (nil: from the newest). next is
// the time key of the last summary returned when more remain, else nil.
func listRecent(tx *bolt.Tx, agentID string, after []byte, limit int) (recent []VerdictSummary, next []byte, err error) {
	prefix := agentPrefix(agentID)
	c := tx.Bucket(bucketAgentTime).Cursor()
	var k, v []byte
	if after != nil {
		k, v = seekBelow(c, append(bytes.Clone(prefix), after...))
	} else {
		k, v = seekBelow(c, successor(prefix))
	}
	recent = make([]VerdictSummary, 0, limit)
	var last []byte // time key of the last summary appended; valid until the tx ends
	for ; k != nil && bytes.HasPrefix(k, prefix); k, v = c.Prev() {
		if len(recent) == limit {
			return recent, bytes.Clone(last), nil
		}
		s, err := decodeSummary(k[len(prefix):], v)
		if err != nil {
			return nil, nil, err
		}
		recent = append(recent, s)
		last = k[len(prefix):]
	}
	return recent, nil, nil
}

// seekBelow positions c on the greatest key strictly below bound (a nil
// bound means past the end) and returns it.
func seekBelow(c *bolt.Cursor, bound []byte) ([]byte, []byte) {
	if bound == nil {
		return c.Last()
	}
	if k, _ := c.Seek(bound); k == nil {
		return c.Last()
	}
	return c.Prev()
}

// successor returns the least key greater than every key with the prefix p,
// or nil when there is none (p is all 0xff).
func successor(p []byte) []byte {
	s := bytes.Clone(p)
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] < 0xff {
			s[i]++
			return s[:i+1]
		}
	}
	return nil
}
