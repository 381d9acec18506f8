// Package migrations holds agentfleet's SQL schema, embedded, one directory
// per dialect (postgres/, sqlite/), and runs it with pressly/goose v3.
//
// Migrations are numbered files with goose Up and Down sections. Postgres
// runs take a session advisory lock, so dispatchers starting together apply
// each migration once. Each migration runs in its own transaction.
package migrations

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// FS holds postgres/*.sql and sqlite/*.sql.
//
//go:embed postgres/*.sql sqlite/*.sql
var FS embed.FS

// Dialect names a SQL dialect and the directory of its migrations.
type Dialect string

// Dialects.
const (
	Postgres Dialect = "postgres"
	SQLite   Dialect = "sqlite"
)

// Status is the state of one migration.
type Status struct {
	Version   int64
	Name      string    // file name
	Applied   bool      //
	AppliedAt time.Time // zero when pending
}

// Result is one migration that ran.
type Result struct {
	Version   int64
	Name      string
	Direction string // "up" or "down"
	Duration  time.Duration
}

// Up applies every pending migration.
func Up(ctx context.Context, db *sql.DB, d Dialect) ([]Result, error) {
	p, err := provider(db, d)
	if err != nil {
		return nil, err
	}
	res, err := p.Up(ctx)
	return results(res), wrap("up", err)
}

// Down rolls back the last applied migration (none applied: nothing, no error).
func Down(ctx context.Context, db *sql.DB, d Dialect) ([]Result, error) {
	p, err := provider(db, d)
	if err != nil {
		return nil, err
	}
	if v, err := p.GetDBVersion(ctx); err != nil || v == 0 {
		return nil, wrap("down", err)
	}
	res, err := p.Down(ctx)
	if res == nil {
		return nil, wrap("down", err)
	}
	return results([]*goose.MigrationResult{res}), wrap("down", err)
}

// DownTo rolls back every migration above version (0: all of them).
func DownTo(ctx context.Context, db *sql.DB, d Dialect, version int64) ([]Result, error) {
	p, err := provider(db, d)
	if err != nil {
		return nil, err
	}
	res, err := p.DownTo(ctx, version)
	return results(res), wrap("down", err)
}

// List returns the state of every known migration, oldest first.
func List(ctx context.Context, db *sql.DB, d Dialect) ([]Status, error) {
	p, err := provider(db, d)
	if err != nil {
		return nil, err
	}
	st, err := p.Status(ctx)
	if err != nil {
		return nil, wrap("status", err)
	}
	out := make([]Status, 0, len(st))
	for _, s := range st {
		out = append(out, Status{
			Version: s.Source.Version, Name: s.Source.Path,
			Applied: s.State == goose.StateApplied, AppliedAt: s.AppliedAt,
		})
	}
	return out, nil
}

func provider(db *sql.DB, d Dialect) (*goose.Provider, error) {
	var gd goose.Dialect
	var opts []goose.ProviderOption
	switch d {
	case Postgres:
		gd = goose.DialectPostgres
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return nil, err
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	case SQLite:
		gd = goose.DialectSQLite3
	default:
		return nil, fmt.Errorf("migrations: unknown dialect %q (use %q or %q)", d, Postgres, SQLite)
	}
	sub, err := fs.Sub(FS, string(d))
	if err != nil {
		return nil, err
	}
	return goose.NewProvider(gd, db, sub, append(opts, goose.WithDisableGlobalRegistry(true))...)
}

func results(rs []*goose.MigrationResult) []Result {
	out := make([]Result, 0, len(rs))
	for _, r := range rs {
		out = append(out, Result{Version: r.Source.Version, Name: r.Source.Path, Direction: r.Direction, Duration: r.Duration})
	}
	return out
}

func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("migrations: %s: %w", op, err)
}
