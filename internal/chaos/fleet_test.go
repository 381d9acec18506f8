package chaos

import (
	"os"
	"strings"
	"testing"
)

// The chaos run configures its NATS nodes from the deployment's own file;
// this fails as soon as that file changes in a way the rewrite misses.
func TestLocalNATSConfRewritesTheDeploymentFile(t *testing.T) {
	base, err := os.ReadFile("../../deploy/nats/nats.conf")
	if err != nil {
		t.Fatal(err)
	}
	routes := []string{"nats-route://127.0.0.1:7001", "nats-route://127.0.0.1:7002", "nats-route://127.0.0.1:7003"}
	conf, err := localNATSConf(string(base), 5001, 6001, 7001, "/tmp/x", routes)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range append(routes, "listen: 127.0.0.1:5001", "http: 127.0.0.1:6001", "listen: 127.0.0.1:7001", "store_dir: /tmp/x") {
		if !strings.Contains(conf, want) {
			t.Errorf("rewritten configuration lacks %q", want)
		}
	}
	if strings.Contains(conf, "0.0.0.0") || strings.Contains(conf, "nats-1:") {
		t.Errorf("rewritten configuration still listens publicly or routes to compose hosts:\n%s", conf)
	}
}
