package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestDevAndBenchMoved: the subcommands that moved to agentfleet-dev exit 2
// naming the new command, whatever flags they are given.
func TestDevAndBenchMoved(t *testing.T) {
	for _, args := range [][]string{{"dev"}, {"dev", "--demo", "examples/demo"}, {"bench", "--tasks", "10"}} {
		var out bytes.Buffer
		code := execute(context.Background(), args, strings.NewReader(""), &out, &out)
		if want := "agentfleet-dev " + args[0]; code != 2 || !strings.Contains(out.String(), want) {
			t.Errorf("dispatcher %v: exit %d, output %q; want 2 naming %q", args, code, out.String(), want)
		}
	}
}
