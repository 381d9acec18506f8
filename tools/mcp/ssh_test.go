package mcp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/execenv/sshtest"
	"github.com/agentfleet/agentfleet/tools"
)

// TestStdioServerInAnSSHEnvironment: in a task whose environment is SSH, a
// stdio server runs on the remote host (a real sshd on loopback) and its
// tools answer; one that dies mid-call is started again over SSH.
func TestStdioServerInAnSSHEnvironment(t *testing.T) {
	srv := sshtest.Start(t)
	env, err := execenv.NewSSH(srv.Config(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Cleanup(context.Background()) })
	b := &bundle{env: env, reg: tools.NewRegistry()}
	b.start(t, selfServer(t, "remote"))
	if res := b.call("mcp__remote__echo", `{"text":"over ssh"}`); res.IsError || res.Content != "echo: over ssh" {
		t.Fatalf("echo = %+v", res)
	}
	if res := b.call("mcp__remote__die", `{}`); !res.IsError || !strings.Contains(res.Content, "started again on the next call") {
		t.Fatalf("die = %+v", res)
	}
	if res := b.call("mcp__remote__echo", `{"text":"again"}`); res.IsError || res.Content != "echo: again" {
		t.Fatalf("echo after restart = %+v", res)
	}
}
