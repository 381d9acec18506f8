// Package cli holds what the agentfleet command-line programs (dispatcher,
// worker and agentfleet-dev) share, and nothing else: the cobra root and its
// exit statuses, the configuration keys they read (nats.*, log_format,
// log_level), how viper finds them in AGENTFLEET_* variables, and the few
// variables read outside the configuration ([EnvDatabaseURL], [EnvServer],
// [EnvToken]).
//
// # Exit statuses
//
// [Program.Execute] returns 0 on success, the status an error carries
// through an ExitCode method ([UsageErrorf]: 2, [Failf]: 1), and 2 for
// cobra's own errors (unknown command, bad arguments, bad flags). The
// error's message, when not empty, goes to stderr after the program's name.
//
// # Configuration
//
// [Decode] reads a configuration struct from a file, AGENTFLEET_* variables
// and the flags bound to a viper, flags winning. Every key named by a
// mapstructure tag is bound to its variable (nats.ack_wait is
// AGENTFLEET_NATS_ACK_WAIT), since viper's AutomaticEnv alone only sees
// keys it already knows; map fields have no fixed keys and come from the
// file only.
//
// # Concurrency
//
// [Program.Add] is meant for init functions and is not safe concurrently
// with itself or with Execute. Everything else holds no shared state.
package cli
