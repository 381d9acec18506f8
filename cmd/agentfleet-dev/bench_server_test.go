package main

import (
	"strings"
	"testing"
)

func TestParsePostmasterPID(t *testing.T) {
	const file = "22535\n/tmp/pgb/data\n1795828809\n55432\n/tmp/pgb\nlocalhost\n  9995052         6\nready   \n"
	pid, err := parsePostmasterPID(file, 1795828809)
	if err != nil || pid != 22535 {
		t.Fatalf("parsePostmasterPID = %d, %v; want 22535", pid, err)
	}
	for _, c := range []struct{ file, want string }{
		{file, "another server"}, // started at another time
		{"22535\n/tmp/pgb/data\n", "fewer than three lines"},
		{"x\n/tmp/pgb/data\n1795828809\n", "not a process id"},
		{"22535\n/tmp/pgb/data\nsoon\n", "not a start time"},
	} {
		_, err := parsePostmasterPID(c.file, 1795828800)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parsePostmasterPID(%q) = %v, want an error saying %q", c.file, err, c.want)
		}
	}
}
