package pricing

import (
	"strings"
	"time"
)

// PriceWindow is a recurring time-of-day window in which every price is
// multiplied by Factor, e.g. DeepSeek's off-peak hours:
//
//	{days: [mon-fri], utc: ["00:00-01:00", "04:00-06:00", "10:00-24:00"], allDay: [sat-sun], factor: 0.5}
//
// Days lists weekdays ("mon", "sat", ranges such as "mon-fri" or "fri-mon"),
// judged in UTC; empty Days means every day. UTC lists "HH:MM-HH:MM" ranges,
// start inclusive and end exclusive, "24:00" allowed as an end, a start after
// the end wrapping past midnight; empty UTC means the whole day. AllDay lists
// further weekdays on which the window covers the whole day, so that one
// window can say "weekday evenings and all weekend".
type PriceWindow struct {
	Days   []string `json:"days"`
	UTC    []string `json:"utc"`
	Factor float64  `json:"factor"`
	AllDay []string `json:"allDay,omitempty"`
}

func (w *PriceWindow) validate() *FieldError {
	if !(w.Factor > 0) || w.Factor > 1e6 {
		return fieldErrorf("factor", "must be > 0")
	}
	for i, d := range w.Days {
		if _, _, ok := parseDays(d); !ok {
			return fieldErrorf(indexed("days", i), "%q is not a weekday or a range like mon-fri", d)
		}
	}
	for i, d := range w.AllDay {
		if _, _, ok := parseDays(d); !ok {
			return fieldErrorf(indexed("allDay", i), "%q is not a weekday or a range like sat-sun", d)
		}
	}
	for i, r := range w.UTC {
		if _, _, ok := parseClockRange(r); !ok {
			return fieldErrorf(indexed("utc", i), "%q is not a range like 10:00-24:00", r)
		}
	}
	return nil
}

// contains reports whether at falls inside the window. It allocates nothing:
// PricesAt runs once per quote and per priced request.
func (w *PriceWindow) contains(at time.Time) bool {
	t := at.UTC()
	day := t.Weekday()
	if daysContain(w.AllDay, day) {
		return true
	}
	if len(w.Days) > 0 && !daysContain(w.Days, day) {
		return false
	}
	if len(w.UTC) == 0 {
		return true
	}
	h, m, s := t.Clock()
	sec := h*3600 + m*60 + s
	for _, r := range w.UTC {
		start, end, ok := parseClockRange(r)
		if !ok {
			continue
		}
		if start < end {
			if sec >= start && sec < end {
				return true
			}
		} else if sec >= start || sec < end { // wraps past midnight
			return true
		}
	}
	return false
}

func daysContain(days []string, day time.Weekday) bool {
	for _, d := range days {
		from, to, ok := parseDays(d)
		if !ok {
			continue
		}
		if from <= to {
			if day >= from && day <= to {
				return true
			}
		} else if day >= from || day <= to {
			return true
		}
	}
	return false
}

var weekdayNames = [7]string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

func parseWeekday(s string) (time.Weekday, bool) {
	s = strings.TrimSpace(s)
	for i, name := range weekdayNames {
		if strings.EqualFold(s, name) || strings.EqualFold(s, time.Weekday(i).String()) {
			return time.Weekday(i), true
		}
	}
	return 0, false
}

// parseDays parses "mon" or "mon-fri" into an inclusive (possibly wrapping) range.
func parseDays(s string) (from, to time.Weekday, ok bool) {
	a, b, isRange := strings.Cut(s, "-")
	if from, ok = parseWeekday(a); !ok {
		return 0, 0, false
	}
	if !isRange {
		return from, from, true
	}
	if to, ok = parseWeekday(b); !ok {
		return 0, 0, false
	}
	return from, to, true
}

// parseClockRange parses "HH:MM-HH:MM" into seconds of the day.
func parseClockRange(s string) (start, end int, ok bool) {
	a, b, found := strings.Cut(s, "-")
	if !found {
		return 0, 0, false
	}
	if start, ok = parseClock(strings.TrimSpace(a)); !ok || start == 24*3600 {
		return 0, 0, false
	}
	if end, ok = parseClock(strings.TrimSpace(b)); !ok {
		return 0, 0, false
	}
	if end == 24*3600 {
		end = 0 // "x-24:00" is "x until midnight"
		if start == 0 {
			return 0, 24 * 3600, true // the whole day
		}
	}
	if start == end {
		return 0, 0, false // empty
	}
	return start, end, true
}

func parseClock(s string) (int, bool) {
	if len(s) != 5 || s[2] != ':' {
		return 0, false
	}
	d := func(c byte) int { return int(c - '0') }
	for _, i := range []int{0, 1, 3, 4} {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	h, m := d(s[0])*10+d(s[1]), d(s[3])*10+d(s[4])
	if m > 59 || h > 24 || (h == 24 && m != 0) {
		return 0, false
	}
	return h*3600 + m*60, true
}
