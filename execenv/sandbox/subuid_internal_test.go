package sandbox

import "testing"

// /etc/subuid names a user by name or uid; the first range of two or more
// ids is taken, malformed lines and other users' are skipped.
func TestParseSubIDs(t *testing.T) {
	content := "root:1:5\nagent:x:10\nother:100000:65536\nagent:300000:1\n1002:165536:65536\nagent:231072:65536\n"
	for _, c := range []struct {
		name string
		id   int
		want subRange
		ok   bool
	}{
		{"agent", 1001, subRange{231072, 65536}, true},   // malformed and too small ranges skipped
		{"redteam", 1002, subRange{165536, 65536}, true}, // by uid
		{"nobody", 65534, subRange{}, false},
	} {
		got, ok := parseSubIDs(content, c.name, c.id)
		if got != c.want || ok != c.ok {
			t.Errorf("%s (%d): %+v %v, want %+v %v", c.name, c.id, got, ok, c.want, c.ok)
		}
	}
}
