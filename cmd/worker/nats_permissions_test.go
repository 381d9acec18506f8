package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/natsauth"
)

// `worker nats-permissions --tenants team-a` prints a block nats-server
// reads back as the pool's permissions; a bad tenant is a usage error.
func TestNATSPermissionsPrintsAPoolsBlock(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := execute(context.Background(), []string{"nats-permissions", "--tenants", "team-a"}, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	conf := "authorization {\n  users: [\n    {\n      user: u\n      password: pw\n      " + out.String() + "\n    }\n  ]\n}\n"
	path := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("nats-server cannot read:\n%s\n%v", conf, err)
	}
	want, err := queue.PermissionsFor(queue.Config{}, queue.RoleWorker, "team-a")
	if err != nil {
		t.Fatal(err)
	}
	if len(opts.Users) != 1 || !reflect.DeepEqual(opts.Users[0].Permissions, natsauth.Server(want)) {
		t.Fatalf("read back %+v, want the pool's %+v", opts.Users[0].Permissions, natsauth.Server(want))
	}
	if !strings.Contains(out.String(), `"agentfleet.control.team-a.*"`) || strings.Contains(out.String(), `"agentfleet.control.>"`) {
		t.Fatalf("the pool's block does not limit control to team-a:\n%s", out.String())
	}
	errOut.Reset()
	if code := execute(context.Background(), []string{"nats-permissions", "--tenants", "a.*"}, nil, &out, &errOut); code != 2 ||
		!strings.Contains(errOut.String(), "tenant") {
		t.Fatalf("a bad tenant: exit %d, %q; want a usage error naming the tenant", code, errOut.String())
	}
}
