// Package bytesize reads and writes sizes such as "512MiB" and "4GiB":
// the one parser for sizes in configuration and specs (sandbox memory
// limits).
package bytesize

import (
	"fmt"
	"strconv"
	"strings"
)

// units are the suffixes Parse knows: K, M, G, T and KiB, MiB, GiB, TiB
// are powers of 1024; KB, MB, GB, TB powers of 1000; B or none bytes.
var units = map[string]float64{"": 1, "B": 1, "K": 1 << 10, "KiB": 1 << 10, "M": 1 << 20, "MiB": 1 << 20,
	"G": 1 << 30, "GiB": 1 << 30, "T": 1 << 40, "TiB": 1 << 40, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}

// Parse reads a size: a number of bytes, or a number with a unit (see
// units). "" is 0; a negative size or an unknown unit is an error.
func Parse(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := s, ""
	if i >= 0 {
		num, unit = strings.TrimSpace(s[:i]), strings.TrimSpace(s[i:])
	}
	mult, ok := units[unit]
	f, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || f < 0 || f*mult >= 1<<63 {
		return 0, fmt.Errorf("size %q must be a number of bytes, or one with a unit such as 512MiB or 4GiB", s)
	}
	return int64(f * mult), nil
}

// Format writes n in the largest binary unit that divides it ("4GiB"),
// or as bytes ("1000 bytes").
func Format(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d%s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}
