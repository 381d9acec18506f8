package cli

import "testing"

func TestSQLitePath(t *testing.T) {
	cases := map[string]string{
		"sqlite:///var/lib/a.db": "/var/lib/a.db", "sqlite:rel.db": "rel.db", "file:x.db?mode=rwc": "x.db", "plain.db": "plain.db",
	}
	for url, want := range cases {
		if got, ok := SQLitePath(url); !ok || got != want {
			t.Errorf("SQLitePath(%q) = %q, %v; want %q", url, got, ok, want)
		}
	}
	for _, url := range []string{"postgres://h/db", "postgresql://h/db", "host=h dbname=db"} {
		if _, ok := SQLitePath(url); ok {
			t.Errorf("%q taken for a SQLite file", url)
		}
	}
}
