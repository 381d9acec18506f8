package worker

import (
	"fmt"
	"maps"
	"os"
	"strings"

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
// Values shorter than agent.MinSecretLen are not redacted.
func (w *Worker) redactor() *agent.Redactor {
	secrets := map[string]string{}
	maps.Copy(secrets, w.cfg.KnownSecrets)
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
	for name, pc := range w.cfg.Providers {
		if pc.APIKey != "" {
			secrets["providers."+name+".api_key"] = pc.APIKey
		}
	}
	for name, v := range w.cfg.MCPSecrets {
		if env, ok := strings.CutPrefix(v, "env:"); ok {
			v = os.Getenv(env)
		}
		secrets["mcp_secrets."+name] = v
	}
	maps.Copy(secrets, w.cfg.Delivery.Secrets())
	return agent.NewRedactor(secrets)
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
