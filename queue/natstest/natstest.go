// Package natstest starts real NATS servers with JetStream inside the test process.
//
// Tests in agentfleet never mock NATS: they call [Start] for one server on a random loopback port
// with its JetStream store in t.TempDir(), or [StartCluster] for a three-node JetStream cluster
// (to test replicas and the loss of a node). Every server is shut down by t.Cleanup, and every
// connection made through [Server.Connect] is closed before the server, so goleak stays quiet.
package natstest

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// readyTimeout bounds how long a test waits for a server to accept connections. It is generous
// because tests run on loaded two-core machines.
const readyTimeout = 30 * time.Second

// readyPoll is how often a starting server is checked for a fatal error.
const readyPoll = 100 * time.Millisecond

// Server is one running in-process NATS server.
type Server struct {
	// NATS is the running server; tests may use it to shut the node down.
	NATS *server.Server
	// URL is the client URL, nats://127.0.0.1:<port>.
	URL string
	// StoreDir is where JetStream keeps its files.
	StoreDir string

	opts *server.Options // as started, with the port it got
}

// Options returns the options [Start] uses: loopback, random port, JetStream in storeDir, no
// logging and no signal handlers. Callers may adjust them and pass them to [StartWithOptions].
func Options(storeDir string) *server.Options {
	return &server.Options{
		ServerName: "agentfleet-test",
		Host:       "127.0.0.1",
		Port:       server.RANDOM_PORT,
		JetStream:  true,
		StoreDir:   storeDir,
		NoLog:      true,
		NoSigs:     true,
	}
}

// Start runs one NATS server with JetStream for the duration of the test.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartWithOptions(t, Options(t.TempDir()))
}

// StartWithOptions runs a NATS server with the given options for the duration of the test.
func StartWithOptions(t testing.TB, opts *server.Options) *Server {
	t.Helper()
	s, err := run(opts)
	if err != nil {
		t.Fatalf("natstest: %v", err)
	}
	t.Cleanup(s.Shutdown)
	return s
}

func run(opts *server.Options) (*Server, error) {
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("configure nats-server: %w", err)
	}
	logs := &fatalCatcher{}
	ns.SetLoggerV2(logs, false, false, false)
	ns.Start()
	if err := waitReady(ns, logs); err != nil {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, fmt.Errorf("nats-server %s: %w", opts.ServerName, err)
	}
	if addr, ok := ns.Addr().(*net.TCPAddr); ok {
		opts.Port = addr.Port // a restart comes back on the same port
	}
	return &Server{NATS: ns, URL: ns.ClientURL(), StoreDir: opts.StoreDir, opts: opts}, nil
}

// waitReady waits until ns accepts connections, failing at once when it logs a fatal error.
func waitReady(ns *server.Server, logs *fatalCatcher) error {
	deadline := time.Now().Add(readyTimeout)
	for !ns.ReadyForConnections(readyPoll) {
		if err := logs.err(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %s", readyTimeout)
		}
	}
	return nil
}

// Restart starts a server that was shut down again, with the same options, port and store.
func (s *Server) Restart() error {
	if s.NATS.Running() {
		return fmt.Errorf("natstest: %s is running", s.opts.ServerName)
	}
	r, err := run(s.opts.Clone())
	if err != nil {
		return err
	}
	*s = *r
	return nil
}

// Shutdown stops the server and waits until it has stopped. It is safe to call twice.
func (s *Server) Shutdown() {
	s.NATS.Shutdown()
	s.NATS.WaitForShutdown()
}

// Connect opens a client connection to the server, closed when the test ends (before the
// server shuts down, because cleanups run last-in first-out).
func (s *Server) Connect(t testing.TB, opts ...nats.Option) *nats.Conn {
	t.Helper()
	return connect(t, s.URL, opts...)
}

func connect(t testing.TB, url string, opts ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatalf("natstest: connect %s: %v", url, err)
	}
	t.Cleanup(nc.Close)
	return nc
}
