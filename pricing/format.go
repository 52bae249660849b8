package pricing

import (
	"math"
	"strconv"
	"strings"
)

// FormatTokens writes a token count the way the dialog and the dashboard
// show it: 470, 4.5k, 839k, 1.05M. Below 10k one decimal is kept, from 1M on
// three significant digits; trailing zeros are dropped (4k, 1M).
func FormatTokens(n int64) string {
	if n < 0 {
		if n == math.MinInt64 { // it has no positive twin
			n++
		}
		return "-" + FormatTokens(-n)
	}
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 9_950:
		return trimZeros(strconv.FormatFloat(float64(n)/1e3, 'f', 1, 64)) + "k"
	case n < 999_500:
		return strconv.FormatInt((n+500)/1000, 10) + "k"
	}
	m := float64(n) / 1e6
	digits := 2
	switch {
	case m >= 99.95:
		digits = 0
	case m >= 9.995:
		digits = 1
	}
	return trimZeros(strconv.FormatFloat(m, 'f', digits, 64)) + "M"
}

func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// FormatBytes writes a size the way the commands print it, in binary
// units: 512 bytes, 12 KiB, 3.4 MiB, 1.3 GiB.
func FormatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return strconv.FormatFloat(float64(n)/(1<<30), 'f', 1, 64) + " GiB"
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	case n >= 1<<10:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 0, 64) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
