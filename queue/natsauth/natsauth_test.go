package natsauth_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/natsauth"
)

// What Conf writes, nats-server reads back as exactly Server's
// permissions, for every role.
func TestConfReadsBackAsServerPermissions(t *testing.T) {
	for name, u := range testUsers {
		p, err := queue.PermissionsFor(queue.Config{Prefix: "af", TasksStream: "T"}, u.role, u.tenants...)
		if err != nil {
			t.Fatal(err)
		}
		conf := "authorization {\n  users: [\n    {\n      user: u\n      password: pw\n      " + natsauth.Conf(p, "      ") + "\n    }\n  ]\n}\n"
		path := filepath.Join(t.TempDir(), "nats.conf")
		if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		opts, err := server.ProcessConfigFile(path)
		if err != nil {
			t.Fatalf("%s: nats-server cannot read:\n%s\n%v", name, conf, err)
		}
		if len(opts.Users) != 1 || !reflect.DeepEqual(opts.Users[0].Permissions, natsauth.Server(p)) {
			t.Fatalf("%s: read back %+v, want %+v", name, opts.Users[0].Permissions, natsauth.Server(p))
		}
	}
}

// PermissionsFor refuses what would be a mistake, saying what to do.
func TestPermissionsForRefusesMistakes(t *testing.T) {
	for _, c := range []struct {
		role    queue.Role
		tenants []string
		want    string
	}{
		{queue.RoleObserver, nil, "at least one tenant"},
		{queue.RoleObserver, []string{"a.>"}, "tenant"},
		{queue.RoleDispatcher, []string{"a"}, "serves every tenant"},
		{queue.RoleWorker, []string{"a.>"}, "tenant"},
		{"admin", nil, "must be dispatcher, worker or observer"},
	} {
		if _, err := queue.PermissionsFor(queue.Config{}, c.role, c.tenants...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("PermissionsFor(%s, %v) = %v, want an error saying %q", c.role, c.tenants, err, c.want)
		}
	}
}
