package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentfleet/agentfleet/internal/pgcluster"
	"github.com/agentfleet/agentfleet/internal/testenv"

	"github.com/jackc/pgx/v5"

	"github.com/agentfleet/agentfleet/store/postgres"
)

// Environment variables.
const (
	// EnvDatabaseURL names a server to create test databases on.
	EnvDatabaseURL = "AGENTFLEET_TEST_DATABASE_URL"
)

// server is the process-wide Postgres the databases are created on.
var server struct {
	once   sync.Once
	admin  string // DSN of a database to run CREATE DATABASE from
	source string // "env", "docker" or "initdb"
	err    error
	stop   func()
}

// NewDatabase returns the DSN of a new database with the agentfleet schema
// migrated up, dropped when t ends.
func NewDatabase(t testing.TB) string {
	t.Helper()
	dsn := NewEmptyDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := postgres.Migrate(ctx, dsn); err != nil {
		t.Fatalf("pgtest: migrate: %v", err)
	}
	return dsn
}

// NewEmptyDatabase returns the DSN of a new, empty database, dropped when t ends.
func NewEmptyDatabase(t testing.TB) string {
	t.Helper()
	admin := serverDSN(t)
	name := "agentfleet_test_" + randomHex(6)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := execSQL(ctx, admin, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database on the %s server: %v", server.source, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := execSQL(ctx, admin, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("pgtest: drop database %s: %v", name, err)
		}
	})
	return withDatabase(admin, name)
}

// Source reports which server the databases come from ("env", "docker" or
// "initdb"), starting it if needed.
func Source(t testing.TB) string {
	serverDSN(t)
	return server.source
}

// Main runs the tests of a package, stops the server pgtest started, if
// any, and then fails the run if a goroutine outlived the tests (goleak).
// Call it from TestMain: func TestMain(m *testing.M) { pgtest.Main(m) }.
func Main(m *testing.M) {
	code := m.Run()
	Shutdown()
	if code == 0 {
		if err := findLeaks(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: goroutines outlived the tests: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// leakPatience is how long findLeaks waits for goroutines to end. goleak
// alone waits about a second; on a loaded machine (CI runs packages in
// parallel) a closed NATS connection's or server's goroutines took longer
// to return, and a goroutine that ends is not a leak.
const leakPatience = 15 * time.Second

// findLeaks asks goleak until no goroutine is left or leakPatience passed.
// A cancelled pull request's reader is no leak: it ends when the request
// expires on the server (testenv.NATSPullReader).
func findLeaks() error {
	deadline := time.Now().Add(leakPatience)
	for {
		err := goleak.Find(goleak.IgnoreAnyFunction(testenv.NATSPullReader))
		if err == nil || time.Now().After(deadline) {
			return err
		}
	}
}

// Shutdown stops the server pgtest started, if any (Main calls it).
func Shutdown() {
	if server.stop != nil {
		server.stop()
		server.stop = nil
	}
}

func serverDSN(t testing.TB) string {
	t.Helper()
	server.once.Do(startServer)
	if server.err != nil {
		testenv.SkipOrFatal(t, server.err.Error())
	}
	return server.admin
}

// startServer picks, in order: the env URL, a Docker container, an initdb cluster.
func startServer() {
	if dsn := os.Getenv(EnvDatabaseURL); dsn != "" {
		server.admin, server.source = dsn, "env"
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if dockerAnswers(ctx) {
		dsn, stop, err := startContainer(ctx)
		if err == nil {
			server.admin, server.source, server.stop = dsn, "docker", stop
			return
		}
		fmt.Fprintf(os.Stderr, "pgtest: Docker answers but the postgres container did not start (%v); trying initdb\n", err)
	}
	c, err := pgcluster.StartCluster(ctx)
	if err != nil {
		server.err = fmt.Errorf("pgtest: no Postgres for tests: %s is unset, no Docker engine answers, and the throwaway cluster failed: %w", EnvDatabaseURL, err)
		return
	}
	server.admin, server.source, server.stop = c.DSN("postgres"), "initdb", c.Close
}

// NewCluster starts a private throwaway cluster for t (one that the test may
// stop and restart), closed when t ends. It needs the PostgreSQL binaries.
func NewCluster(t testing.TB) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := pgcluster.StartCluster(ctx)
	if errors.Is(err, pgcluster.ErrNoBinaries) || errors.Is(err, pgcluster.ErrUnsupported) {
		testenv.SkipOrFatal(t, err.Error())
	}
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// NewClusterWithDatabase is NewCluster with a database "app" created and
// migrated up on it; it returns the cluster and that database's DSN.
func NewClusterWithDatabase(t testing.TB) (*Cluster, string) {
	t.Helper()
	c := NewCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := execSQL(ctx, c.DSN("postgres"), "CREATE DATABASE app"); err != nil {
		t.Fatalf("pgtest: create database app: %v", err)
	}
	if err := postgres.Migrate(ctx, c.DSN("app")); err != nil {
		t.Fatalf("pgtest: migrate app: %v", err)
	}
	return c, c.DSN("app")
}

func execSQL(ctx context.Context, dsn, sql string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(context.Background()) }()
	_, err = conn.Exec(ctx, sql)
	return err
}

// withDatabase returns dsn with its database replaced by name.
func withDatabase(dsn, name string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.Path = "/" + name
		return u.String()
	}
	return strings.TrimSpace(dsn) + " dbname=" + name // keyword/value form: the last dbname wins
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Cluster is a throwaway Postgres server (see internal/pgcluster).
type Cluster = pgcluster.Cluster
