package queue

import (
	"strings"
	"testing"
)

func TestServerVersionCheck(t *testing.T) {
	for _, tc := range []struct {
		version string
		ok      bool
	}{
		{"2.9.25", false}, // Debian 12's: ignores a term's reason
		{"2.2.0", false},
		{"1.4.1", false},
		{"garbage", false},
		{"2.10.0", true},
		{"2.11.0-RC.1", true},
		{"2.15.2", true},
		{"v3.0.0", true},
		{"", true}, // not connected: nothing to check yet
	} {
		err := checkServerVersion(tc.version)
		if (err == nil) != tc.ok {
			t.Errorf("checkServerVersion(%q) = %v, want ok %v", tc.version, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), MinServerVersion) {
			t.Errorf("error %q does not name the version needed", err)
		}
	}
}
