// Package execenv abstracts where tools run: files and commands on the local
// machine (Local) or on a remote host over SSH (SSH), behind one Environment
// interface, with wrappers (ReadOnly, Logging, Scoped) for cross-cutting
// policy. A Description serializes an environment so that another worker can
// rebuild it.
package execenv
