package sshtest_test

import (
	"os"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/agentfleet/agentfleet/execenv/sshtest"
)

// TestStartAcceptsUserKey logs in with the generated key, checks the host key
// through known_hosts and runs a command that sees SetEnv variables.
func TestStartAcceptsUserKey(t *testing.T) {
	t.Parallel()
	srv := sshtest.StartWith(t, sshtest.Options{SetEnv: map[string]string{"SSHTEST_PROBE": "hello"}})
	keyPEM, err := os.ReadFile(srv.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	hostKeys, err := knownhosts.New(srv.KnownHostsFile)
	if err != nil {
		t.Fatal(err)
	}
	client, err := ssh.Dial("tcp", srv.Addr(), &ssh.ClientConfig{
		User:            srv.User,
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: hostKeys,
	})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer func() { _ = client.Close() }()
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sess.Close() }()
	out, err := sess.Output("echo $SSHTEST_PROBE")
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != "hello" {
		t.Fatalf("SetEnv variable = %q, want hello", got)
	}
	if cfg := srv.Config("/tmp"); cfg.Port != srv.Port || cfg.KeyFile != srv.KeyFile || cfg.WorkingDir != "/tmp" {
		t.Fatalf("Config = %+v does not describe the server", cfg)
	}
}
