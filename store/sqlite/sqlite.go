package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/agentfleet/agentfleet/migrations"
	"github.com/agentfleet/agentfleet/store"
)

// Config configures a Store. The zero value of each field but Path means its default.
type Config struct {
	// Path is the database file, created when missing. Required.
	Path string
	// MaxReaders caps the reader pool. Default 4.
	MaxReaders int
	// BusyTimeout is how long a connection waits for a lock. Default 10 s.
	BusyTimeout time.Duration
	// NoMigrate skips applying pending migrations on Open.
	NoMigrate bool
	// Limits caps payload sizes; zero fields are the store defaults.
	Limits store.Limits
	// Now is the clock for stored times. Default time.Now.
	Now func() time.Time
}

// WithDefaults fills the zero fields.
func (c Config) WithDefaults() Config {
	if c.MaxReaders == 0 {
		c.MaxReaders = 4
	}
	if c.BusyTimeout == 0 {
		c.BusyTimeout = 10 * time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	c.Limits = c.Limits.WithDefaults()
	return c
}

// Validate names the first wrong field.
func (c Config) Validate() error {
	switch {
	case c.Path == "":
		return errors.New("sqlite.Config.Path is required: a database file such as ./agentfleet.db")
	case c.Path == ":memory:":
		return errors.New("sqlite.Config.Path cannot be :memory: (the writer and readers need one shared file); use a file in a temporary directory")
	case c.MaxReaders < 1:
		return fmt.Errorf("sqlite.Config.MaxReaders must be >= 1, got %d", c.MaxReaders)
	case c.BusyTimeout < 0:
		return fmt.Errorf("sqlite.Config.BusyTimeout must be >= 0, got %s", c.BusyTimeout)
	}
	return c.Limits.Validate()
}

// Store is the SQLite implementation of store.Store: one writer connection
// (so writes are serialized and compare-and-set is trivially atomic) and a
// pool of read-only connections, in WAL mode so readers never block the
// writer.
type Store struct {
	w, r      *sql.DB
	limits    store.Limits
	now       func() time.Time
	closeOnce sync.Once
}

var _ store.Store = (*Store)(nil)

// Open opens (creating if needed) the database and migrates it up unless
// cfg.NoMigrate.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	w, err := OpenDB(cfg.Path, cfg.BusyTimeout, false)
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	r, err := OpenDB(cfg.Path, cfg.BusyTimeout, true)
	if err != nil {
		_ = w.Close()
		return nil, err
	}
	r.SetMaxOpenConns(cfg.MaxReaders)
	s := &Store{w: w, r: r, limits: cfg.Limits, now: cfg.Now}
	if err := s.Ping(ctx); err != nil {
		_ = s.Close()
		return nil, err
	}
	if !cfg.NoMigrate {
		if _, err := migrations.Up(ctx, w, migrations.SQLite); err != nil {
			_ = s.Close()
			return nil, err
		}
	}
	return s, nil
}

// OpenDB opens a database/sql handle on the file at path with the pragmas
// the store relies on: WAL, a busy timeout, foreign keys, and immediate
// transactions (a writer takes the lock at BEGIN, so it never fails to
// upgrade a read lock later).
func OpenDB(path string, busy time.Duration, readOnly bool) (*sql.DB, error) {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	}
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	return db, nil
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.w.PingContext(ctx); err != nil {
		return translate("Ping", err)
	}
	return translate("Ping", s.r.PingContext(ctx))
}

// Close closes both pools. Safe to call twice.
func (s *Store) Close() error {
	var err error
	s.closeOnce.Do(func() { err = errors.Join(s.r.Close(), s.w.Close()) })
	return err
}

func (s *Store) stamp() int64 { return store.Timestamp(s.now()).UnixMicro() }

// tx runs f in a write transaction.
func (s *Store) tx(ctx context.Context, op string, f func(tx *sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return translate(op, err)
	}
	if err := f(tx); err != nil {
		_ = tx.Rollback()
		return translateKeep(op, err)
	}
	return translate(op, tx.Commit())
}
