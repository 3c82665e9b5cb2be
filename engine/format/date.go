package format

import (
	"regexp"
	"strings"
	"time"
)

// validDate checks an RFC 3339 full-date: YYYY-MM-DD with a day that exists.
func validDate(s string) bool {
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
}

// timePattern is an RFC 3339 full-time: HH:MM:SS, an optional fraction and
// an offset, Z or ±HH:MM. Its groups are the hour and minute, a leap
// second's 60, and the offset.
var timePattern = regexp.MustCompile(
	`^((?:[01]\d|2[0-3]):[0-5]\d):(?:[0-5]\d|(60))(?:\.\d+)?([Zz]|[+-](?:[01]\d|2[0-3]):[0-5]\d)$`)

// validTime checks an RFC 3339 full-time. A leap second (:60) is allowed
// only where it is 23:59 UTC.
func validTime(s string) bool {
	m := timePattern.FindStringSubmatch(s)
	if m == nil || m[2] == "" {
		return m != nil
	}
	t, err := time.Parse("15:04Z07:00", m[1]+strings.ToUpper(m[3]))
	return err == nil && t.UTC().Format("15:04") == "23:59"
}

// validDateTime checks an RFC 3339 date-time; T and Z may be lower case.
func validDateTime(s string) bool {
	return len(s) > 11 && (s[10] == 'T' || s[10] == 't') && validDate(s[:10]) && validTime(s[11:])
}

// durationPattern is the duration grammar of RFC 3339 appendix A: date
// units in Y M D order without gaps, an optional T with time units in H M S
// order without gaps, or weeks alone. Values are whole numbers.
var durationPattern = func() *regexp.Regexp {
	date := `(?:\d+Y(?:\d+M(?:\d+D)?)?|\d+M(?:\d+D)?|\d+D)`
	time := `(?:T(?:\d+H(?:\d+M(?:\d+S)?)?|\d+M(?:\d+S)?|\d+S))`
	return regexp.MustCompile(`^P(?:` + date + time + `?|` + time + `|\d+W)$`)
}()

func validDuration(s string) bool { return durationPattern.MatchString(s) }
