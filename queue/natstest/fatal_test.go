package natstest

import (
	"net"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

// A node whose route port is taken fails its start with the server's own
// reason, which is what lets StartCluster retry on fresh ports.
func TestStartFailsWithTheReasonWhenAPortIsTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	opts := Options(t.TempDir())
	opts.JetStream = false // a lone clustered JetStream node refuses to start for another reason
	opts.Cluster = server.ClusterOpts{Name: "taken", Host: "127.0.0.1", Port: l.Addr().(*net.TCPAddr).Port}
	s, err := run(opts)
	if err == nil {
		s.Shutdown()
		t.Fatal("run started a server on a taken route port")
	}
	if !strings.Contains(err.Error(), "router port") {
		t.Fatalf("run: %v; want the route listener's error", err)
	}
}
