package execenv

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"path"
	"path/filepath"
	"time"
)

// SSHConfig configures an SSH environment. The zero value of every field but
// Host means the documented default.
type SSHConfig struct {
	// Host is the remote host name or address. Required.
	Host string
	// Port defaults to 22.
	Port int
	// User defaults to the current local user.
	User string
	// WorkingDir is an absolute remote directory; "" means the remote
	// user's home directory, found at Initialize.
	WorkingDir string

	// KeyFile is a private key file (OpenSSH or PEM format, unencrypted).
	KeyFile string
	// Key is a private key's bytes; used in addition to KeyFile.
	Key []byte
	// UseAgent offers the keys of the agent at SSH_AUTH_SOCK.
	UseAgent bool
	// KeyRef names the key for Describe; the worker that rebuilds the
	// environment resolves it (see Resolver). Never a secret itself.
	KeyRef string

	// KnownHostsFile is checked for the host key; "" means ~/.ssh/known_hosts.
	// Unknown and changed keys are refused (see HostKeyError).
	KnownHostsFile string
	// InsecureIgnoreHostKey accepts any host key. For tests only; it logs a
	// warning at every connection.
	InsecureIgnoreHostKey bool

	// DialTimeout bounds connecting and the SSH handshake; default 15 s.
	DialTimeout time.Duration
	// KeepAlive is the interval of keepalive requests; default 30 s, negative
	// disables them. A failed keepalive closes the connection so that the
	// next operation reconnects.
	KeepAlive time.Duration

	// DefaultTimeout and MaxTimeout bound commands as for Local.
	DefaultTimeout time.Duration
	MaxTimeout     time.Duration
	// EnvPolicy is applied on the remote host to the login environment.
	EnvPolicy EnvPolicy
	// KeepSecrets keeps secret-looking variables under EnvInheritAll.
	KeepSecrets bool
	// MaxOutputBytes bounds retained output per stream; default DefaultMaxOutput.
	MaxOutputBytes int

	// NoRipgrep makes Grep use the pure-Go search over SFTP even when rg is
	// installed on the remote host.
	NoRipgrep bool

	// Logger receives warnings (insecure host key, reconnects); default slog.Default().
	Logger *slog.Logger
}

// Default values for SSHConfig.
const (
	DefaultSSHPort      = 22
	DefaultDialTimeout  = 15 * time.Second
	DefaultSSHKeepAlive = 30 * time.Second
)

// WithDefaults returns a copy with zero fields set to their defaults.
func (c SSHConfig) WithDefaults() SSHConfig {
	if c.Port == 0 {
		c.Port = DefaultSSHPort
	}
	if c.User == "" {
		if u, err := user.Current(); err == nil {
			c.User = u.Username
		}
	}
	if c.KnownHostsFile == "" && !c.InsecureIgnoreHostKey {
		if home, err := os.UserHomeDir(); err == nil {
			c.KnownHostsFile = filepath.Join(home, ".ssh", "known_hosts")
		}
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.KeepAlive == 0 {
		c.KeepAlive = DefaultSSHKeepAlive
	}
	commandDefaults(&c.DefaultTimeout, &c.MaxTimeout, &c.MaxOutputBytes, &c.EnvPolicy)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Validate reports the first invalid field.
func (c SSHConfig) Validate() error {
	var errs []error
	if c.Host == "" {
		errs = append(errs, errors.New("SSHConfig.Host is required"))
	}
	if c.Port < 0 || c.Port > 65535 {
		errs = append(errs, fmt.Errorf("SSHConfig.Port must be between 1 and 65535, got %d", c.Port))
	}
	if c.WorkingDir != "" && !path.IsAbs(c.WorkingDir) {
		errs = append(errs, fmt.Errorf("SSHConfig.WorkingDir must be an absolute remote path, got %q", c.WorkingDir))
	}
	if c.KeyFile == "" && len(c.Key) == 0 && !c.UseAgent {
		errs = append(errs, errors.New("SSHConfig needs a key: set KeyFile, Key or UseAgent"))
	}
	if c.KnownHostsFile == "" && !c.InsecureIgnoreHostKey {
		errs = append(errs, errors.New("SSHConfig.KnownHostsFile is required (no home directory to find ~/.ssh/known_hosts)"))
	}
	errs = append(errs, validateCommon("SSHConfig", c.DefaultTimeout, c.MaxTimeout, c.MaxOutputBytes, c.EnvPolicy))
	return errors.Join(errs...)
}

// commandDefaults fills the command settings Local and SSH share.
func commandDefaults(def, max *time.Duration, maxOut *int, policy *EnvPolicy) {
	if *def == 0 {
		*def = DefaultTimeout
	}
	if *max == 0 {
		*max = MaxTimeout
	}
	if *maxOut == 0 {
		*maxOut = DefaultMaxOutput
	}
	if *policy == "" {
		*policy = EnvInheritAll
	}
}

// validateCommon checks the fields Local and SSH share.
func validateCommon(prefix string, def, max time.Duration, maxOut int, policy EnvPolicy) error {
	var errs []error
	if def < 0 {
		errs = append(errs, fmt.Errorf("%s.DefaultTimeout must be >= 0, got %v", prefix, def))
	}
	if max < 0 {
		errs = append(errs, fmt.Errorf("%s.MaxTimeout must be >= 0, got %v", prefix, max))
	}
	if def > 0 && max > 0 && def > max {
		errs = append(errs, fmt.Errorf("%s.DefaultTimeout (%v) must not exceed MaxTimeout (%v)", prefix, def, max))
	}
	if maxOut < 0 {
		errs = append(errs, fmt.Errorf("%s.MaxOutputBytes must be >= 0, got %d", prefix, maxOut))
	}
	if err := policy.validate(prefix + ".EnvPolicy"); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
