package engine

import "time"

// timeValue is an instant read from an ISO 8601 date (midnight UTC) or an
// RFC 3339 date-time.
type timeValue struct{ t time.Time }

// parseTime reads a date (2026-01-31) or a date-time (2026-01-31T12:00:00Z,
// with an offset or fractional seconds).
func parseTime(s string) (timeValue, bool) {
	if len(s) == len("2006-01-02") {
		t, err := time.Parse("2006-01-02", s)
		return timeValue{t}, err == nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return timeValue{t}, err == nil
}

func (l *Limit) after(other *Limit) bool {
	if l.IsTime {
		return l.Time.t.After(other.Time.t)
	}
	return l.Number > other.Number
}
