package agent

import (
	"fmt"
	"time"
)

// SetCommandTimeout changes the default command timeout (a shell call
// that names none) from the next tool call on; 0 restores the session's
// configured default. It must not exceed SessionConfig.MaxCommandTimeout.
// Tools that state the default (the shell's description) state the new
// one from the next request on.
func (s *Session) SetCommandTimeout(d time.Duration) error {
	if max := s.cfg.Session.MaxCommandTimeout; d < 0 || d > max {
		return fmt.Errorf("agent: command timeout must be between 0 and the session's max_command_timeout %s, got %s", max, d)
	}
	s.cmdTime.Store(int64(d))
	s.registry.Settle(s.execOptions().Settings) // the shell's description states the new default
	return nil
}

// CommandTimeout is the default command timeout in effect: the one set by
// SetCommandTimeout, else the configured one, else the profile's.
func (s *Session) CommandTimeout() time.Duration {
	if t := time.Duration(s.cmdTime.Load()); t > 0 {
		return t
	}
	if t := s.cfg.Session.DefaultCommandTimeout; t > 0 {
		return t
	}
	return s.profile.DefaultCommandTimeout()
}
