package dev_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/execenv/sandbox"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/fleet/dev"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/store"
)

// TestDevSandboxHasPrivateGoCache: a task of dev mode that writes into
// its GOCACHE writes into the fleet's own cache in the data directory,
// never into the user's (where a poisoned entry would run in the user's
// next go build, outside any sandbox).
func TestDevSandboxHasPrivateGoCache(t *testing.T) {
	if err := sandbox.Available(); err != nil {
		testenv.SkipOrFatal(t, err.Error())
	}
	userCache := t.TempDir()
	t.Setenv("GOCACHE", userCache) // what `go env GOCACHE` answers: the user's cache
	plan := dev.SimPlan{Tasks: []dev.SimTask{{Match: "poison the build cache", Steps: []dev.SimStep{
		{Calls: []dev.SimCall{{Name: "shell", Args: json.RawMessage(
			`{"command":"touch \"$GOCACHE/poisoned\"; echo \"cache=$GOCACHE\""}`)}}},
		{Text: "done"},
	}}}}
	fl := startDev(t, dev.Config{Plan: plan})
	c, err := fl.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sub, err := c.Submit(ctx, fleet.TaskSpec{Prompt: "poison the build cache"})
	if err != nil {
		t.Fatal(err)
	}
	waitEnded(ctx, t, c, sub.Task.ID)
	task, err := c.Get(ctx, sub.Task.ID)
	if err != nil || task.State != store.TaskSucceeded {
		t.Fatalf("task %+v, %v: want it succeeded", task, err)
	}
	if _, err := os.Stat(filepath.Join(userCache, "poisoned")); err == nil {
		t.Fatal("a task wrote into the user's GOCACHE")
	}
	if _, err := os.Stat(filepath.Join(fl.DataDir(), "gocache", "poisoned")); err != nil {
		t.Errorf("the task's GOCACHE is not the fleet's own cache in the data directory: %v", err)
	}
}

// waitEnded follows a task's events until its stream ends (the task
// finished) or ctx is done.
func waitEnded(ctx context.Context, t *testing.T, c *client.Client, id uuid.UUID) {
	t.Helper()
	s, err := c.Events(ctx, id, client.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	for {
		ev, err := s.Next()
		if errors.Is(err, io.EOF) || err == nil && ev.End != nil {
			return
		}
		if err != nil {
			t.Fatalf("following task %s: %v", id, err)
		}
	}
}
