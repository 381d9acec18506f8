package dev

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/embedded"
	"github.com/agentfleet/agentfleet/queue/natsauth"
)

// natsRoles are the users dev mode's NATS server accepts: the in-process
// dispatcher and workers, and an observer of the default tenant for a
// program that watches events.
var natsRoles = []queue.Role{queue.RoleDispatcher, queue.RoleWorker, queue.RoleObserver}

// startNATS starts the embedded server, which accepts only the users made
// here, with random passwords and the shipped permissions
// (queue.PermissionsFor): a client without credentials is refused. Each
// user's credentials are also written to <DataDir>/nats-auth/<role>.env
// (mode 0600), as AGENTFLEET_NATS_USER and AGENTFLEET_NATS_PASSWORD lines, for
// a worker or observer in another process; a restart writes new ones.
func (d *Fleet) startNATS() error {
	d.natsUsers = map[queue.Role]embedded.User{}
	var users []embedded.User
	for _, role := range natsRoles {
		var tenants []string
		if role == queue.RoleObserver {
			tenants = []string{fleet.DefaultTenant}
		}
		perms, err := queue.PermissionsFor(queue.Config{}, role, tenants...)
		if err != nil {
			return fmt.Errorf("dev mode: NATS permissions of %s: %w", role, err)
		}
		u := embedded.User{Name: string(role), Password: natsauth.RandomPassword(), Permissions: perms}
		d.natsUsers[role] = u
		users = append(users, u)
	}
	if err := writeNATSCredentials(filepath.Join(d.cfg.DataDir, "nats-auth"), users); err != nil {
		return err
	}
	var err error
	d.nats, err = embedded.Start(embedded.Config{Port: d.cfg.NATSPort, DataDir: filepath.Join(d.cfg.DataDir, "nats"), Users: users})
	if err != nil {
		return fmt.Errorf("dev mode: %w", err)
	}
	return nil
}

func writeNATSCredentials(dir string, users []embedded.User) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("dev mode: NATS credentials directory: %w", err)
	}
	for _, u := range users {
		body := fmt.Sprintf("AGENTFLEET_NATS_USER=%s\nAGENTFLEET_NATS_PASSWORD=%s\n", u.Name, u.Password)
		if err := os.WriteFile(filepath.Join(dir, u.Name+".env"), []byte(body), 0o600); err != nil {
			return fmt.Errorf("dev mode: writing the NATS credentials of %s: %w", u.Name, err)
		}
	}
	return nil
}

// NATSUser returns the NATS user name and password dev mode made at start
// for role (dispatcher, worker, or observer of the default tenant); both
// are "" for another role. They are also in <DataDir>/nats-auth/<role>.env.
func (d *Fleet) NATSUser(role queue.Role) (name, password string) {
	u := d.natsUsers[role]
	return u.Name, u.Password
}
