package bytesize

import "testing"

func TestParseAndFormat(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		out  string
	}{
		{"", 0, "0 bytes"},
		{"1000", 1000, "1000 bytes"},
		{"256MiB", 256 << 20, "256MiB"},
		{"4GiB", 4 << 30, "4GiB"},
		{"4G", 4 << 30, "4GiB"},
		{" 1.5 GiB ", 3 << 29, "1536MiB"},
		{"2GB", 2e9, "1953125KiB"},
	} {
		got, err := Parse(c.in)
		if err != nil || got != c.want || Format(got) != c.out {
			t.Errorf("Parse(%q) = %d, %v, formatted %q; want %d, %q", c.in, got, err, Format(got), c.want, c.out)
		}
	}
	for _, bad := range []string{"-1", "4 gigs", "GiB", "1e30GiB", "1.5.5K"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) passed", bad)
		}
	}
}
