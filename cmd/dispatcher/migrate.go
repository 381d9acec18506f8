package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/agentfleet/agentfleet/cmd/internal/cli"

	"github.com/spf13/cobra"

	"github.com/agentfleet/agentfleet/migrations"
	"github.com/agentfleet/agentfleet/store/postgres"
	"github.com/agentfleet/agentfleet/store/sqlite"
)

// EnvDatabaseURL names the database when --database-url is not given.
const EnvDatabaseURL = cli.EnvDatabaseURL

func init() { addCommand(newMigrateCmd) }

func newMigrateCmd() *cobra.Command {
	var dbURL string
	cmd := &cobra.Command{
		Use:   "migrate up|down|status",
		Short: "Apply, roll back or list the database migrations",
		Long: `Migrate the agentfleet database.

The database is --database-url, else $` + EnvDatabaseURL + `:
  postgres://user:pass@host:5432/db (or a libpq "host=... dbname=..." string)
  sqlite:///abs/path/agentfleet.db, sqlite:rel/path.db, file:path.db or a plain file path

  up      apply every pending migration
  down    roll back the last migration (--to N: every one above version N; --to 0: all)
  status  list the migrations and whether each is applied`,
	}
	cmd.PersistentFlags().StringVar(&dbURL, "database-url", "", "database URL or SQLite file (default $"+EnvDatabaseURL+")")
	var downTo int64
	up := &cobra.Command{Use: "up", Short: "Apply every pending migration", Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return withDatabase(c.Context(), dbURL, func(db *sql.DB, d migrations.Dialect) error {
				res, err := migrations.Up(c.Context(), db, d)
				printResults(c.OutOrStdout(), res, "already up to date")
				return err
			})
		}}
	down := &cobra.Command{Use: "down", Short: "Roll back the last migration, or down to --to", Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return withDatabase(c.Context(), dbURL, func(db *sql.DB, d migrations.Dialect) error {
				var res []migrations.Result
				var err error
				if c.Flags().Changed("to") {
					res, err = migrations.DownTo(c.Context(), db, d, downTo)
				} else {
					res, err = migrations.Down(c.Context(), db, d)
				}
				printResults(c.OutOrStdout(), res, "nothing to roll back")
				return err
			})
		}}
	down.Flags().Int64Var(&downTo, "to", 0, "roll back every migration above this version (0: all)")
	status := &cobra.Command{Use: "status", Short: "List the migrations and whether each is applied", Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return withDatabase(c.Context(), dbURL, func(db *sql.DB, d migrations.Dialect) error {
				st, err := migrations.List(c.Context(), db, d)
				if err != nil {
					return err
				}
				printStatus(c.OutOrStdout(), st)
				return nil
			})
		}}
	cmd.AddCommand(up, down, status)
	return cmd
}

// withDatabase opens the configured database, runs f and closes it.
func withDatabase(ctx context.Context, flag string, f func(*sql.DB, migrations.Dialect) error) error {
	url := flag
	if url == "" {
		url = os.Getenv(EnvDatabaseURL)
	}
	if url == "" {
		return usageErrorf("no database: pass --database-url or set %s (postgres://... or a SQLite file path)", EnvDatabaseURL)
	}
	db, d, err := openDatabase(url)
	if err != nil {
		return failf("%v", err)
	}
	defer func() { _ = db.Close() }()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		return failf("cannot reach the %s database: %v", d, err)
	}
	if err := f(db, d); err != nil {
		return failf("%v", err)
	}
	return nil
}

// openDatabase recognizes a Postgres URL or DSN, or a SQLite file.
func openDatabase(url string) (*sql.DB, migrations.Dialect, error) {
	if path, ok := cli.SQLitePath(url); ok {
		if path == "" {
			return nil, "", fmt.Errorf("database URL %q names no SQLite file", url)
		}
		if dir := filepath.Dir(path); dir != "" {
			if _, err := os.Stat(dir); err != nil {
				return nil, "", fmt.Errorf("SQLite file %s: directory %s does not exist", path, dir)
			}
		}
		db, err := sqlite.OpenDB(path, 10*time.Second, false)
		if err == nil {
			db.SetMaxOpenConns(1)
		}
		return db, migrations.SQLite, err
	}
	db, err := postgres.OpenDB(url)
	return db, migrations.Postgres, err
}

func printResults(w io.Writer, res []migrations.Result, none string) {
	if len(res) == 0 {
		fmt.Fprintln(w, none)
		return
	}
	for _, r := range res {
		fmt.Fprintf(w, "%-4s %05d %s (%s)\n", r.Direction, r.Version, r.Name, r.Duration.Round(time.Millisecond))
	}
}

func printStatus(w io.Writer, st []migrations.Status) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tNAME\tAPPLIED")
	for _, s := range st {
		applied := "pending"
		if s.Applied {
			applied = s.AppliedAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%05d\t%s\t%s\n", s.Version, s.Name, applied)
	}
	_ = tw.Flush()
}
