package deploy

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"gopkg.in/yaml.v3"

	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/natsauth"
)

// shippedUsers are the NATS users the shipped configurations define, each
// with the role (and tenants) whose permissions queue.PermissionsFor gives.
var shippedUsers = map[string]struct {
	role    queue.Role
	tenants []string
}{
	"dispatcher":       {queue.RoleDispatcher, nil},
	"worker":           {queue.RoleWorker, nil},
	"observer-default": {queue.RoleObserver, []string{"default"}},
}

func wantPermissions(t *testing.T, user string) queue.Permissions {
	t.Helper()
	u, ok := shippedUsers[user]
	if !ok {
		t.Fatalf("unexpected NATS user %q", user)
	}
	p, err := queue.PermissionsFor(queue.Config{}, u.role, u.tenants...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestNATSConfPermissions: each shipped nats.conf (compose's and the
// plain-Linux one), as nats-server reads it, gives every user of the
// AGENTFLEET account exactly the permissions of its role, and takes every
// password from the environment.
func TestNATSConfPermissions(t *testing.T) {
	for _, v := range []string{"NATS_SERVER_NAME", "NATS_DISPATCHER_PASSWORD", "NATS_WORKER_PASSWORD", "NATS_OBSERVER_DEFAULT_PASSWORD", "NATS_SYS_PASSWORD"} {
		t.Setenv(v, "from-env-"+v)
	}
	for v, val := range map[string]string{"NATS_PORT": "4222", "NATS_HTTP_PORT": "8222", "NATS_CLUSTER_PORT": "6222", "NATS_STORE_DIR": t.TempDir()} {
		t.Setenv(v, val) // deploy/linux/nats-N.env
	}
	for _, path := range []string{filepath.Join("nats", "nats.conf"), filepath.Join("linux", "nats.conf")} {
		t.Run(path, func(t *testing.T) { checkNATSConfUsers(t, path) })
	}
}

func checkNATSConfUsers(t *testing.T, path string) {
	opts, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("nats-server cannot read %s: %v", path, err)
	}
	seen := map[string]bool{}
	for _, u := range opts.Users {
		if u.Username == "sys" {
			continue
		}
		seen[u.Username] = true
		if u.Password != "from-env-NATS_"+envName(u.Username)+"_PASSWORD" {
			t.Errorf("nats.conf: user %s's password is not $NATS_%s_PASSWORD", u.Username, envName(u.Username))
		}
		want := natsauth.Server(wantPermissions(t, u.Username))
		if !reflect.DeepEqual(u.Permissions, want) {
			t.Errorf("nats.conf: user %s's permissions differ from queue.PermissionsFor; replace its block with:\n%s",
				u.Username, natsauth.Conf(wantPermissions(t, u.Username), "        "))
		}
	}
	for name := range shippedUsers {
		if !seen[name] {
			t.Errorf("nats.conf has no user %s", name)
		}
	}
}

// envName is the password variable's middle part of a user:
// observer-default -> OBSERVER_DEFAULT.
func envName(user string) string {
	out := []byte(user)
	for i, c := range out {
		switch {
		case c == '-':
			out[i] = '_'
		case c >= 'a' && c <= 'z':
			out[i] = c - 'a' + 'A'
		}
	}
	return string(out)
}

// helmPermissions is a user's permissions as the Helm values write them.
type helmPermissions struct {
	Publish        *helmRules `yaml:"publish"`
	Subscribe      *helmRules `yaml:"subscribe"`
	AllowResponses bool       `yaml:"allow_responses"`
}

type helmRules struct {
	Allow []string `yaml:"allow"`
	Deny  []string `yaml:"deny"`
}

// TestHelmValuesPermissions: the Helm values give the same users the same
// permissions as nats.conf (both from queue.PermissionsFor).
func TestHelmValuesPermissions(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("nats", "helm-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values struct {
		Config struct {
			Merge struct {
				Accounts map[string]struct {
					Users []struct {
						User        string           `yaml:"user"`
						Password    string           `yaml:"password"`
						Permissions *helmPermissions `yaml:"permissions"`
					} `yaml:"users"`
				} `yaml:"accounts"`
			} `yaml:"merge"`
		} `yaml:"config"`
	}
	if err := yaml.Unmarshal(b, &values); err != nil {
		t.Fatal(err)
	}
	users := values.Config.Merge.Accounts["AGENTFLEET"].Users
	if len(users) != len(shippedUsers) {
		t.Fatalf("helm values: %d users in AGENTFLEET, want %d", len(users), len(shippedUsers))
	}
	for _, u := range users {
		want := wantPermissions(t, u.User)
		if u.Permissions == nil {
			t.Fatalf("helm values: user %s has no permissions", u.User)
		}
		got := queue.Permissions{AllowResponses: u.Permissions.AllowResponses}
		if r := u.Permissions.Publish; r != nil {
			got.Publish = queue.SubjectRules{Allow: r.Allow, Deny: r.Deny}
		}
		if r := u.Permissions.Subscribe; r != nil {
			got.Subscribe = queue.SubjectRules{Allow: r.Allow, Deny: r.Deny}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("helm values: user %s's permissions differ from queue.PermissionsFor", u.User)
		}
		if u.Password != "<< $"+envName(u.User)+"_PASSWORD >>" {
			t.Errorf("helm values: user %s's password %q is not from its secret", u.User, u.Password)
		}
	}
}
