package dev_test

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentfleet/agentfleet/fleet/dev"
	"github.com/agentfleet/agentfleet/queue"
)

// Dev mode's NATS server refuses a client without credentials, or with a
// made-up password; the credentials it wrote for the observer connect and
// may read the default tenant's events only; the worker's may not answer
// approvals.
func TestDevModeNATSRequiresCredentials(t *testing.T) {
	fl := startDev(t, dev.Config{})
	for _, opts := range [][]nats.Option{nil, {nats.UserInfo("worker", "guess")}} {
		nc, err := nats.Connect(fl.NATSURL(), append(opts, nats.MaxReconnects(0))...)
		if err == nil {
			nc.Close()
			t.Fatal("dev mode's NATS accepted a client without its credentials")
		}
		if !errors.Is(err, nats.ErrAuthorization) {
			t.Fatalf("connecting without credentials: %v, want an authorization error", err)
		}
	}
	user, password := readCredentials(t, filepath.Join(fl.DataDir(), "nats-auth", "observer.env"))
	if u, p := fl.NATSUser(queue.RoleObserver); u != user || p != password || p == "" {
		t.Fatalf("observer.env holds %q/%q, NATSUser says %q/%q", user, password, u, p)
	}
	if info, err := os.Stat(filepath.Join(fl.DataDir(), "nats-auth", "observer.env")); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("observer.env: %v, mode %v; want 0600", err, info.Mode())
	}
	nc, err := nats.Connect(fl.NATSURL(), nats.UserInfo(user, password), nats.PermissionErrOnSubscribe(true))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	mine, err := nc.SubscribeSync("agentfleet.events.default.>")
	if err != nil {
		t.Fatal(err)
	}
	other, err := nc.SubscribeSync("agentfleet.events.team-b.>")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.NextMsg(30 * time.Second); !errors.Is(err, nats.ErrPermissionViolation) {
		t.Fatalf("observer subscribing to another tenant: %v, want a permission violation", err)
	}
	if _, err := mine.NextMsg(10 * time.Millisecond); !errors.Is(err, nats.ErrTimeout) {
		t.Fatalf("observer's own tenant: %v, want a live subscription", err)
	}
	wuser, wpass := fl.NATSUser(queue.RoleWorker)
	wc, err := nats.Connect(fl.NATSURL(), nats.UserInfo(wuser, wpass))
	if err != nil {
		t.Fatal(err)
	}
	defer wc.Close()
	if _, err := wc.Request("agentfleet.control.approvals", []byte(`{"op":"approve","task_id":"t","call_id":"c"}`), time.Second); err == nil {
		t.Fatal("a worker's approval was answered")
	}
}

func readCredentials(t *testing.T, path string) (user, password string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		switch k {
		case "AGENTFLEET_NATS_USER":
			user = v
		case "AGENTFLEET_NATS_PASSWORD":
			password = v
		}
	}
	return user, password
}
