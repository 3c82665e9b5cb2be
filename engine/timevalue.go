package engine

import "time"

// parseTime reads an instant from an ISO 8601 date (2026-01-31, midnight
// UTC) or an RFC 3339 date-time (2026-01-31T12:00:00Z, with an offset or
// fractional seconds).
func parseTime(s string) (time.Time, bool) {
	layout := time.RFC3339Nano
	if len(s) == len("2006-01-02") {
		layout = "2006-01-02"
	}
	t, err := time.Parse(layout, s)
	return t, err == nil
}
