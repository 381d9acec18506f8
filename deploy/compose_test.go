package deploy

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// composeFile is the part of a Compose file the checks read.
type composeFile struct {
	Name     string                    `yaml:"name"`
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
}

type composeService struct {
	Image       string            `yaml:"image"`
	Build       *composeBuild     `yaml:"build"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	DependsOn   map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
	Healthcheck *struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
	Volumes         []string `yaml:"volumes"`
	StopGracePeriod string   `yaml:"stop_grace_period"`
}

type composeBuild struct {
	Context    string `yaml:"context"`
	Dockerfile string `yaml:"dockerfile"`
}

func loadCompose(t *testing.T) composeFile {
	t.Helper()
	var c composeFile
	decodeFile(t, filepath.Join("docker", "compose.yaml"), &c)
	return c
}

func TestComposeServices(t *testing.T) {
	c := loadCompose(t)
	want := []string{"dispatcher", "migrate", "nats-1", "nats-2", "nats-3", "postgres", "worker-1", "worker-2"}
	var got []string
	for name := range c.Services {
		got = append(got, name)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("services %v, want %v", got, want)
	}
	conditions := []string{"service_started", "service_healthy", "service_completed_successfully"}
	for name, s := range c.Services {
		if s.Image == "" && s.Build == nil {
			t.Errorf("service %s has neither image nor build", name)
		}
		for dep, d := range s.DependsOn {
			target, ok := c.Services[dep]
			switch {
			case !ok:
				t.Errorf("service %s depends on %s, which is not a service", name, dep)
			case !slices.Contains(conditions, d.Condition):
				t.Errorf("service %s: depends_on %s condition %q, want one of %v", name, dep, d.Condition, conditions)
			case d.Condition == "service_healthy" && (target.Healthcheck == nil || len(target.Healthcheck.Test) == 0):
				t.Errorf("service %s waits for %s to be healthy, but %s has no healthcheck", name, dep, dep)
			}
		}
		for _, v := range s.Volumes {
			src, _, _ := strings.Cut(v, ":")
			if strings.HasPrefix(src, ".") {
				if _, err := os.Stat(filepath.Join("docker", src)); err != nil {
					t.Errorf("service %s mounts %s: %v", name, src, err)
				}
			} else if _, ok := c.Volumes[src]; !ok {
				t.Errorf("service %s uses volume %s, not declared under volumes", name, src)
			}
		}
		if s.Build != nil {
			df := filepath.Join("docker", s.Build.Context, s.Build.Dockerfile)
			if _, err := os.Stat(df); err != nil {
				t.Errorf("service %s builds %s: %v", name, df, err)
			}
		}
	}
	if cmd := c.Services["migrate"].Command; !slices.Equal(cmd, []string{"migrate", "up"}) {
		t.Errorf("migrate runs %v, want [migrate up]", cmd)
	}
	for _, name := range []string{"dispatcher", "worker-1", "worker-2"} {
		if cond := c.Services[name].DependsOn["migrate"].Condition; cond != "service_completed_successfully" {
			t.Errorf("%s starts on migrate %q, want service_completed_successfully", name, cond)
		}
	}
}

// TestComposeNATSCluster checks that the three nodes form one cluster: the
// config's routes name exactly the NATS services, each node has its own
// server name and data volume, and clients know every node.
func TestComposeNATSCluster(t *testing.T) {
	c := loadCompose(t)
	conf, err := os.ReadFile(filepath.Join("nats", "nats.conf"))
	if err != nil {
		t.Fatal(err)
	}
	routes := regexp.MustCompile(`nats-route://([a-z0-9-]+):6222`).FindAllStringSubmatch(string(conf), -1)
	var routed []string
	for _, r := range routes {
		routed = append(routed, r[1])
	}
	nodes := []string{"nats-1", "nats-2", "nats-3"}
	if !slices.Equal(routed, nodes) {
		t.Fatalf("nats.conf routes to %v, want %v", routed, nodes)
	}
	for _, want := range []string{"jetstream", "server_name: $NATS_SERVER_NAME", "cluster {"} {
		if !strings.Contains(string(conf), want) {
			t.Errorf("nats.conf lacks %q", want)
		}
	}
	for _, n := range nodes {
		s := c.Services[n]
		if s.Environment["NATS_SERVER_NAME"] != n {
			t.Errorf("%s: NATS_SERVER_NAME %q, want %q", n, s.Environment["NATS_SERVER_NAME"], n)
		}
		for _, v := range []string{"NATS_DISPATCHER_PASSWORD", "NATS_WORKER_PASSWORD", "NATS_OBSERVER_DEFAULT_PASSWORD", "NATS_SYS_PASSWORD"} {
			if s.Environment[v] == "" {
				t.Errorf("%s: %s is not set; nats.conf needs it", n, v)
			}
		}
		if !slices.Contains(s.Volumes, n+":/data") {
			t.Errorf("%s: volumes %v lack its own JetStream volume %s:/data", n, s.Volumes, n)
		}
	}
	for _, name := range []string{"dispatcher", "worker-1", "worker-2"} {
		env := c.Services[name].Environment
		for _, n := range nodes {
			if !strings.Contains(env["AGENTFLEET_NATS_URL"], "nats://"+n+":4222") {
				t.Errorf("%s: AGENTFLEET_NATS_URL %q does not list %s", name, env["AGENTFLEET_NATS_URL"], n)
			}
		}
		if env["AGENTFLEET_NATS_REPLICAS"] != "3" {
			t.Errorf("%s: AGENTFLEET_NATS_REPLICAS %q, want 3", name, env["AGENTFLEET_NATS_REPLICAS"])
		}
	}
}

// TestComposeWorkerDrain: Docker must not kill a worker before its drain
// grace has passed.
func TestComposeWorkerDrain(t *testing.T) {
	c := loadCompose(t)
	for _, name := range []string{"worker-1", "worker-2"} {
		s := c.Services[name]
		drain := mustDuration(t, name+" AGENTFLEET_DRAIN_GRACE", s.Environment["AGENTFLEET_DRAIN_GRACE"])
		stop := mustDuration(t, name+" stop_grace_period", s.StopGracePeriod)
		if stop <= drain {
			t.Errorf("%s: stop_grace_period %s must exceed the drain grace %s", name, stop, drain)
		}
	}
}

func mustDuration(t *testing.T, what, s string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return d
}
