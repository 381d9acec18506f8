package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/store/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// run executes the dispatcher with args and returns its exit status and output.
func run(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	code := execute(context.Background(), args, strings.NewReader(""), &out, &out)
	return code, out.String()
}

func migrateUpStatusDown(t *testing.T, url string) {
	steps := []struct {
		args []string
		want string
	}{
		{[]string{"migrate", "status"}, "pending"},
		{[]string{"migrate", "up"}, "up   00001"},
		{[]string{"migrate", "up"}, "already up to date"},
		{[]string{"migrate", "status"}, "00001_initial.sql"},
		{[]string{"migrate", "down"}, "down 00008"},
		{[]string{"migrate", "down"}, "down 00007"},
		{[]string{"migrate", "down"}, "down 00006"},
		{[]string{"migrate", "down"}, "down 00005"},
		{[]string{"migrate", "down"}, "down 00004"},
		{[]string{"migrate", "down"}, "down 00003"},
		{[]string{"migrate", "down"}, "down 00002"},
		{[]string{"migrate", "down"}, "down 00001"},
		{[]string{"migrate", "down", "--to", "0"}, "nothing to roll back"},
		{[]string{"migrate", "up"}, "up   00001"},
	}
	for _, s := range steps {
		code, out := run(t, append(s.args, "--database-url", url)...)
		if code != 0 || !strings.Contains(out, s.want) {
			t.Fatalf("%v: exit %d, output %q, want %q", s.args, code, out, s.want)
		}
	}
}

func TestMigrateSQLite(t *testing.T) {
	migrateUpStatusDown(t, "sqlite://"+filepath.Join(t.TempDir(), "fleet.db"))
}

func TestMigratePostgres(t *testing.T) {
	migrateUpStatusDown(t, pgtest.NewEmptyDatabase(t))
}

func TestMigrateFromEnvironment(t *testing.T) {
	t.Setenv(EnvDatabaseURL, filepath.Join(t.TempDir(), "env.db"))
	if code, out := run(t, "migrate", "up"); code != 0 || !strings.Contains(out, "up   00001") {
		t.Fatalf("exit %d: %s", code, out)
	}
}

func TestMigrateBadUsage(t *testing.T) {
	t.Setenv(EnvDatabaseURL, "")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"migrate", "up"}, 2, "--database-url"},
		{[]string{"migrate", "up", "extra", "--database-url", "x.db"}, 2, "unexpected arguments"},
		{[]string{"migrate", "up", "--database-url", "/no/such/dir/x.db"}, 1, "does not exist"},
		{[]string{"migrate", "status", "--database-url", "postgres://nobody@127.0.0.1:1/x?connect_timeout=2"}, 1, "cannot reach"},
	}
	for _, c := range cases {
		code, out := run(t, c.args...)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d %q, want exit %d mentioning %q", c.args, code, out, c.code, c.want)
		}
	}
}
