package execenv

import (
	"context"
	"fmt"
	"time"
)

// SSHCredentials is what a worker knows about a key reference: how to
// authenticate and which known_hosts file vouches for the host.
type SSHCredentials struct {
	KeyFile        string
	Key            []byte
	UseAgent       bool
	KnownHostsFile string
}

// Resolver turns a Description's KeyRef into credentials from the worker's
// own configuration, so descriptions never carry secrets.
type Resolver interface {
	ResolveKey(ctx context.Context, keyRef string) (SSHCredentials, error)
}

// ResolverFunc adapts a function to Resolver.
type ResolverFunc func(ctx context.Context, keyRef string) (SSHCredentials, error)

// ResolveKey calls f.
func (f ResolverFunc) ResolveKey(ctx context.Context, keyRef string) (SSHCredentials, error) {
	return f(ctx, keyRef)
}

// Rebuild holds the settings a worker applies to every environment it
// rebuilds (timeouts, env policy, output bound); descriptions carry only
// where the environment is. The zero value means the defaults.
type Rebuild struct {
	DefaultTimeout time.Duration
	MaxTimeout     time.Duration
	EnvPolicy      EnvPolicy
	MaxOutputBytes int
}

// FromDescription rebuilds the environment desc describes: a Local one on
// desc.WorkingDir, or an SSH one whose key and known_hosts come from r
// (r may be nil for local descriptions). The result is not initialized:
// call Initialize before use.
func FromDescription(ctx context.Context, desc Description, r Resolver, opts Rebuild) (Environment, error) {
	switch desc.Kind {
	case KindLocal:
		return NewLocal(LocalConfig{
			WorkingDir: desc.WorkingDir, Shared: desc.Shared, DefaultTimeout: opts.DefaultTimeout,
			MaxTimeout: opts.MaxTimeout, EnvPolicy: opts.EnvPolicy, MaxOutputBytes: opts.MaxOutputBytes,
		})
	case KindSSH:
		if r == nil {
			return nil, fmt.Errorf("execenv: description of ssh environment %s@%s needs a Resolver for key %q", desc.User, desc.Host, desc.KeyRef)
		}
		creds, err := r.ResolveKey(ctx, desc.KeyRef)
		if err != nil {
			return nil, fmt.Errorf("execenv: resolve ssh key %q for %s: %w", desc.KeyRef, desc.Host, err)
		}
		return NewSSH(SSHConfig{
			Host: desc.Host, Port: desc.Port, User: desc.User, WorkingDir: desc.WorkingDir, KeyRef: desc.KeyRef,
			KeyFile: creds.KeyFile, Key: creds.Key, UseAgent: creds.UseAgent, KnownHostsFile: creds.KnownHostsFile,
			DefaultTimeout: opts.DefaultTimeout, MaxTimeout: opts.MaxTimeout, EnvPolicy: opts.EnvPolicy,
			MaxOutputBytes: opts.MaxOutputBytes,
		})
	}
	return nil, fmt.Errorf("execenv: description kind %q is unknown (want %q or %q)", desc.Kind, KindLocal, KindSSH)
}
