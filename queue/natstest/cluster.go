package natstest

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Cluster is a JetStream cluster of in-process servers sharing one route mesh.
type Cluster struct {
	// Servers are the nodes, in start order.
	Servers []*Server
}

// StartCluster runs an n-node JetStream cluster (n >= 3 for a quorum that survives one loss)
// for the duration of the test and waits until it has elected a meta leader.
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	if n < 1 {
		t.Fatalf("natstest: StartCluster needs n >= 1, got %d", n)
	}
	base := t.TempDir()
	var err error
	for attempt := range clusterStartAttempts {
		var c *Cluster
		c, err = startCluster(filepath.Join(base, fmt.Sprintf("try%d", attempt)), n)
		if err == nil {
			t.Cleanup(c.Shutdown)
			if err := c.WaitForLeader(readyTimeout); err != nil {
				t.Fatalf("natstest: %v", err)
			}
			return c
		}
	}
	t.Fatalf("natstest: %v (after %d attempts)", err, clusterStartAttempts)
	return nil
}

// clusterStartAttempts bounds the starts of a cluster. The route ports are reserved and
// released before the nodes listen on them, so under a loaded test run another socket can take
// one in between; a fresh set of ports nearly always does.
const clusterStartAttempts = 4

// startCluster starts n nodes routed to each other on freshly reserved ports, with their
// stores under base; on an error, the nodes already started are shut down.
func startCluster(base string, n int) (*Cluster, error) {
	ports, err := freePorts(n)
	if err != nil {
		return nil, err
	}
	routes := make([]*url.URL, n)
	for i, p := range ports {
		routes[i] = &url.URL{Scheme: "nats", Host: fmt.Sprintf("127.0.0.1:%d", p)}
	}
	c := &Cluster{}
	for i := range n {
		opts := Options(filepath.Join(base, fmt.Sprintf("n%d", i)))
		opts.ServerName = fmt.Sprintf("agentfleet-test-%d", i)
		opts.Cluster = server.ClusterOpts{Name: "agentfleet-test", Host: "127.0.0.1", Port: ports[i]}
		opts.Routes = routes
		s, err := run(opts)
		if err != nil {
			c.Shutdown()
			return nil, fmt.Errorf("cluster node %d: %w", i, err)
		}
		c.Servers = append(c.Servers, s)
	}
	return c, nil
}

// URLs returns the client URLs of every node, comma separated, the form nats.Connect accepts.
func (c *Cluster) URLs() string {
	urls := make([]string, 0, len(c.Servers))
	for _, s := range c.Servers {
		urls = append(urls, s.URL)
	}
	return strings.Join(urls, ",")
}

// Connect opens a connection that knows every node, closed when the test ends.
func (c *Cluster) Connect(t testing.TB, opts ...nats.Option) *nats.Conn {
	t.Helper()
	return connect(t, c.URLs(), opts...)
}

// WaitForLeader waits until a running node is the JetStream meta leader, every running node
// is current with it, and the leader counts every running node as an online peer (before
// that, creating a replicated stream fails with "no suitable peers for placement").
func (c *Cluster) WaitForLeader(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if c.hasCurrentLeader() {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("JetStream cluster has no meta leader seeing every node online after %s", timeout)
		}
		<-tick.C
	}
}

func (c *Cluster) hasCurrentLeader() bool {
	var leader *server.Server
	running := 0
	for _, s := range c.Servers {
		if !s.NATS.Running() {
			continue
		}
		if !s.NATS.JetStreamIsCurrent() {
			return false
		}
		running++
		if s.NATS.JetStreamIsLeader() {
			leader = s.NATS
		}
	}
	return leader != nil && len(leader.JetStreamClusterPeers()) >= running
}

// Shutdown stops every node. It is safe to call twice.
func (c *Cluster) Shutdown() {
	for _, s := range c.Servers {
		s.Shutdown()
	}
}

// freePorts reserves n loopback ports by listening and closing. Routes must be known before the
// nodes start, so the cluster ports cannot be random; a port taken in between fails the start.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("reserve a cluster port: %w", err)
		}
		defer func() { _ = l.Close() }()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
