// Package pgcluster runs a throwaway PostgreSQL server from the initdb and
// postgres binaries on the machine: a data directory in a temporary
// directory, a server on a free loopback port that trusts local connections
// as "postgres", and Stop, Start and Restart to take it away and bring it
// back. Tests use it through store/pgtest; the chaos run (cmd/chaos) uses
// it directly, which is why it is not a test-support package.
//
// It runs on Unix systems (Linux, macOS); only on Linux does the server die
// with this process if it is killed (internal/tiedproc). On Windows
// StartCluster returns ErrUnsupported, which store/pgtest turns into a
// skip.
package pgcluster
