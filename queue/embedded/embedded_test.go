package embedded_test

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/embedded"
)

func TestMain(m *testing.M) { testenv.VerifyTestMain(m) }

func start(t *testing.T, cfg embedded.Config) *embedded.Server {
	t.Helper()
	s, err := embedded.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown() })
	return s
}

func TestStartServesJetStreamAndShutsDownTwice(t *testing.T) {
	s := start(t, embedded.Config{Port: embedded.RandomPort, DataDir: t.TempDir()})
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if !s.NATS().JetStreamEnabled() {
		t.Fatal("JetStream not enabled")
	}
	nc.Close()
	if err := s.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if err := s.Shutdown(); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
}

func TestStartRefusesALockedDataDir(t *testing.T) {
	dir := t.TempDir()
	start(t, embedded.Config{Port: embedded.RandomPort, DataDir: dir})
	_, err := embedded.Start(embedded.Config{Port: embedded.RandomPort, DataDir: dir})
	if err == nil || !strings.Contains(err.Error(), "in use by another process") {
		t.Fatalf("second Start on the same data dir = %v", err)
	}
}

func TestStartRefusesATakenPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	port := l.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	_, err = embedded.Start(embedded.Config{Port: port, DataDir: dir})
	if err == nil || !strings.Contains(err.Error(), "cannot listen on") {
		t.Fatalf("Start on a taken port = %v", err)
	}
	// The failed start released the data dir.
	start(t, embedded.Config{Port: embedded.RandomPort, DataDir: dir})
}

func TestConfigValidateNamesTheField(t *testing.T) {
	_, err := embedded.Start(embedded.Config{Port: 70000})
	if err == nil || !strings.Contains(err.Error(), "Config.DataDir") || !strings.Contains(err.Error(), "Config.Port") {
		t.Fatalf("Start with bad config = %v", err)
	}
}

func TestRestartFindsStreamsAgain(t *testing.T) {
	dir := t.TempDir()
	for round := range 2 {
		s := start(t, embedded.Config{Port: embedded.RandomPort, DataDir: dir})
		nc, err := nats.Connect(s.ClientURL())
		if err != nil {
			t.Fatal(err)
		}
		js, err := nc.JetStream()
		if err != nil {
			t.Fatal(err)
		}
		if round == 0 {
			if _, err := js.AddStream(&nats.StreamConfig{Name: "KEEP", Subjects: []string{"keep"}}); err != nil {
				t.Fatal(err)
			}
			if _, err := js.Publish("keep", []byte("x")); err != nil {
				t.Fatal(err)
			}
		} else if info, err := js.StreamInfo("KEEP"); err != nil || info.State.Msgs != 1 {
			t.Fatalf("after restart: %+v, %v", info, err)
		}
		nc.Close()
		if err := s.Shutdown(); err != nil {
			t.Fatal(err)
		}
	}
}

// With Users the server accepts only them, each within its permissions.
func TestUsersAreRequiredAndRestricted(t *testing.T) {
	perms, err := queue.PermissionsFor(queue.Config{}, queue.RoleObserver, "team-a")
	if err != nil {
		t.Fatal(err)
	}
	s := start(t, embedded.Config{Port: embedded.RandomPort, DataDir: t.TempDir(),
		Users: []embedded.User{{Name: "obs", Password: "secret-pw", Permissions: perms}}})
	if nc, err := nats.Connect(s.ClientURL(), nats.MaxReconnects(0)); err == nil {
		nc.Close()
		t.Fatal("a client without credentials was accepted")
	} else if !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("without credentials: %v, want an authorization error", err)
	}
	nc, err := nats.Connect(s.ClientURL(), nats.UserInfo("obs", "secret-pw"), nats.PermissionErrOnSubscribe(true))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sub, err := nc.SubscribeSync("agentfleet.events.team-b.>")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sub.NextMsg(30 * time.Second); !errors.Is(err, nats.ErrPermissionViolation) {
		t.Fatalf("subscribing outside its permissions: %v, want a permission violation", err)
	}
	if _, err := embedded.Start(embedded.Config{Port: embedded.RandomPort, DataDir: t.TempDir(), Users: []embedded.User{{Name: "x"}}}); err == nil ||
		!strings.Contains(err.Error(), "Users[0] needs a Name and a Password") {
		t.Fatalf("a user without a password: %v", err)
	}
}
