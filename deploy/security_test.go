package deploy

import (
	"maps"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// secretVar names a variable that holds a secret.
var secretVar = regexp.MustCompile(`PASSWORD|TOKEN|SECRET`)

// TestComposeShipsNoDefaultSecrets: no secret of compose.yaml has a
// default value (${VAR:-value}); each is required (${VAR:?message}), so
// compose refuses to start until init-secrets.sh or the operator set it.
func TestComposeShipsNoDefaultSecrets(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("docker", "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	refs := regexp.MustCompile(`\$\{([A-Z0-9_]+)(:?[-?])?([^}]*)\}`).FindAllStringSubmatch(string(b), -1)
	required := map[string]bool{}
	for _, m := range refs {
		name, op, val := m[1], m[2], m[3]
		if !secretVar.MatchString(name) {
			continue
		}
		if op != ":?" {
			t.Errorf("compose.yaml: ${%s%s%s}: a secret must be required (${%s:?...}), never defaulted", name, op, val, name)
		}
		required[name] = true
	}
	script, err := os.ReadFile(filepath.Join("docker", "init-secrets.sh"))
	if err != nil {
		t.Fatal(err)
	}
	list := regexp.MustCompile(`(?s)\nsecrets=\(([^)]*)\)`).FindStringSubmatch(string(script))
	if list == nil {
		t.Fatal("init-secrets.sh has no secrets=(...) list of the secrets it generates")
	}
	generated := strings.Fields(list[1])
	for name := range required {
		if !slices.Contains(generated, name) {
			t.Errorf("init-secrets.sh does not generate %s, which compose.yaml requires", name)
		}
	}
	if len(required) < 5 {
		t.Errorf("compose.yaml requires only %v; want the token and every password", required)
	}
}

// plaintextOK reports whether the AGENTFLEET_* settings env of a
// dispatcher or worker pass the binaries' TLS checks: a listen address off
// loopback needs TLS files or behind_tls_proxy (dispatcher only), a
// nats:// URL off loopback TLS files or nats.allow_plaintext.
func plaintextOK(t *testing.T, where string, env map[string]string, dispatcher bool) {
	t.Helper()
	if dispatcher {
		host, _, _ := net.SplitHostPort(env["AGENTFLEET_LISTEN"])
		loopback := host == "localhost" || (net.ParseIP(host) != nil && net.ParseIP(host).IsLoopback())
		if !loopback && env["AGENTFLEET_BEHIND_TLS_PROXY"] != "true" && env["AGENTFLEET_TLS_CERT_FILE"] == "" {
			t.Errorf("%s: listen %q off loopback without AGENTFLEET_TLS_CERT_FILE or AGENTFLEET_BEHIND_TLS_PROXY: the dispatcher would refuse to start",
				where, env["AGENTFLEET_LISTEN"])
		}
	}
	url := env["AGENTFLEET_NATS_URL"]
	if strings.Contains(url, "nats://") && env["AGENTFLEET_NATS_ALLOW_PLAINTEXT"] != "true" && env["AGENTFLEET_NATS_TLS_CA_FILE"] == "" {
		t.Errorf("%s: nats.url %q is plain text without AGENTFLEET_NATS_ALLOW_PLAINTEXT or a TLS file: the process would refuse to start", where, url)
	}
}

// TestComposeTLSSettings: the dispatcher and workers of compose.yaml pass
// the TLS checks they run at start.
func TestComposeTLSSettings(t *testing.T) {
	c := loadCompose(t)
	for _, name := range []string{"dispatcher", "worker-1", "worker-2"} {
		plaintextOK(t, "compose "+name, c.Services[name].Environment, name == "dispatcher")
	}
}

// TestKubernetesTLSSettings: the same for the Kubernetes manifests, the
// shared ConfigMap's settings plus each Deployment's own.
func TestKubernetesTLSSettings(t *testing.T) {
	shared := map[string]string{}
	for doc := range strings.SplitSeq(readFile(t, filepath.Join("kubernetes", "configmap.yaml")), "\n---\n") {
		var cm struct {
			Metadata struct {
				Name string `yaml:"name"`
			} `yaml:"metadata"`
			Data map[string]string `yaml:"data"`
		}
		if err := yaml.Unmarshal([]byte(doc), &cm); err != nil {
			t.Fatalf("configmap.yaml: %v", err)
		}
		if cm.Metadata.Name == "agentfleet-config" {
			shared = cm.Data
		}
	}
	if shared["AGENTFLEET_NATS_URL"] == "" {
		t.Fatal("configmap.yaml: agentfleet-config sets no AGENTFLEET_NATS_URL")
	}
	for file, dispatcher := range map[string]bool{"dispatcher.yaml": true, "worker.yaml": false} {
		env := map[string]string{}
		maps.Copy(env, shared)
		for _, m := range regexp.MustCompile(`- name: (AGENTFLEET_[A-Z_]+)\n\s+value: "?([^"\n]*)"?`).FindAllStringSubmatch(readFile(t, filepath.Join("kubernetes", file)), -1) {
			env[m[1]] = m[2]
		}
		if dispatcher && env["AGENTFLEET_LISTEN"] == "" {
			t.Fatalf("%s sets no AGENTFLEET_LISTEN", file)
		}
		plaintextOK(t, "kubernetes "+file, env, dispatcher)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
