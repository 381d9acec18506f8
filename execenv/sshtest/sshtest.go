// Package sshtest starts a real OpenSSH sshd on a free loopback port for
// tests, with freshly generated ed25519 host and user keys, an
// authorized_keys file and a known_hosts file that trusts the host key.
//
// Sessions get SHLVL=1 so that bash does not read the account's ~/.bashrc
// (which it otherwise does for sshd sessions): tests stay independent of
// the machine's dotfiles.
//
// It needs /usr/sbin/sshd (Debian: openssh-server). When the binary is
// missing, Start skips the test, or fails it when
// AGENTFLEET_REQUIRE_INTEGRATION=1. The server is stopped by t.Cleanup.
// It works as root (PermitRootLogin prohibit-password) and as an ordinary
// user (sshd then only accepts that user, which is the one it logs in).
//
// Each Start launches its own sshd, so parallel tests do not share state.
package sshtest

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/internal/testenv"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/agentfleet/agentfleet/execenv"
)

// SSHDPath is the sshd binary Start runs.
const SSHDPath = "/usr/sbin/sshd"

// readyTimeout bounds the wait for sshd to accept connections.
const readyTimeout = 30 * time.Second

// Server is a running sshd. Its fields are read-only.
type Server struct {
	Host           string        // always 127.0.0.1
	Port           int           // the port sshd listens on
	User           string        // the user to log in as (the current user)
	KeyFile        string        // the user's private key (OpenSSH format)
	KnownHostsFile string        // a known_hosts file trusting HostKey
	HostKey        ssh.PublicKey // the server's host key
	Dir            string        // the temporary directory with config, keys and log

	cmd     *exec.Cmd
	exited  chan struct{}
	logPath string
}

// Options adjust the server. The zero value is fine.
type Options struct {
	// SetEnv adds variables to the environment of every session, as
	// sshd_config's SetEnv does (values must not contain spaces or quotes).
	SetEnv map[string]string
}

// Start launches sshd with default options.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartWith(t, Options{})
}

// StartWith launches sshd with opts and waits until it accepts connections.
func StartWith(t testing.TB, opts Options) *Server {
	t.Helper()
	if _, err := os.Stat(SSHDPath); err != nil {
		msg := fmt.Sprintf("sshtest: %s not found (install openssh-server): %v", SSHDPath, err)
		testenv.SkipOrFatal(t, msg)
	}
	u, err := user.Current()
	if err != nil {
		t.Fatalf("sshtest: current user: %v", err)
	}
	if u.Uid == "0" {
		// sshd running as root needs its privilege separation directory.
		_ = os.MkdirAll("/run/sshd", 0o755)
	}
	dir := t.TempDir()
	s := &Server{Host: "127.0.0.1", User: u.Username, Dir: dir}
	hostSigner := s.writeKeys(t)
	s.HostKey = hostSigner.PublicKey()

	var lastErr error
	for range 3 {
		if lastErr = s.launch(t, opts); lastErr == nil {
			s.writeKnownHosts(t)
			return s
		}
	}
	t.Fatalf("sshtest: sshd did not start: %v\n%s", lastErr, s.logTail())
	return nil
}

// Config returns an SSHConfig for this server with workDir as the working
// directory, checking the host key against KnownHostsFile.
func (s *Server) Config(workDir string) execenv.SSHConfig {
	return execenv.SSHConfig{
		Host:           s.Host,
		Port:           s.Port,
		User:           s.User,
		WorkingDir:     workDir,
		KeyFile:        s.KeyFile,
		KnownHostsFile: s.KnownHostsFile,
	}
}

// Addr is host:port.
func (s *Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// writeKeys generates host and user keys and authorized_keys; it returns the host signer.
func (s *Server) writeKeys(t testing.TB) ssh.Signer {
	t.Helper()
	host := writeKey(t, filepath.Join(s.Dir, "ssh_host_ed25519_key"))
	s.KeyFile = filepath.Join(s.Dir, "id_ed25519")
	userSigner := writeKey(t, s.KeyFile)
	auth := ssh.MarshalAuthorizedKey(userSigner.PublicKey())
	if err := os.WriteFile(filepath.Join(s.Dir, "authorized_keys"), auth, 0o600); err != nil {
		t.Fatalf("sshtest: %v", err)
	}
	return host
}

// writeKey generates an ed25519 key and writes it in OpenSSH format with mode 0600.
func writeKey(t testing.TB, path string) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatalf("sshtest: generate key: %v", err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "agentfleet-sshtest")
	if err != nil {
		t.Fatalf("sshtest: marshal key: %v", err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatalf("sshtest: %v", err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatalf("sshtest: signer: %v", err)
	}
	return signer
}

// writeKnownHosts writes a known_hosts line for the host key at Addr.
func (s *Server) writeKnownHosts(t testing.TB) {
	t.Helper()
	s.KnownHostsFile = filepath.Join(s.Dir, "known_hosts")
	line := knownhosts.Line([]string{knownhosts.Normalize(s.Addr())}, s.HostKey) + "\n"
	if err := os.WriteFile(s.KnownHostsFile, []byte(line), 0o600); err != nil {
		t.Fatalf("sshtest: %v", err)
	}
}

// launch picks a free port, starts sshd and waits for its banner. An error
// means this attempt failed (e.g. the port was taken meanwhile).
func (s *Server) launch(t testing.TB, opts Options) error {
	t.Helper()
	port, err := freePort()
	if err != nil {
		return err
	}
	s.Port = port
	cfgPath := filepath.Join(s.Dir, "sshd_config")
	if err := os.WriteFile(cfgPath, []byte(s.config(opts)), 0o600); err != nil {
		return err
	}
	s.logPath = filepath.Join(s.Dir, "sshd.log")
	logFile, err := os.Create(s.logPath)
	if err != nil {
		return err
	}
	defer func() { _ = logFile.Close() }()
	cmd := exec.Command(SSHDPath, "-D", "-e", "-f", cfgPath)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", SSHDPath, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	if err := waitReady(s.Addr(), exited); err != nil {
		_ = cmd.Process.Kill()
		<-exited
		return err
	}
	s.cmd, s.exited = cmd, exited
	t.Cleanup(s.stop(t))
	return nil
}

// stop returns the cleanup that ends sshd and reports its log on failure.
func (s *Server) stop(t testing.TB) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			_ = s.cmd.Process.Signal(os.Interrupt)
			select {
			case <-s.exited:
			case <-time.After(10 * time.Second):
				_ = s.cmd.Process.Kill()
				<-s.exited
			}
			if t.Failed() {
				t.Logf("sshtest: sshd log:\n%s", s.logTail())
			}
		})
	}
}

// config renders sshd_config.
func (s *Server) config(opts Options) string {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	line("Port %d", s.Port)
	line("ListenAddress 127.0.0.1")
	line("AddressFamily inet")
	line("HostKey %s", filepath.Join(s.Dir, "ssh_host_ed25519_key"))
	line("PidFile %s", filepath.Join(s.Dir, "sshd.pid"))
	line("AuthorizedKeysFile %s", filepath.Join(s.Dir, "authorized_keys"))
	line("PubkeyAuthentication yes")
	line("PasswordAuthentication no")
	line("KbdInteractiveAuthentication no")
	line("PermitRootLogin prohibit-password")
	line("UsePAM no")
	line("StrictModes no")
	line("AllowUsers %s", s.User)
	line("Subsystem sftp internal-sftp")
	line("MaxSessions 128")
	line("MaxStartups 128:30:256")
	line("PrintMotd no")
	line("PrintLastLog no")
	line("UseDNS no")
	line("LogLevel INFO")
	// bash reads ~/.bashrc in sessions started by sshd when it is a
	// top-level shell; SHLVL=1 makes it a second-level one, so the tests do
	// not depend on (or wait for) the machine's dotfiles.
	env := map[string]string{"SHLVL": "1"}
	maps.Copy(env, opts.SetEnv)
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + env[k]
	}
	line("SetEnv %s", strings.Join(parts, " "))
	return b.String()
}

// logTail returns the end of sshd's log.
func (s *Server) logTail() string {
	data, _ := os.ReadFile(s.logPath)
	if len(data) > 8192 {
		data = data[len(data)-8192:]
	}
	return string(data)
}

// freePort asks the kernel for an unused loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady dials addr until sshd answers with its banner, sshd exits, or
// readyTimeout passes.
func waitReady(addr string, exited <-chan struct{}) error {
	deadline := time.Now().Add(readyTimeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := readBanner(addr); err == nil {
			return nil
		} else if time.Now().After(deadline) {
			return fmt.Errorf("sshd on %s not ready after %v: %w", addr, readyTimeout, err)
		}
		select {
		case <-exited:
			return errors.New("sshd exited before accepting connections")
		case <-tick.C:
		}
	}
}

// readBanner connects and reads the SSH identification line.
func readBanner(addr string) error {
	conn, err := (&net.Dialer{Timeout: 2 * time.Second}).DialContext(context.Background(), "tcp", addr)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 4)
	if _, err := conn.Read(buf); err != nil {
		return err
	}
	if !bytes.Equal(buf, []byte("SSH-")) {
		return fmt.Errorf("unexpected banner %q", buf)
	}
	return nil
}
