// Package embedded runs a NATS server with JetStream inside the current process, for
// `agentfleet-dev dev` and single-machine use.
//
// The server listens on a named host and port and keeps JetStream data in a named directory,
// so a restart finds its streams again. Start refuses clearly when the port is taken or another
// process holds the data directory (an advisory lock file, agentfleet.lock, in it). Production
// runs a separate NATS cluster instead (deploy/).
//
// With Config.Users the server refuses a client without a user's name and password, and each
// user may publish and subscribe only what its queue.Permissions allow (dev mode makes a
// dispatcher, a worker and an observer user with random passwords at every start). Without
// Users it accepts anyone, with every right: for tests only.
package embedded

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/natsauth"
)

// Defaults applied to zero Config fields.
const (
	DefaultHost       = "127.0.0.1"
	DefaultPort       = 4222
	DefaultServerName = "agentfleet-dev"
	DefaultReadyWait  = 30 * time.Second
)

// RandomPort asks for any free port (tests).
const RandomPort = -1

// Config describes the embedded server. DataDir is required.
type Config struct {
	// Host to listen on (default 127.0.0.1: only this machine).
	Host string
	// Port to listen on (default 4222; RandomPort for any free one).
	Port int
	// DataDir holds JetStream's files; created if missing.
	DataDir string
	// ServerName names the server (default "agentfleet-dev").
	ServerName string
	// MaxPayload is the largest message accepted, in bytes (default: the server's 1 MiB).
	MaxPayload int32
	// ReadyWait bounds the wait for the server to accept connections (default 30 s).
	ReadyWait time.Duration
	// Log, when true, lets the server log to stderr.
	Log bool
	// Users, when set, are the only clients the server accepts, each with its permissions.
	Users []User
}

// User is a client the server accepts: its name, password and what it may do.
type User struct {
	Name        string
	Password    string
	Permissions queue.Permissions
}

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Host == "" {
		c.Host = DefaultHost
	}
	if c.Port == 0 {
		c.Port = DefaultPort
	}
	if c.ServerName == "" {
		c.ServerName = DefaultServerName
	}
	if c.ReadyWait == 0 {
		c.ReadyWait = DefaultReadyWait
	}
	return c
}

// Validate reports invalid fields by name.
func (c Config) Validate() error {
	var errs []error
	if c.DataDir == "" {
		errs = append(errs, errors.New("embedded.Config.DataDir is required: name a directory for JetStream data"))
	}
	if c.Port != RandomPort && (c.Port < 1 || c.Port > 65535) {
		errs = append(errs, fmt.Errorf("embedded.Config.Port must be 1-65535 or RandomPort, got %d", c.Port))
	}
	if c.MaxPayload < 0 {
		errs = append(errs, fmt.Errorf("embedded.Config.MaxPayload must be >= 0, got %d", c.MaxPayload))
	}
	for i, u := range c.Users {
		if u.Name == "" || u.Password == "" {
			errs = append(errs, fmt.Errorf("embedded.Config.Users[%d] needs a Name and a Password", i))
		}
	}
	if c.ReadyWait < 0 {
		errs = append(errs, fmt.Errorf("embedded.Config.ReadyWait must be >= 0, got %s", c.ReadyWait))
	}
	return errors.Join(errs...)
}

// Server is a running embedded NATS server.
type Server struct {
	ns   *server.Server
	lock *os.File
}

// Start runs the server and waits until it accepts connections.
func Start(cfg Config) (*Server, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return nil, fmt.Errorf("embedded: create data dir %s: %w", cfg.DataDir, err)
	}
	lock, err := lockDir(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	s, err := start(cfg)
	if err != nil {
		_ = unlockDir(lock)
		return nil, err
	}
	return &Server{ns: s, lock: lock}, nil
}

func start(cfg Config) (*server.Server, error) {
	if err := checkPortFree(cfg.Host, cfg.Port); err != nil {
		return nil, err
	}
	opts := &server.Options{
		ServerName: cfg.ServerName,
		Host:       cfg.Host,
		Port:       cfg.Port,
		JetStream:  true,
		StoreDir:   cfg.DataDir,
		MaxPayload: cfg.MaxPayload,
		NoLog:      !cfg.Log,
		NoSigs:     true,
	}
	for _, u := range cfg.Users {
		opts.Users = append(opts.Users, &server.User{Username: u.Name, Password: u.Password, Permissions: natsauth.Server(u.Permissions)})
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("embedded: configure NATS server: %w", err)
	}
	if cfg.Log {
		ns.ConfigureLogger()
	}
	ns.Start()
	if !ns.ReadyForConnections(cfg.ReadyWait) {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, fmt.Errorf("embedded: NATS server on %s not ready after %s (port taken meanwhile, or JetStream could not open %s)",
			net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)), cfg.ReadyWait, cfg.DataDir)
	}
	return ns, nil
}

// checkPortFree fails with a clear message when something already listens on host:port. (The
// server itself only logs that, and then never becomes ready.)
func checkPortFree(host string, port int) error {
	if port == RandomPort {
		return nil
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("embedded: cannot listen on %s (%v): another NATS server or `agentfleet-dev dev` may be running; stop it or choose another port", addr, err)
	}
	return l.Close()
}

// ClientURL is the URL clients connect to, nats://host:port.
func (s *Server) ClientURL() string { return s.ns.ClientURL() }

// NATS exposes the underlying server (for monitoring and tests).
func (s *Server) NATS() *server.Server { return s.ns }

// Shutdown stops the server, waits for it, and releases the data directory. Safe to call twice.
func (s *Server) Shutdown() error {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
	if s.lock == nil {
		return nil
	}
	err := unlockDir(s.lock)
	s.lock = nil
	return err
}
