package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/agentfleet/agentfleet/migrations"
	"github.com/agentfleet/agentfleet/store"
)

// Config configures a Store. The zero value of each field but DSN means its default.
type Config struct {
	// DSN is a libpq connection string or postgres:// URL. Required.
	DSN string
	// MaxConns caps the pool. Default 16.
	MaxConns int32
	// Limits caps payload sizes; zero fields are the store defaults.
	Limits store.Limits
	// Now is the clock for stored times. Default time.Now.
	Now func() time.Time
}

// WithDefaults fills the zero fields.
func (c Config) WithDefaults() Config {
	if c.MaxConns == 0 {
		c.MaxConns = 16
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	c.Limits = c.Limits.WithDefaults()
	return c
}

// Validate names the first wrong field.
func (c Config) Validate() error {
	if c.DSN == "" {
		return errors.New("postgres.Config.DSN is required: set AGENTFLEET_DATABASE_URL to a postgres:// URL")
	}
	if c.MaxConns < 1 {
		return fmt.Errorf("postgres.Config.MaxConns must be >= 1, got %d", c.MaxConns)
	}
	return c.Limits.Validate()
}

// Store is the Postgres implementation of store.Store.
type Store struct {
	pool      *pgxpool.Pool
	limits    store.Limits
	now       func() time.Time
	closeOnce sync.Once
}

var _ store.Store = (*Store)(nil)

// Open connects a pool and checks that the server answers. It does not
// migrate; run Migrate (or `dispatcher migrate up`) first.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	pc, err := pgxpool.ParseConfig(cfg.DSN)
	if err != nil {
		return nil, fmt.Errorf("postgres: bad DSN: %w", err)
	}
	pc.MaxConns = cfg.MaxConns
	pc.AfterConnect = func(_ context.Context, c *pgx.Conn) error {
		registerUUID(c.TypeMap())
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s := &Store{pool: pool, limits: cfg.Limits, now: cfg.Now}
	if err := s.Ping(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// Ping checks that the server answers.
func (s *Store) Ping(ctx context.Context) error {
	return translate("Ping", s.pool.Ping(ctx))
}

// Close closes the pool. Safe to call twice.
func (s *Store) Close() error {
	s.closeOnce.Do(s.pool.Close)
	return nil
}

func (s *Store) stamp() time.Time { return store.Timestamp(s.now()) }

// OpenDB opens a database/sql handle on dsn through pgx, for migrations
// and tools that need database/sql.
func OpenDB(dsn string) (*sql.DB, error) {
	cfg, err := pgxConnConfig(dsn)
	if err != nil {
		return nil, err
	}
	return stdlib.OpenDB(*cfg), nil
}

// Migrate applies every pending migration to the database at dsn.
func Migrate(ctx context.Context, dsn string) error {
	db, err := OpenDB(dsn)
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	_, err = migrations.Up(ctx, db, migrations.Postgres)
	return err
}

// ErrNoSchema: the database answers but has none of the fleet's tables.
var ErrNoSchema = errors.New("postgres: the database has no agentfleet tables; run `dispatcher migrate up` first")

// CheckSchema reports ErrNoSchema when the database was never migrated.
func (s *Store) CheckSchema(ctx context.Context) error {
	var present bool
	if err := s.pool.QueryRow(ctx, `SELECT to_regclass('tasks') IS NOT NULL`).Scan(&present); err != nil {
		return translate("CheckSchema", err)
	}
	if !present {
		return ErrNoSchema
	}
	return nil
}
