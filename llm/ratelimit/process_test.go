package ratelimit_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/anthropic"
	"github.com/agentfleet/agentfleet/llm/ratelimit"
	"github.com/agentfleet/agentfleet/llm/sim"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/natstest"
)

// The environment of a worker process of TestSharedLimitThreeProcesses.
const (
	envNATS  = "RATELIMIT_TEST_NATS"
	envModel = "RATELIMIT_TEST_MODEL"
	envCalls = "RATELIMIT_TEST_CALLS"
	envRPM   = "RATELIMIT_TEST_RPM"
)

// TestMain runs a worker process when the parent test started this binary
// as one, else the tests.
func TestMain(m *testing.M) {
	if os.Getenv(envNATS) != "" {
		os.Exit(workerProcess())
	}
	os.Exit(m.Run())
}

// workerProcess makes its calls through a limiter of its own over the
// shared bucket and prints "ok N limited M".
func workerProcess() int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	calls, _ := strconv.Atoi(os.Getenv(envCalls))
	rpm, _ := strconv.ParseFloat(os.Getenv(envRPM), 64)
	nc, err := queue.Connect(queue.ConnectOptions{URL: os.Getenv(envNATS), Name: "ratelimit-test"})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	defer nc.Close()
	q, err := queue.Open(ctx, nc, queue.Config{})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	kv, err := q.KeyValue(ctx, "ratelimits", "test")
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	lim, err := ratelimit.New(kv, ratelimit.Rules{{Provider: "anthropic", Limits: ratelimit.Limits{RequestsPerMinute: rpm}}}, "p"+strconv.Itoa(os.Getpid()))
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	client, err := anthropic.New(anthropic.Config{BaseURL: os.Getenv(envModel), APIKey: "k", Retry: llm.RetryPolicy{MaxAttempts: 1},
		HTTPClient: &http.Client{Transport: lim.Transport(nil)}})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	ok, limited := hammer(ctx, worker{lim: lim, client: client}, calls)
	fmt.Printf("ok %d limited %d\n", ok, limited)
	return 0
}

// hammer makes calls from 4 goroutines.
func hammer(ctx context.Context, w worker, calls int) (ok, limited int) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	jobs := make(chan struct{}, calls)
	for range calls {
		jobs <- struct{}{}
	}
	close(jobs)
	for range 4 {
		wg.Go(func() {
			for range jobs {
				err := call(ctx, w, nil)
				mu.Lock()
				if err == nil {
					ok++
				} else if llm.KindOf(err) == llm.ErrRateLimited {
					limited++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return ok, limited
}

// TestSharedLimitThreeProcesses: three worker processes, each with its own
// NATS connection and limiter, share 1200 requests a minute against a
// provider that enforces it with 429s: none is refused.
func TestSharedLimitThreeProcesses(t *testing.T) {
	const rpm, perProcess = 1200, 30
	ns := natstest.Start(t)
	srv := sim.NewServer()
	defer srv.Close()
	srv.SetDefault(sim.Text("ok"))
	enforced := srv.EnforceRateLimit(rpm, 2*time.Second)
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	outs := make([]string, 3)
	var wg sync.WaitGroup
	for i := range outs {
		wg.Go(func() {
			cmd := exec.Command(bin)
			cmd.Env = append(os.Environ(), envNATS+"="+ns.URL, envModel+"="+srv.URL(),
				envCalls+"="+strconv.Itoa(perProcess), envRPM+"="+strconv.Itoa(rpm))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("worker process %d: %v\n%s", i, err, out)
			}
			outs[i] = strings.TrimSpace(string(out))
		})
	}
	wg.Wait()
	for i, out := range outs {
		if out != fmt.Sprintf("ok %d limited 0", perProcess) {
			t.Errorf("worker process %d printed %q, want every call ok", i, out)
		}
	}
	st := enforced.Stats()
	if st.Admitted != 3*perProcess || st.Limited != 0 {
		t.Fatalf("the provider admitted %d and refused %d, want %d and none", st.Admitted, st.Limited, 3*perProcess)
	}
	t.Logf("3 processes, %d requests in %s at %d rpm", st.Admitted, st.Last.Sub(st.First).Round(time.Millisecond), rpm)
}
