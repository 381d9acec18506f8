package worker

import (
	"fmt"
	"maps"
	"os"
	"strings"
	"sync"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/execenv"
)

// redactor is what every tool output of a task is redacted with (see
// agent.Config.Redactor): each value this worker knows to be secret,
// read when the task starts (so a rotated token file counts), named by
// where it came from:
//   - providers.<name>.api_key: the providers' keys;
//   - mcp_secrets.<name>: what ${secret:NAME} references resolve to
//     ("env:VAR" read from the environment);
//   - delivery.tokens.<ref>: the delivery tokens;
//   - the name of each variable of the worker's environment whose name
//     says it is a secret (secretEnvName), and of each whose value is a
//     URL with a password (the password: AGENTFLEET_DATABASE_URL,
//     AGENTFLEET_NATS_URL);
//   - Config.KnownSecrets (the database and NATS passwords of `worker run`
//     from its flags or file).
//
// Values shorter than agent.MinSecretLen are not redacted. Only the
// delivery tokens are read per task: the environment and the
// configuration do not change under a running worker, so the rest is
// gathered once, and the Redactor of the last task is reused while the
// values are the same (building one was a measurable share of a trivial
// task's CPU).
func (w *Worker) redactor() *agent.Redactor {
	secrets := maps.Clone(w.redacting.fixed())
	maps.Copy(secrets, w.cfg.Delivery.Secrets())
	return w.redacting.redactor(secrets)
}

// redactCache holds what Worker.redactor keeps between tasks.
type redactCache struct {
	fixed func() map[string]string // the worker's own secrets, gathered once

	mu   sync.Mutex
	last map[string]string
	r    *agent.Redactor
}

// redactor returns the Redactor of secrets, the last one when they have
// not changed.
func (c *redactCache) redactor(secrets map[string]string) *agent.Redactor {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil || !maps.Equal(c.last, secrets) {
		c.last, c.r = secrets, agent.NewRedactor(secrets)
	}
	return c.r
}

// workerSecrets returns the secrets of the worker's configuration and
// environment: everything Worker.redactor redacts but the delivery
// tokens.
func workerSecrets(cfg Config) map[string]string {
	secrets := map[string]string{}
	maps.Copy(secrets, cfg.KnownSecrets)
	for _, kv := range os.Environ() {
		name, v, _ := strings.Cut(kv, "=")
		if secretEnvName(name) {
			secrets[name] = v
			continue
		}
		for i, p := range execenv.URLPasswords(v) {
			if i > 0 {
				name = fmt.Sprintf("%s#%d", name, i+1)
			}
			secrets[name] = p
		}
	}
	if cfg.GitStore.Token != "" {
		secrets["git_store.token"] = cfg.GitStore.Token
	}
	for name, pc := range cfg.Providers {
		if pc.APIKey != "" {
			secrets["providers."+name+".api_key"] = pc.APIKey
		}
	}
	for name, v := range cfg.MCPSecrets {
		if env, ok := strings.CutPrefix(v, "env:"); ok {
			v = os.Getenv(env)
		}
		secrets["mcp_secrets."+name] = v
	}
	return secrets
}

// secretEnvName reports whether a variable's name says it holds a
// secret: execenv.IsSecretEnvName, or a name containing PASSWORD,
// PASSWD, SECRET, TOKEN or PASSPHRASE, or ending in _PAT or _KEY; but not
// one ending in _FILE, _PATH or _DIR, which names where a secret is.
func secretEnvName(name string) bool {
	up := strings.ToUpper(name)
	for _, s := range []string{"_FILE", "_PATH", "_DIR"} {
		if strings.HasSuffix(up, s) {
			return false
		}
	}
	if execenv.IsSecretEnvName(name) || strings.HasSuffix(up, "_PAT") || strings.HasSuffix(up, "_KEY") {
		return true
	}
	for _, s := range []string{"PASSWORD", "PASSWD", "SECRET", "TOKEN", "PASSPHRASE"} {
		if strings.Contains(up, s) {
			return true
		}
	}
	return false
}
