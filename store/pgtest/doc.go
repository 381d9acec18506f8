// Package pgtest gives tests a real Postgres with no setup.
//
// NewDatabase(t) returns the DSN of a fresh, migrated database that is
// dropped when the test ends; NewEmptyDatabase(t) the same without the
// schema. The server behind them is chosen once per test binary:
//
//  1. AGENTFLEET_TEST_DATABASE_URL, when set: a server where the tests may
//     CREATE DATABASE.
//  2. Otherwise a postgres container through testcontainers-go, when a
//     Docker engine answers a ping within a second (DOCKER_HOST or
//     /var/run/docker.sock); the probe is silent.
//  3. Otherwise a throwaway cluster: initdb and postgres found on PATH or
//     under /usr/lib/postgresql/*/bin (the Debian packages), in a temporary
//     directory, on a free 127.0.0.1 port, with fsync off. As root (CI),
//     both run as the postgres system user (else nobody), because they
//     refuse to run as root. The server is a child process with a
//     parent-death signal, so it exits even if the test binary is killed.
//
// Call Main from TestMain so the container or cluster is stopped when the
// tests end: func TestMain(m *testing.M) { pgtest.Main(m) }.
//
// When none of the three is available the test is skipped, or fails when
// AGENTFLEET_REQUIRE_INTEGRATION=1 (CI sets it). NewCluster(t) starts a
// private cluster a test may Stop, Start and Restart (store/postgres uses
// it to check recovery from a server restart).
package pgtest
