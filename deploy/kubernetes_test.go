package deploy

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/agentfleet/agentfleet/queue"
)

// manifest is one Kubernetes object, decoded loosely.
type manifest struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"`
	Spec yaml.Node         `yaml:"spec"`
}

// loadManifests decodes every document of every file listed.
func loadManifests(t *testing.T, files ...string) map[string]manifest {
	t.Helper()
	out := map[string]manifest{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join("kubernetes", f))
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		for {
			var m manifest
			err := dec.Decode(&m)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("kubernetes/%s: %v", f, err)
			}
			out[m.Kind+"/"+m.Metadata.Name] = m
		}
	}
	return out
}

func get(t *testing.T, ms map[string]manifest, key string) *manifest {
	t.Helper()
	m, ok := ms[key]
	if !ok {
		t.Fatalf("no %s in the manifests", key)
	}
	return &m
}

// TestKustomizationListsEveryManifest: a manifest added to the directory
// but not to kustomization.yaml would never be applied.
func TestKustomizationListsEveryManifest(t *testing.T) {
	var k struct {
		Namespace string   `yaml:"namespace"`
		Resources []string `yaml:"resources"`
	}
	decodeFile(t, filepath.Join("kubernetes", "kustomization.yaml"), &k)
	files, err := filepath.Glob(filepath.Join("kubernetes", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range files {
		if base := filepath.Base(f); base != "kustomization.yaml" {
			want = append(want, base)
		}
	}
	got := slices.Clone(k.Resources)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("kustomization.yaml resources %v, want the manifests %v", got, want)
	}
	if k.Namespace != "agentfleet" {
		t.Errorf("namespace %q, want agentfleet", k.Namespace)
	}
}

// workerPod is the part of the worker Deployment the checks read.
type workerPod struct {
	Template struct {
		Spec struct {
			TerminationGracePeriodSeconds int `yaml:"terminationGracePeriodSeconds"`
			Containers                    []struct {
				Name           string `yaml:"name"`
				ReadinessProbe *struct {
					HTTPGet struct{ Path string } `yaml:"httpGet"`
				} `yaml:"readinessProbe"`
				LivenessProbe *struct {
					HTTPGet struct{ Path string } `yaml:"httpGet"`
				} `yaml:"livenessProbe"`
				Resources struct {
					Requests map[string]string `yaml:"requests"`
					Limits   map[string]string `yaml:"limits"`
				} `yaml:"resources"`
			} `yaml:"containers"`
		} `yaml:"spec"`
	} `yaml:"template"`
}

// TestWorkerDeployment: the kubelet must not kill a worker before its drain
// grace has passed, the probes hit the worker's health endpoints, and the
// pod has resources.
func TestWorkerDeployment(t *testing.T) {
	ms := loadManifests(t, "worker.yaml", "configmap.yaml")
	var pod workerPod
	if err := get(t, ms, "Deployment/agentfleet-worker").Spec.Decode(&pod); err != nil {
		t.Fatal(err)
	}
	drain := mustDuration(t, "AGENTFLEET_DRAIN_GRACE", get(t, ms, "ConfigMap/agentfleet-worker").Data["AGENTFLEET_DRAIN_GRACE"])
	term := time.Duration(pod.Template.Spec.TerminationGracePeriodSeconds) * time.Second
	if term < drain+10*time.Second {
		t.Errorf("terminationGracePeriodSeconds %s must exceed the drain grace %s by at least 10s", term, drain)
	}
	if len(pod.Template.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Template.Spec.Containers))
	}
	c := pod.Template.Spec.Containers[0]
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("readiness probe %+v, want GET /readyz", c.ReadinessProbe)
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("liveness probe %+v, want GET /healthz", c.LivenessProbe)
	}
	for _, r := range []string{"cpu", "memory"} {
		if c.Resources.Requests[r] == "" {
			t.Errorf("worker requests no %s", r)
		}
	}
	if c.Resources.Limits["memory"] == "" {
		t.Error("worker has no memory limit")
	}
}

// TestKEDATrigger: the scaler must watch the consumer the workers really
// pull from, and aim at one worker per AGENTFLEET_SESSIONS tasks.
func TestKEDATrigger(t *testing.T) {
	ms := loadManifests(t, "keda-scaledobject.yaml", "configmap.yaml")
	var spec struct {
		ScaleTargetRef  struct{ Name string } `yaml:"scaleTargetRef"`
		MinReplicaCount int                   `yaml:"minReplicaCount"`
		MaxReplicaCount int                   `yaml:"maxReplicaCount"`
		Triggers        []struct {
			Type     string            `yaml:"type"`
			Metadata map[string]string `yaml:"metadata"`
		} `yaml:"triggers"`
	}
	if err := get(t, ms, "ScaledObject/agentfleet-worker").Spec.Decode(&spec); err != nil {
		t.Fatal(err)
	}
	if spec.ScaleTargetRef.Name != "agentfleet-worker" {
		t.Errorf("scaleTargetRef %q, want agentfleet-worker", spec.ScaleTargetRef.Name)
	}
	if spec.MinReplicaCount < 1 || spec.MaxReplicaCount < spec.MinReplicaCount {
		t.Errorf("replicas %d..%d: want at least one worker and max >= min", spec.MinReplicaCount, spec.MaxReplicaCount)
	}
	if len(spec.Triggers) != 1 || spec.Triggers[0].Type != "nats-jetstream" {
		t.Fatalf("triggers %+v, want one nats-jetstream trigger", spec.Triggers)
	}
	md := spec.Triggers[0].Metadata
	config := get(t, ms, "ConfigMap/agentfleet-config").Data
	worker := get(t, ms, "ConfigMap/agentfleet-worker").Data
	// queue/subjects.go names the durable consumer of a shared queue "queue-<queue>".
	if want := "queue-" + config["AGENTFLEET_QUEUES"]; md["consumer"] != want {
		t.Errorf("consumer %q, want %q (the consumer of queue %q)", md["consumer"], want, config["AGENTFLEET_QUEUES"])
	}
	if md["stream"] != queue.DefaultTasksStream {
		t.Errorf("stream %q, want %q", md["stream"], queue.DefaultTasksStream)
	}
	if md["lagThreshold"] != worker["AGENTFLEET_SESSIONS"] {
		t.Errorf("lagThreshold %q, want AGENTFLEET_SESSIONS %q: one worker per that many queued or running tasks",
			md["lagThreshold"], worker["AGENTFLEET_SESSIONS"])
	}
	if _, err := strconv.Atoi(md["lagThreshold"]); err != nil {
		t.Errorf("lagThreshold %q is not a number", md["lagThreshold"])
	}
	for _, k := range []string{"natsServerMonitoringEndpoint", "account"} {
		if md[k] == "" {
			t.Errorf("trigger metadata lacks %s", k)
		}
	}
}
