package sandbox_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/execenv/sandbox"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/tools"
)

// BenchmarkShellTrue is the sandbox's per-command overhead: `true`
// through the shell tool in a plain local environment, and in sandboxed
// ones without network, with the worker's default limits (prlimit in
// front of bwrap where there is no delegated cgroup), and with an
// allowlist (which adds the egress forwarder). Besides ns/op it reports
// the p50 and p99 of one command in milliseconds.
func BenchmarkShellTrue(b *testing.B) {
	b.Run("unsandboxed", func(b *testing.B) {
		env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: testenv.SearchableTempDir(b)})
		if err != nil {
			b.Fatal(err)
		}
		benchShell(b, env)
	})
	for _, s := range []sandbox.Settings{{Network: sandbox.NetworkNone}, {Network: sandbox.NetworkNone, Limits: sandbox.DefaultLimits},
		{Network: sandbox.NetworkAllowlist, AllowHosts: []string{"example.com"}}} {
		name := "bwrap-network-" + string(s.Network)
		if s.Limits != (sandbox.Limits{}) {
			name += "-limits"
		}
		b.Run(name, func(b *testing.B) {
			if err := sandbox.Available(); err != nil {
				testenv.SkipOrFatal(b, err.Error())
			}
			env, err := sandbox.NewLocal(execenv.LocalConfig{WorkingDir: testenv.SearchableTempDir(b)}, s)
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = env.Cleanup(context.Background()) }()
			benchShell(b, sandbox.Scope(env))
		})
	}
}

// benchShell runs `true` through the shell tool b.N times and reports
// the percentiles of one run.
func benchShell(b *testing.B, env execenv.Environment) {
	reg := tools.Core()
	raw := json.RawMessage(`{"command":"true"}`)
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		if res := reg.Execute(context.Background(), llm.ToolCall{Name: "shell", Arguments: raw}, env, tools.ExecOptions{}); res.IsError {
			b.Fatal(res.Content)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	ms := func(q float64) float64 { return float64(took[int(q*float64(len(took)-1))].Microseconds()) / 1000 }
	b.ReportMetric(ms(0.50), "p50-ms")
	b.ReportMetric(ms(0.99), "p99-ms")
}
