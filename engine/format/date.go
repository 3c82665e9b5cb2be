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

// validTime checks an RFC 3339 full-time: HH:MM:SS[.frac] and an offset
// (Z or ±HH:MM). A leap second (:60) is allowed only where it is 23:59 UTC.
func validTime(s string) bool {
	if len(s) < 9 || s[2] != ':' || s[5] != ':' {
		return false
	}
	hour, ok1 := twoDigits(s[0:2])
	minute, ok2 := twoDigits(s[3:5])
	second, ok3 := twoDigits(s[6:8])
	if !ok1 || !ok2 || !ok3 || hour > 23 || minute > 59 || second > 60 {
		return false
	}
	rest := s[8:]
	if strings.HasPrefix(rest, ".") {
		n := countDigits(rest[1:])
		if n == 0 {
			return false
		}
		rest = rest[1+n:]
	}
	offset := 0 // minutes east of UTC
	switch {
	case rest == "Z" || rest == "z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, ok1 := twoDigits(rest[1:3])
		om, ok2 := twoDigits(rest[4:6])
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return false
		}
		offset = oh*60 + om
		if rest[0] == '-' {
			offset = -offset
		}
	default:
		return false
	}
	if second == 60 {
		utc := ((hour*60+minute-offset)%1440 + 1440) % 1440
		return utc == 23*60+59
	}
	return true
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

// countDigits returns how many ASCII digits s starts with.
func countDigits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// twoDigits parses s, two bytes, as two ASCII digits.
func twoDigits(s string) (int, bool) {
	return int(s[0]-'0')*10 + int(s[1]-'0'), isDigit(s[0]) && isDigit(s[1])
}
