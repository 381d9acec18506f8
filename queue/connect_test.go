package queue_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/natstest"
)

func TestConnectWithUserPassword(t *testing.T) {
	opts := natstest.Options(t.TempDir())
	opts.Username, opts.Password = "fleet", "s3cret"
	srv := natstest.StartWithOptions(t, opts)
	nc, err := queue.Connect(queue.ConnectOptions{URL: srv.URL, User: "fleet", Password: "s3cret", Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	_, err = queue.Connect(queue.ConnectOptions{URL: srv.URL, User: "fleet", Password: "wrong"})
	if err == nil || !strings.Contains(err.Error(), "credentials") {
		t.Fatalf("wrong password: %v", err)
	}
}

func TestConnectWithToken(t *testing.T) {
	opts := natstest.Options(t.TempDir())
	opts.Authorization = "tok-123"
	srv := natstest.StartWithOptions(t, opts)
	nc, err := queue.Connect(queue.ConnectOptions{URL: srv.URL, Token: "tok-123"})
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
}

func TestConnectOptionsValidate(t *testing.T) {
	dir := t.TempDir()
	seed := filepath.Join(dir, "seed.nk")
	if err := os.WriteFile(seed, []byte("not a seed"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		o    queue.ConnectOptions
		want string
	}{
		{"two methods", queue.ConnectOptions{Token: "t", CredsFile: seed}, "only one of"},
		{"user without password", queue.ConnectOptions{User: "u"}, "User and Password"},
		{"cert without key", queue.ConnectOptions{TLSCertFile: seed}, "TLSCertFile and TLSKeyFile"},
		{"missing creds file", queue.ConnectOptions{CredsFile: filepath.Join(dir, "nope.creds")}, "ConnectOptions.CredsFile"},
		{"bad seed", queue.ConnectOptions{NKeySeedFile: seed}, "NKeySeedFile"},
	}
	for _, tc := range cases {
		_, err := queue.Connect(tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Connect = %v, want error mentioning %q", tc.name, err, tc.want)
		}
	}
	if _, err := queue.Connect(queue.ConnectOptions{URL: "nats://127.0.0.1:1", StartupWait: -1}); err == nil || !strings.Contains(err.Error(), "agentfleet-dev dev") {
		t.Errorf("unreachable server: %v", err)
	}
}

// A server that is not up yet when the program starts (NATS started with
// the fleet, or restarting) is waited for, and each wait is reported.
func TestConnectWaitsForAServerStartingLate(t *testing.T) {
	srv := natstest.Start(t)
	srv.Shutdown()
	var waits atomic.Int32
	restarted := make(chan error, 1)
	nc, err := queue.Connect(queue.ConnectOptions{URL: srv.URL, StartupWait: 30 * time.Second,
		OnWait: func(error, time.Duration) {
			if waits.Add(1) == 1 {
				go func() { restarted <- srv.Restart() }()
			}
		}})
	if err != nil {
		t.Fatalf("Connect to a server that came up while it waited: %v", err)
	}
	nc.Close()
	if waits.Load() == 0 {
		t.Fatal("the first attempt, while the server was down, was not reported")
	}
	if err := <-restarted; err != nil { // before the cleanup shuts it down
		t.Fatal(err)
	}
}

func TestConnectWithNKeySeedFile(t *testing.T) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := kp.Seed()
	pub, _ := kp.PublicKey()
	file := filepath.Join(t.TempDir(), "user.nk")
	if err := os.WriteFile(file, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	opts := natstest.Options(t.TempDir())
	opts.Nkeys = []*server.NkeyUser{{Nkey: pub}}
	srv := natstest.StartWithOptions(t, opts)
	nc, err := queue.Connect(queue.ConnectOptions{URL: srv.URL, NKeySeedFile: file})
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
}
