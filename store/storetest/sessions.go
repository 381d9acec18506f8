package storetest

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

var sessionTests = map[string]func(*testing.T, *bundle){
	"CreateGetList": func(t *testing.T, b *bundle) {
		task := b.task(t, store.CreateTaskParams{})
		cfg := json.RawMessage(`{"reasoning_effort":"high"}`)
		s1, err := b.s.CreateSession(b.ctx, store.CreateSessionParams{TaskID: task.ID, Profile: "openai",
			Provider: "openai", Model: "m1", Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.s.GetSession(b.ctx, store.GetSessionParams{ID: s1.ID})
		if err != nil {
			t.Fatal(err)
		}
		if got.TaskID != task.ID || got.Profile != "openai" || got.Model != "m1" || got.State != "idle" || got.LastSeq != 0 {
			t.Fatalf("session: %+v", got)
		}
		jsonEqual(t, "Config", got.Config, cfg)
		recent(t, "CreatedAt", got.CreatedAt)
		s2 := b.session(t, task.ID)
		list, err := b.s.ListSessions(b.ctx, store.ListSessionsParams{TaskID: task.ID})
		if err != nil || len(list) != 2 || list[0].ID != s1.ID || list[1].ID != s2.ID {
			t.Fatalf("ListSessions = %+v, %v", list, err)
		}
		_, err = b.s.CreateSession(b.ctx, store.CreateSessionParams{ID: s1.ID, TaskID: task.ID})
		wantErr(t, err, store.ErrConflict)
		_, err = b.s.CreateSession(b.ctx, store.CreateSessionParams{TaskID: uuid.New()})
		wantErr(t, err, store.ErrNotFound)
		_, err = b.s.GetSession(b.ctx, store.GetSessionParams{ID: uuid.New()})
		wantErr(t, err, store.ErrNotFound)
	},
	"Update": func(t *testing.T, b *bundle) {
		s := b.session(t, b.task(t, store.CreateTaskParams{}).ID)
		state, model := "processing", "m2"
		u := store.Usage{InputTokens: 10, OutputTokens: 5, ReasoningTokens: 3, CacheReadTokens: 2, CacheWriteTokens: 1}
		got, err := b.s.UpdateSession(b.ctx, store.UpdateSessionParams{ID: s.ID, State: &state, Model: &model,
			Config: json.RawMessage(`{"x":1}`), AddUsage: u, AddCostUSD: 0.25})
		if err != nil {
			t.Fatal(err)
		}
		got, err = b.s.UpdateSession(b.ctx, store.UpdateSessionParams{ID: s.ID, AddUsage: u, AddCostUSD: 0.5})
		if err != nil {
			t.Fatal(err)
		}
		if got.State != "processing" || got.Model != "m2" || got.Provider != "anthropic" ||
			got.Usage != u.Add(u) || fmt.Sprintf("%.2f", got.CostUSD) != "0.75" {
			t.Fatalf("after updates: %+v", got)
		}
		jsonEqual(t, "Config", got.Config, json.RawMessage(`{"x":1}`))
		_, err = b.s.UpdateSession(b.ctx, store.UpdateSessionParams{ID: uuid.New(), State: &state})
		wantErr(t, err, store.ErrNotFound)
	},
}

var blobTests = map[string]func(*testing.T, *bundle){
	"ToolOutput": func(t *testing.T, b *bundle) {
		s := b.session(t, b.task(t, store.CreateTaskParams{}).ID)
		out := "line 1\n\x00binary\xff\n" // NUL and invalid UTF-8 survive
		put, err := b.s.PutToolOutput(b.ctx, store.PutToolOutputParams{SessionID: s.ID, CallID: "c1", Tool: "shell", Output: out, IsError: true})
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.s.GetToolOutput(b.ctx, store.GetToolOutputParams{SessionID: s.ID, CallID: "c1"})
		if err != nil {
			t.Fatal(err)
		}
		if got.Output != out || got.Tool != "shell" || !got.IsError || got.Size != int64(len(out)) || put.Size != got.Size {
			t.Fatalf("tool output: %+v", got)
		}
		if _, err := b.s.PutToolOutput(b.ctx, store.PutToolOutputParams{SessionID: s.ID, CallID: "c1", Tool: "shell", Output: "again"}); err != nil {
			t.Fatal(err)
		}
		got, err = b.s.GetToolOutput(b.ctx, store.GetToolOutputParams{SessionID: s.ID, CallID: "c1"})
		if err != nil || got.Output != "again" || got.IsError {
			t.Fatalf("replaced tool output: %+v, %v", got, err)
		}
		_, err = b.s.GetToolOutput(b.ctx, store.GetToolOutputParams{SessionID: s.ID, CallID: "nope"})
		wantErr(t, err, store.ErrNotFound)
		_, err = b.s.PutToolOutput(b.ctx, store.PutToolOutputParams{SessionID: uuid.New(), CallID: "c1", Tool: "shell"})
		wantErr(t, err, store.ErrNotFound)
	},
	"Artifact": func(t *testing.T, b *bundle) {
		task := b.task(t, store.CreateTaskParams{})
		diff := []byte("diff --git a/x b/x\n+\x00\n")
		if _, err := b.s.PutArtifact(b.ctx, store.PutArtifactParams{TaskID: task.ID, Kind: "diff", Content: diff, ContentType: "text/x-diff"}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.s.PutArtifact(b.ctx, store.PutArtifactParams{TaskID: task.ID, Kind: "log", Name: "build"}); err != nil {
			t.Fatal(err)
		}
		got, err := b.s.GetArtifact(b.ctx, store.GetArtifactParams{TaskID: task.ID, Kind: "diff"})
		if err != nil || string(got.Content) != string(diff) || got.ContentType != "text/x-diff" || got.Size != int64(len(diff)) {
			t.Fatalf("artifact: %+v, %v", got, err)
		}
		if _, err := b.s.PutArtifact(b.ctx, store.PutArtifactParams{TaskID: task.ID, Kind: "diff", Content: []byte("v2")}); err != nil {
			t.Fatal(err)
		}
		list, err := b.s.ListArtifacts(b.ctx, store.ListArtifactsParams{TaskID: task.ID})
		if err != nil || len(list) != 2 || list[0].Kind != "diff" || list[0].Size != 2 || list[0].Content != nil ||
			list[1].Name != "build" || list[1].ContentType != "application/octet-stream" {
			t.Fatalf("ListArtifacts = %+v, %v", list, err)
		}
		_, err = b.s.GetArtifact(b.ctx, store.GetArtifactParams{TaskID: task.ID, Kind: "nope"})
		wantErr(t, err, store.ErrNotFound)
		_, err = b.s.PutArtifact(b.ctx, store.PutArtifactParams{TaskID: uuid.New(), Kind: "diff"})
		wantErr(t, err, store.ErrNotFound)
	},
	"LatestArtifact": func(t *testing.T, b *bundle) {
		repo := "https://example.com/" + uuid.NewString() + ".git"
		_, err := b.s.LatestArtifact(b.ctx, store.LatestArtifactParams{Kind: "memory", Name: repo})
		wantErr(t, err, store.ErrNotFound)
		first, second := b.task(t, store.CreateTaskParams{}), b.task(t, store.CreateTaskParams{})
		for _, p := range []store.PutArtifactParams{
			{TaskID: first.ID, Kind: "memory", Name: repo, Content: []byte("old notes")},
			{TaskID: second.ID, Kind: "memory", Name: "another repo", Content: []byte("not these")},
			{TaskID: second.ID, Kind: "memory", Name: repo, Content: []byte("new notes")},
		} {
			if _, err := b.s.PutArtifact(b.ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		got, err := b.s.LatestArtifact(b.ctx, store.LatestArtifactParams{Kind: "memory", Name: repo})
		if err != nil || string(got.Content) != "new notes" || got.TaskID != second.ID {
			t.Fatalf("LatestArtifact = %+v, %v; want the second task's notes", got, err)
		}
	},
}
