package queue

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go"
)

// ConnectOptions describe how to reach NATS. At most one of user/password, Token, NKeySeedFile
// and CredsFile may be set. Zero durations take the defaults named on the fields.
type ConnectOptions struct {
	// URL is one or more comma-separated server URLs (default nats://127.0.0.1:4222).
	URL string
	// Name identifies the connection in server monitoring (e.g. "agentfleet-worker w-1").
	Name string
	// User and Password authenticate with a username and password.
	User     string
	Password string
	// Token authenticates with a token.
	Token string
	// NKeySeedFile is a file holding an nkey seed (SU...).
	NKeySeedFile string
	// CredsFile is a decentralized-auth credentials file (JWT and seed).
	CredsFile string
	// TLSCAFile verifies the server's certificate; TLSCertFile and TLSKeyFile (both or neither)
	// present a client certificate.
	TLSCAFile   string
	TLSCertFile string
	TLSKeyFile  string
	// ConnectTimeout bounds each connection attempt (default 5 s).
	ConnectTimeout time.Duration
	// ReconnectWait is the pause between reconnect attempts (default 1 s). The connection
	// reconnects forever: a worker outlives a NATS restart.
	ReconnectWait time.Duration
	// StartupWait is how long Connect keeps trying when no server answers at first (NATS
	// starting with the fleet, or restarting): default DefaultStartupWait, negative not at
	// all. A refused authorization is not tried again.
	StartupWait time.Duration
	// OnWait, when set, hears each failed first attempt and the pause before the next (a
	// log line saying what the program waits for).
	OnWait func(err error, next time.Duration)
}

// DefaultStartupWait is ConnectOptions.StartupWait's default: as long as
// Open waits for a forming JetStream cluster.
const DefaultStartupWait = startupPatience

// Validate reports every invalid field by name, including files that cannot be read.
func (o ConnectOptions) Validate() error {
	var errs []error
	methods := 0
	for _, set := range []bool{o.User != "" || o.Password != "", o.Token != "", o.NKeySeedFile != "", o.CredsFile != ""} {
		if set {
			methods++
		}
	}
	if methods > 1 {
		errs = append(errs, errors.New("queue.ConnectOptions: set only one of User/Password, Token, NKeySeedFile and CredsFile"))
	}
	if (o.User == "") != (o.Password == "") {
		errs = append(errs, errors.New("queue.ConnectOptions.User and Password must be set together"))
	}
	if (o.TLSCertFile == "") != (o.TLSKeyFile == "") {
		errs = append(errs, errors.New("queue.ConnectOptions.TLSCertFile and TLSKeyFile must be set together"))
	}
	for _, f := range [][2]string{{"NKeySeedFile", o.NKeySeedFile}, {"CredsFile", o.CredsFile}, {"TLSCAFile", o.TLSCAFile}, {"TLSCertFile", o.TLSCertFile}, {"TLSKeyFile", o.TLSKeyFile}} {
		if f[1] == "" {
			continue
		}
		if _, err := os.Stat(f[1]); err != nil {
			errs = append(errs, fmt.Errorf("queue.ConnectOptions.%s: %w", f[0], err))
		}
	}
	if o.ConnectTimeout < 0 || o.ReconnectWait < 0 {
		errs = append(errs, errors.New("queue.ConnectOptions.ConnectTimeout and ReconnectWait must be >= 0"))
	}
	return errors.Join(errs...)
}

// natsOptions turns o into nats.go options.
func (o ConnectOptions) natsOptions() ([]nats.Option, error) {
	opts := []nats.Option{
		nats.Name(o.Name),
		nats.Timeout(orDefault(o.ConnectTimeout, 5*time.Second)),
		nats.ReconnectWait(orDefault(o.ReconnectWait, time.Second)),
		nats.MaxReconnects(-1),
		nats.RetryOnFailedConnect(false),
	}
	switch {
	case o.User != "":
		opts = append(opts, nats.UserInfo(o.User, o.Password))
	case o.Token != "":
		opts = append(opts, nats.Token(o.Token))
	case o.NKeySeedFile != "":
		opt, err := nats.NkeyOptionFromSeed(o.NKeySeedFile)
		if err != nil {
			return nil, fmt.Errorf("queue.ConnectOptions.NKeySeedFile %s: %w", o.NKeySeedFile, err)
		}
		opts = append(opts, opt)
	case o.CredsFile != "":
		opts = append(opts, nats.UserCredentials(o.CredsFile))
	}
	if o.TLSCAFile != "" {
		opts = append(opts, nats.RootCAs(o.TLSCAFile))
	}
	if o.TLSCertFile != "" {
		opts = append(opts, nats.ClientCert(o.TLSCertFile, o.TLSKeyFile))
	}
	return opts, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// Connect validates o and connects. extra options are applied last (for handlers of
// disconnects and errors). The error names the URL and what to do.
func Connect(o ConnectOptions, extra ...nats.Option) (*nats.Conn, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	opts, err := o.natsOptions()
	if err != nil {
		return nil, err
	}
	url := o.URL
	if url == "" {
		url = nats.DefaultURL
	}
	wait := orDefault(o.StartupWait, DefaultStartupWait)
	deadline, delay := time.Now().Add(wait), 250*time.Millisecond
	for {
		nc, err := nats.Connect(url, append(opts, extra...)...)
		if err == nil {
			return nc, nil
		}
		auth := errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrAuthExpired)
		if auth || wait < 0 || time.Now().Add(delay).After(deadline) {
			hint := "check the NATS URL (AGENTFLEET_NATS_URL) or run `agentfleet-dev dev`"
			if auth {
				hint = "check the NATS credentials"
			}
			return nil, fmt.Errorf("queue: connect to NATS at %s: %w; %s", url, err, hint)
		}
		if o.OnWait != nil {
			o.OnWait(err, delay)
		}
		time.Sleep(delay)
		delay = min(2*delay, 5*time.Second)
	}
}
