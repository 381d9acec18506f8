// Command river-noop measures River's throughput on no-op jobs, on the
// Postgres of $AGENTFLEET_DATABASE_URL, so `agentfleet-dev bench` on the
// same database has a reference point (docs/bench.md). It is a module of
// its own: the fleet never links River.
//
//	go run . --jobs 2000 --workers 2
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// noopArgs is a job that does nothing.
type noopArgs struct{}

func (noopArgs) Kind() string { return "noop" }

type noopWorker struct {
	river.WorkerDefaults[noopArgs]
	done *atomic.Int64
	all  chan struct{}
	n    int64
}

func (w *noopWorker) Work(context.Context, *river.Job[noopArgs]) error {
	if w.done.Add(1) == w.n {
		close(w.all)
	}
	return nil
}

func main() {
	jobs := flag.Int("jobs", 2000, "no-op jobs to insert and run")
	clients := flag.Int("workers", 2, "River clients (each a worker process would run one)")
	slots := flag.Int("slots", 100, "MaxWorkers of each client")
	flag.Parse()
	if err := run(*jobs, *clients, *slots); err != nil {
		log.Fatal(err)
	}
}

func run(jobs, clients, slots int) error {
	ctx := context.Background()
	dsn := os.Getenv("AGENTFLEET_DATABASE_URL")
	if dsn == "" {
		return fmt.Errorf("set AGENTFLEET_DATABASE_URL to a Postgres database River may migrate")
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return err
	}
	defer pool.Close()
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return err
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return err
	}
	w := &noopWorker{done: new(atomic.Int64), all: make(chan struct{}), n: int64(jobs)}
	workers := river.NewWorkers()
	river.AddWorker(workers, w)
	var cs []*river.Client[pgx.Tx]
	for range clients {
		c, err := river.NewClient[pgx.Tx](riverpgxv5.New(pool), &river.Config{
			Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: slots}}, Workers: workers,
			FetchCooldown: 10 * time.Millisecond, FetchPollInterval: 50 * time.Millisecond})
		if err != nil {
			return err
		}
		cs = append(cs, c)
	}
	params := make([]river.InsertManyParams, jobs)
	for i := range params {
		params[i] = river.InsertManyParams{Args: noopArgs{}}
	}
	cpu0 := cpuSeconds()
	start := time.Now()
	if _, err := cs[0].InsertMany(ctx, params); err != nil {
		return err
	}
	for _, c := range cs {
		if err := c.Start(ctx); err != nil {
			return err
		}
	}
	<-w.all
	elapsed := time.Since(start)
	cpu := cpuSeconds() - cpu0
	for _, c := range cs {
		_ = c.Stop(ctx)
	}
	fmt.Printf("river %d no-op jobs, %d clients x %d workers: %.1f jobs/s, %.3f ms CPU per job in this process\n",
		jobs, clients, slots, float64(jobs)/elapsed.Seconds(), cpu*1000/float64(jobs))
	return nil
}

// cpuSeconds is this process's user and system CPU time so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
