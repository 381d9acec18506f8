package fleettest

import (
	"errors"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/natsauth"
	"github.com/agentfleet/agentfleet/queue/natstest"
)

// restrictedPassword is every user's password in a Restricted fleet (the
// server listens on loopback for one test).
const restrictedPassword = "fleettest"

// startNATS starts the fleet's server: open to anyone, or with Restricted
// one user per role (named after it) with the shipped permissions.
func (f *Fleet) startNATS(t testing.TB) *natstest.Server {
	if !f.opts.Restricted {
		return natstest.Start(t)
	}
	opts := natstest.Options(t.TempDir())
	add := func(name string, role queue.Role, tenants ...string) {
		p, err := queue.PermissionsFor(f.opts.Queue, role, tenants...)
		if err != nil {
			t.Fatal(err)
		}
		opts.Users = append(opts.Users, &server.User{Username: name, Password: restrictedPassword, Permissions: natsauth.Server(p)})
	}
	add(string(queue.RoleDispatcher), queue.RoleDispatcher)
	add(string(queue.RoleWorker), queue.RoleWorker)
	for _, pool := range f.opts.Pools {
		add(poolUser(pool), queue.RoleWorker, pool...)
	}
	for _, tenant := range f.opts.Observers {
		p, err := queue.PermissionsFor(f.opts.Queue, queue.RoleObserver, tenant)
		if err != nil {
			t.Fatal(err)
		}
		opts.Users = append(opts.Users, &server.User{Username: ObserverUser(tenant), Password: restrictedPassword, Permissions: natsauth.Server(p)})
	}
	return natstest.StartWithOptions(t, opts)
}

// ObserverUser is the NATS user of a Restricted fleet's observer of
// tenant (Options.Observers).
func ObserverUser(tenant string) string { return "observer-" + tenant }

// ConnectAs opens a connection to a Restricted fleet's NATS server as
// user: a role's name (queue.RoleDispatcher, queue.RoleWorker) or
// ObserverUser. opts come after the credentials (an ErrorHandler of the
// caller's sees its own permission violations). The test's cleanup
// closes it.
func (f *Fleet) ConnectAs(t testing.TB, user string, opts ...nats.Option) *nats.Conn {
	t.Helper()
	if !f.opts.Restricted {
		t.Fatal("fleettest: ConnectAs needs a Restricted fleet (its server has users)")
	}
	return f.NATS.Connect(t, append([]nats.Option{nats.UserInfo(user, restrictedPassword)}, opts...)...)
}

// poolUser is the NATS user of a worker serving tenants: "worker" for
// every tenant, else worker-<tenants joined by '+'>.
func poolUser(tenants []string) string {
	if len(tenants) == 0 {
		return string(queue.RoleWorker)
	}
	return string(queue.RoleWorker) + "-" + strings.Join(tenants, "+")
}

// connect opens a connection as role's user (Restricted) or without
// credentials, recording permission violations.
func (f *Fleet) connect(t testing.TB, role queue.Role) *nats.Conn {
	return f.connectAs(t, string(role))
}

// connectAs is connect as the named user.
func (f *Fleet) connectAs(t testing.TB, user string) *nats.Conn {
	if !f.opts.Restricted {
		return f.NATS.Connect(t)
	}
	return f.NATS.Connect(t, nats.UserInfo(user, restrictedPassword),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			if errors.Is(err, nats.ErrPermissionViolation) {
				f.mu.Lock()
				f.violations = append(f.violations, err)
				f.mu.Unlock()
			}
		}))
}

// PermissionViolations returns what the server refused the harness's or
// a worker's connection so far (Restricted fleets; nil otherwise).
func (f *Fleet) PermissionViolations() []error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]error(nil), f.violations...)
}
