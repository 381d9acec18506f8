package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/internal/pgcluster"
)

const (
	natsNodes      = 3
	workers        = 3
	apiToken       = "chaos-token"
	natsPassword   = "chaos-nats-password" //nolint:gosec // G101: a throwaway fleet's password, on loopback
	shortGraceNode = 2                     // the worker started with a 1 s drain grace
)

// fleetProcs is the production-shaped fleet of a run: every part a
// separate process but Postgres's server, which is a child too.
type fleetProcs struct {
	cfg Config
	dir string

	nats       [natsNodes]*proc
	natsURLs   []string
	monitors   [natsNodes]string
	pg         *pgcluster.Cluster
	dsn        string
	model      *proc
	modelURL   string
	dispatcher *proc
	apiURL     string
	workers    [workers]*proc
	readyURLs  [workers]string

	nc     *nats.Conn
	js     jetstream.JetStream
	db     *pgxpool.Pool
	client *client.Client
}

// startFleet starts NATS, Postgres, the model, the dispatcher and the
// workers, and waits until each is ready.
func startFleet(ctx context.Context, cfg Config) (*fleetProcs, error) {
	f := &fleetProcs{cfg: cfg, dir: cfg.Dir}
	steps := []func(context.Context) error{f.startNATS, f.startPostgres, f.startModel, f.startDispatcher, f.startWorkers, f.connect}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			f.close()
			return nil, err
		}
	}
	return f, nil
}

// close stops every process, workers first.
func (f *fleetProcs) close() {
	if f.nc != nil {
		f.nc.Close()
	}
	if f.db != nil {
		f.db.Close()
	}
	for _, p := range f.workers {
		if p != nil {
			_ = p.stop(syscall.SIGTERM, 5*time.Second)
		}
	}
	for _, p := range append([]*proc{f.dispatcher, f.model}, f.nats[:]...) {
		if p != nil {
			_ = p.stop(syscall.SIGTERM, 10*time.Second)
		}
	}
	if f.pg != nil {
		f.pg.Close()
	}
}

func (f *fleetProcs) newProc(name, bin string, args, env []string) *proc {
	return &proc{name: name, path: filepath.Join(f.cfg.BinDir, bin), args: args, env: env,
		log: filepath.Join(f.dir, name+".log")}
}

// startNATS writes one configuration per node from deploy/nats/nats.conf
// (ports and paths made local) and starts the three nodes together.
func (f *fleetProcs) startNATS(ctx context.Context) error {
	base, err := os.ReadFile(f.cfg.NATSConf)
	if err != nil {
		return fmt.Errorf("chaos: read the NATS configuration: %w", err)
	}
	ports, err := freePorts(3 * natsNodes)
	if err != nil {
		return err
	}
	var routes []string
	for i := range natsNodes {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", ports[2*natsNodes+i]))
	}
	for i := range natsNodes {
		client, monitor, route := ports[i], ports[natsNodes+i], ports[2*natsNodes+i]
		conf, err := localNATSConf(string(base), client, monitor, route, filepath.Join(f.dir, fmt.Sprintf("nats-%d", i+1)), routes)
		if err != nil {
			return err
		}
		path := filepath.Join(f.dir, fmt.Sprintf("nats-%d.conf", i+1))
		if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
			return err
		}
		f.nats[i] = f.newProc(fmt.Sprintf("nats-%d", i+1), "nats-server", []string{"-c", path}, []string{
			fmt.Sprintf("NATS_SERVER_NAME=nats-%d", i+1), "NATS_DISPATCHER_PASSWORD=" + natsPassword,
			"NATS_WORKER_PASSWORD=" + natsPassword, "NATS_OBSERVER_DEFAULT_PASSWORD=" + natsPassword, "NATS_SYS_PASSWORD=" + natsPassword})
		f.natsURLs = append(f.natsURLs, fmt.Sprintf("nats://127.0.0.1:%d", client))
		f.monitors[i] = fmt.Sprintf("http://127.0.0.1:%d", monitor)
		if err := f.nats[i].start(); err != nil {
			return err
		}
	}
	for i := range natsNodes {
		if err := waitHTTP(ctx, f.monitors[i]+"/healthz?js-enabled-only=true", f.nats[i]); err != nil {
			return err
		}
	}
	return nil
}

// localNATSConf rewrites the deployment's node configuration for this
// machine: loopback ports instead of 4222/8222/6222, a data directory
// of the run, routes to the three local nodes.
func localNATSConf(conf string, client, monitor, route int, storeDir string, routes []string) (string, error) {
	replace := []struct{ old, new string }{
		{"listen: 0.0.0.0:4222", fmt.Sprintf("listen: 127.0.0.1:%d", client)},
		{"http: 0.0.0.0:8222", fmt.Sprintf("http: 127.0.0.1:%d", monitor)},
		{"listen: 0.0.0.0:6222", fmt.Sprintf("listen: 127.0.0.1:%d", route)},
		{"store_dir: /data/jetstream", "store_dir: " + storeDir},
	}
	for i, r := range routes {
		replace = append(replace, struct{ old, new string }{fmt.Sprintf("nats-route://nats-%d:6222", i+1), r})
	}
	for _, r := range replace {
		if !strings.Contains(conf, r.old) {
			return "", fmt.Errorf("chaos: the NATS configuration no longer has %q; update localNATSConf to match it", r.old)
		}
		conf = strings.ReplaceAll(conf, r.old, r.new)
	}
	return conf, nil
}

func (f *fleetProcs) startPostgres(ctx context.Context) error {
	pg, err := pgcluster.StartCluster(ctx)
	if err != nil {
		return err
	}
	f.pg, f.dsn = pg, pg.DSN("postgres")
	migrate := f.newProc("migrate", "dispatcher", []string{"migrate", "up", "--database-url", f.dsn}, nil)
	if err := migrate.start(); err != nil {
		return err
	}
	<-migrate.done
	if code := migrate.cmd.ProcessState.ExitCode(); code != 0 {
		return fmt.Errorf("chaos: dispatcher migrate up exited %d (see %s)", code, migrate.log)
	}
	return nil
}

func (f *fleetProcs) startModel(ctx context.Context) error {
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	f.modelURL = "http://" + addr
	f.model = f.newProc("model", "simllm", []string{"-scripted", "-addr", addr}, nil)
	if err := f.model.start(); err != nil {
		return err
	}
	return waitHTTP(ctx, f.modelURL+"/stats", f.model)
}

// commonEnv is the configuration the dispatcher and the workers share.
func (f *fleetProcs) commonEnv(user string) []string {
	return []string{
		"AGENTFLEET_DATABASE_URL=" + f.dsn,
		"AGENTFLEET_NATS_URL=" + strings.Join(f.natsURLs, ","),
		"AGENTFLEET_NATS_USER=" + user,
		"AGENTFLEET_NATS_PASSWORD=" + natsPassword,
		"AGENTFLEET_NATS_REPLICAS=3",
		"AGENTFLEET_NATS_ACK_WAIT=" + f.cfg.AckWait.String(),
		"AGENTFLEET_NATS_WORKER_GONE_AFTER=" + f.cfg.WorkerGoneAfter.String(),
		"AGENTFLEET_LOG_FORMAT=text",
		"AGENTFLEET_POLICY_SHARED_ROOTS=" + filepath.Join(f.dir, "shared"), // treeSpec's working directories
		"AGENTFLEET_POLICY_REPOSITORIES_ALLOW_LOCAL=" + f.dir,              // localTreeSpec's upstream
	}
}

func (f *fleetProcs) startDispatcher(ctx context.Context) error {
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	f.apiURL = "http://" + addr
	env := append(f.commonEnv("dispatcher"), "AGENTFLEET_LISTEN="+addr, "AGENTFLEET_TOKEN="+apiToken,
		"AGENTFLEET_PROFILES=anthropic", "AGENTFLEET_DEFAULT_PROFILE=anthropic")
	env = append(env, f.gitStoreEnv()...)
	f.dispatcher = f.newProc("dispatcher", "dispatcher", []string{"serve"}, env)
	if err := f.dispatcher.start(); err != nil {
		return err
	}
	if err := waitHTTP(ctx, f.apiURL+"/readyz", f.dispatcher); err != nil {
		return err
	}
	f.client, err = client.New(f.apiURL, apiToken, nil)
	return err
}

// workerConfig is the file each worker reads: the provider (the model
// process) is a map, which the environment cannot express.
func (f *fleetProcs) workerConfig(i int) (string, error) {
	grace := f.cfg.DrainGrace
	if i == shortGraceNode {
		grace = time.Second
	}
	cfg := map[string]any{
		"worker_id":          fmt.Sprintf("worker-%d", i+1),
		"sessions":           f.cfg.Slots,
		"workspace_root":     f.workspaceRoot(i),
		"heartbeat_interval": f.cfg.Heartbeat.String(),
		"stale_after":        f.cfg.StaleAfter.String(),
		"drain_grace":        grace.String(),
		"providers": map[string]any{"anthropic": map[string]any{
			"api_key": "chaos-key", "base_url": f.modelURL, "default_model": "claude-chaos"}},
		"concurrency_keys": map[string]any{cappedKey: map[string]any{"max_running": cappedMax}},
	}
	f.gitStoreWorkerConfig(cfg) // localtree.go
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(f.dir, fmt.Sprintf("worker-%d.json", i+1))
	return path, os.WriteFile(path, data, 0o600)
}

func (f *fleetProcs) startWorkers(ctx context.Context) error {
	for i := range workers {
		path, err := f.workerConfig(i)
		if err != nil {
			return err
		}
		addr, err := freeAddr()
		if err != nil {
			return err
		}
		f.readyURLs[i] = "http://" + addr + "/readyz"
		env := append(f.commonEnv("worker"), "AGENTFLEET_LISTEN="+addr)
		f.workers[i] = f.newProc(fmt.Sprintf("worker-%d", i+1), "worker", []string{"run", "--config", path}, env)
		if err := f.startWorker(ctx, i); err != nil {
			return err
		}
	}
	return nil
}

// startWorker starts worker i (again) and waits until it is ready.
func (f *fleetProcs) startWorker(ctx context.Context, i int) error {
	if err := f.workers[i].start(); err != nil {
		return err
	}
	return waitHTTP(ctx, f.readyURLs[i], f.workers[i])
}

// connect opens the run's own view: NATS (as the dispatcher's user) to
// read events and find stream leaders, and Postgres to verify.
func (f *fleetProcs) connect(ctx context.Context) error {
	var err error
	f.nc, err = nats.Connect(strings.Join(f.natsURLs, ","), nats.UserInfo("dispatcher", natsPassword),
		nats.MaxReconnects(-1), nats.Name("agentfleet-chaos"))
	if err != nil {
		return fmt.Errorf("chaos: connect to NATS: %w", err)
	}
	if f.js, err = jetstream.New(f.nc); err != nil {
		return err
	}
	f.db, err = pgxpool.New(ctx, f.dsn)
	return err
}

// heal brings back every process a scenario left down.
func (f *fleetProcs) heal(ctx context.Context) error {
	for i, p := range f.nats {
		if !p.running() {
			if err := p.start(); err != nil {
				return err
			}
			if err := waitHTTP(ctx, f.monitors[i]+"/healthz?js-enabled-only=true", p); err != nil {
				return err
			}
		}
	}
	if err := f.pgUp(ctx); err != nil {
		return err
	}
	for i, p := range f.workers {
		if !p.running() {
			if err := f.startWorker(ctx, i); err != nil {
				return err
			}
		}
	}
	if !f.dispatcher.running() {
		return fmt.Errorf("chaos: the dispatcher exited (see %s)", f.dispatcher.log)
	}
	return nil
}

// pgUp starts Postgres if it is stopped (Start refuses a running server).
func (f *fleetProcs) pgUp(ctx context.Context) error {
	conn, err := f.db.Acquire(ctx)
	if err == nil {
		conn.Release()
		return nil
	}
	return f.pg.Start(ctx)
}

// waitHTTP polls url until it answers 200, p exits, or two minutes pass.
func waitHTTP(ctx context.Context, url string, p *proc) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := http.Get(url) //nolint:gosec,noctx // the chaos run polls its own fleet's health page until it answers
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %s", resp.Status)
		}
		select {
		case <-p.done:
			return fmt.Errorf("chaos: %s exited before %s answered (see %s)", p.name, url, p.log)
		case <-ctx.Done():
			return fmt.Errorf("chaos: %s not ready at %s: %v (see %s)", p.name, url, err, p.log)
		case <-tick.C:
		}
	}
}

func freeAddr() (string, error) {
	ports, err := freePorts(1)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("127.0.0.1:%d", ports[0]), nil
}

// freePorts returns n distinct ports free at the time of the call.
func freePorts(n int) ([]int, error) {
	var ports []int
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			_ = ln.Close()
		}
	}()
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, errors.Join(errors.New("chaos: no free port"), err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
