package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentfleet/agentfleet/queue"
)

// NATSConfig is the nats.* configuration both programs read: how to reach
// NATS (queue.ConnectOptions) and how the streams are laid out
// (queue.Config). The zero value of every field means its default.
type NATSConfig struct {
	URL          string `mapstructure:"url"` // default nats://127.0.0.1:4222
	User         string `mapstructure:"user"`
	Password     string `mapstructure:"password"`
	Token        string `mapstructure:"token"`
	NKeySeedFile string `mapstructure:"nkey_seed_file"`
	CredsFile    string `mapstructure:"creds_file"`
	TLSCAFile    string `mapstructure:"tls_ca_file"`
	TLSCertFile  string `mapstructure:"tls_cert_file"`
	TLSKeyFile   string `mapstructure:"tls_key_file"`
	// AllowPlaintext accepts a nats:// URL off loopback without TLS (a
	// network you trust, such as a cluster's with a NetworkPolicy). Without
	// it such a URL is refused: credentials and every task's events
	// would cross the network in clear text.
	AllowPlaintext bool `mapstructure:"allow_plaintext"`
	// Replicas of every stream (default 1; 3 on a 3-node cluster). Every
	// process applies it at start, so all of them must agree.
	Replicas   int           `mapstructure:"replicas"`
	AckWait    time.Duration `mapstructure:"ack_wait"`    // default 60s
	MaxDeliver int           `mapstructure:"max_deliver"` // default 5
	// WorkerGoneAfter is how long a worker may go without pulling before its
	// pinned work is moved to the shared queues (default 1h).
	WorkerGoneAfter time.Duration `mapstructure:"worker_gone_after"`
}

// WithDefaults fills the URL; queue fills the rest.
func (n NATSConfig) WithDefaults() NATSConfig {
	if n.URL == "" {
		n.URL = nats.DefaultURL
	}
	return n
}

// ConnectOptions are the options of queue.Connect, the connection named name.
func (n NATSConfig) ConnectOptions(name string) queue.ConnectOptions {
	return queue.ConnectOptions{URL: n.URL, Name: name, User: n.User, Password: n.Password, Token: n.Token,
		NKeySeedFile: n.NKeySeedFile, CredsFile: n.CredsFile, TLSCAFile: n.TLSCAFile, TLSCertFile: n.TLSCertFile, TLSKeyFile: n.TLSKeyFile}
}

// QueueConfig is the queue.Config of streams under the subject prefix.
func (n NATSConfig) QueueConfig(prefix string) queue.Config {
	return queue.Config{Prefix: prefix, Replicas: n.Replicas, AckWait: n.AckWait, MaxDeliver: n.MaxDeliver,
		WorkerInactiveThreshold: n.WorkerGoneAfter}
}

// Validate names every wrong field by its key, catching what queue.Open
// would otherwise reject with Go field names.
func (n NATSConfig) Validate() error {
	var errs []error
	if err := n.ConnectOptions("").Validate(); err != nil {
		errs = append(errs, fmt.Errorf("nats: %w", err))
	}
	if err := n.checkTLS(); err != nil {
		errs = append(errs, err)
	}
	if n.Replicas < 0 || n.Replicas > 5 {
		errs = append(errs, fmt.Errorf("nats.replicas must be between 1 and 5 (0 = 1), got %d (AGENTFLEET_NATS_REPLICAS)", n.Replicas))
	}
	if n.AckWait < 0 || n.MaxDeliver < 0 {
		errs = append(errs, fmt.Errorf("nats.ack_wait and nats.max_deliver must be >= 0 (0 = default), got %s and %d", n.AckWait, n.MaxDeliver))
	}
	if n.WorkerGoneAfter != 0 && n.WorkerGoneAfter < time.Second {
		errs = append(errs, fmt.Errorf("nats.worker_gone_after must be at least 1s (0 = 1h), got %s (AGENTFLEET_NATS_WORKER_GONE_AFTER)", n.WorkerGoneAfter))
	}
	return errors.Join(errs...)
}

// WaitingConnect sets how long queue.Connect waits for NATS at start
// (wait: the startup_wait key) and logs each wait.
func WaitingConnect(o queue.ConnectOptions, wait time.Duration, log *slog.Logger) queue.ConnectOptions {
	o.StartupWait = wait
	o.OnWait = func(err error, next time.Duration) {
		log.Warn("waiting for NATS to answer", "url", o.URL, "err", err, "retry_in", next)
	}
	return o
}

// NATSEvents logs the connection's losses and recoveries, once each, with
// the server: a lost NATS (or a stream leader moving away with it) shows
// in the logs of every component, not only as stalled work.
func NATSEvents(log *slog.Logger) []nats.Option {
	return []nats.Option{
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			log.Warn("NATS connection lost; reconnecting", "server", nc.ConnectedUrlRedacted(), "err", err)
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("NATS connection back", "server", nc.ConnectedUrlRedacted())
		}),
	}
}

// checkTLS refuses a server of the URL list that is reached in clear text
// off loopback: a nats:// (or schemeless) URL to a host that is not
// localhost or a loopback address, when no TLS file is configured (either
// makes the client require TLS) and allow_plaintext is not set.
func (n NATSConfig) checkTLS() error {
	if n.AllowPlaintext || n.TLSCAFile != "" || n.TLSCertFile != "" {
		return nil
	}
	for raw := range strings.SplitSeq(n.URL, ",") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		if !strings.Contains(raw, "://") {
			raw = "nats://" + raw
		}
		u, err := url.Parse(raw)
		if err != nil {
			continue // queue.ConnectOptions.Validate names it
		}
		if strings.EqualFold(u.Scheme, "tls") || loopbackHost(u.Hostname()) {
			continue
		}
		return fmt.Errorf("nats.url reaches %s without TLS, so the NATS credentials and every task's events would cross the network in clear text: "+
			"use tls://%s, or set nats.tls_ca_file (AGENTFLEET_NATS_TLS_CA_FILE) or nats.tls_cert_file and nats.tls_key_file, "+
			"or nats.allow_plaintext: true (AGENTFLEET_NATS_ALLOW_PLAINTEXT) on a network you trust", u.Host, u.Host)
	}
	return nil
}

// loopbackHost reports whether host is localhost or a loopback address.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}
