package storetest

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

// invalid fails unless err is an *InvalidError about field.
func invalid(t *testing.T, err error, field string) {
	t.Helper()
	var ie *store.InvalidError
	if !errors.As(err, &ie) || !errors.Is(err, store.ErrInvalid) || !strings.Contains(ie.Field, field) {
		t.Fatalf("got %v, want an invalid-input error about %s", err, field)
	}
}

var badInputTests = map[string]func(*testing.T, *bundle){
	"PriorityOutOfRange": func(t *testing.T, b *bundle) {
		if strconv.IntSize == 32 {
			t.Skip("an int cannot exceed the column on this platform")
		}
		big := int64(1) << 40
		_, err := b.s.CreateTasks(b.ctx, store.CreateTasksParams{Tasks: []store.CreateTaskParams{
			{Spec: []byte(`{}`)}, {Spec: []byte(`{}`), Priority: int(big)}}})
		invalid(t, err, "Tasks[1].Priority")
	},
	"SpecNotJSON": func(t *testing.T, b *bundle) {
		_, err := b.s.CreateTask(b.ctx, store.CreateTaskParams{Spec: json.RawMessage(`{"prompt": "x"`)})
		invalid(t, err, "Spec")
		if !strings.Contains(err.Error(), "not valid JSON") {
			t.Fatalf("message does not say what is wrong: %v", err)
		}
		_, err = b.s.CreateTask(b.ctx, store.CreateTaskParams{})
		invalid(t, err, "Spec")
		_, err = b.s.CreateTask(b.ctx, store.CreateTaskParams{Spec: json.RawMessage("\"\xff\"")})
		invalid(t, err, "Spec")
		_, err = b.s.CreateTasks(b.ctx, store.CreateTasksParams{Tasks: []store.CreateTaskParams{{Spec: []byte(`{}`)}, {Spec: []byte(`nope`)}}})
		invalid(t, err, "Tasks[1].Spec")
		counts, _ := b.s.CountTasks(b.ctx, store.CountTasksParams{})
		if len(counts) != 0 {
			t.Fatalf("bad input created tasks: %v", counts)
		}
	},
	"PayloadOverCap": func(t *testing.T, b *bundle) {
		s := b.session(t, b.task(t, store.CreateTaskParams{}).ID)
		big := json.RawMessage(`"` + strings.Repeat("x", store.DefaultMaxPayloadBytes) + `"`)
		_, err := b.s.AppendTurns(b.ctx, store.AppendTurnsParams{SessionID: s.ID,
			Turns: []store.NewTurn{{Seq: 1, Kind: "user", Payload: json.RawMessage(`{}`)}, {Seq: 2, Kind: "tool", Payload: big}}})
		var tooLarge *store.PayloadTooLargeError
		if !errors.As(err, &tooLarge) || tooLarge.Field != "Turns[1].Payload" || tooLarge.Limit != store.DefaultMaxPayloadBytes ||
			!errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "MaxPayloadBytes") {
			t.Fatalf("got %v, want a PayloadTooLargeError for Turns[1].Payload naming the knob", err)
		}
		if h := b.load(t, s.ID); len(h) != 0 {
			t.Fatalf("an oversized batch wrote %d turns", len(h))
		}
		_, err = b.s.CreateTask(b.ctx, store.CreateTaskParams{Spec: big})
		if !errors.As(err, &tooLarge) || tooLarge.Field != "Spec" {
			t.Fatalf("oversized spec: %v", err)
		}
	},
	"TurnForUnknownSession": func(t *testing.T, b *bundle) {
		_, err := b.s.AppendTurns(b.ctx, store.AppendTurnsParams{SessionID: uuid.New(), Turns: turns(1, 2)})
		wantErr(t, err, store.ErrNotFound)
		if !strings.Contains(err.Error(), "session") {
			t.Fatalf("message does not say what is missing: %v", err)
		}
	},
	"BadTurns": func(t *testing.T, b *bundle) {
		s := b.session(t, b.task(t, store.CreateTaskParams{}).ID)
		cases := map[string]store.AppendTurnsParams{
			"Turns":              {SessionID: s.ID},
			"SessionID":          {Turns: turns(1, 1)},
			"Turns[0].Seq":       {SessionID: s.ID, Turns: []store.NewTurn{{Seq: 0, Kind: "user", Payload: []byte(`{}`)}}},
			"Turns[0].Kind":      {SessionID: s.ID, Turns: []store.NewTurn{{Seq: 1, Payload: []byte(`{}`)}}},
			"Turns[0].Payload":   {SessionID: s.ID, Turns: []store.NewTurn{{Seq: 1, Kind: "user", Payload: []byte(`{`)}}},
			"Turns[0].Usage":     {SessionID: s.ID, Turns: []store.NewTurn{{Seq: 1, Kind: "user", Payload: []byte(`{}`), Usage: []byte(`x`)}}},
			"AddUsage":           {SessionID: s.ID, Turns: turns(1, 1), AddUsage: store.Usage{InputTokens: -1}},
			"Turns[0].Payload ":  {SessionID: s.ID, Turns: []store.NewTurn{{Seq: 1, Kind: "user"}}},
			"Turns[1].Seq":       {SessionID: s.ID, Turns: []store.NewTurn{turns(1, 1)[0], turns(1, 1)[0]}},
			"Turns[0].Payload  ": {SessionID: s.ID, Turns: []store.NewTurn{{Seq: 1, Kind: "user", Payload: []byte("\"\xfe\"")}}},
		}
		for field, p := range cases {
			_, err := b.s.AppendTurns(b.ctx, p)
			invalid(t, err, strings.TrimSpace(field))
		}
	},
	"BadParams": func(t *testing.T, b *bundle) {
		task := b.task(t, store.CreateTaskParams{})
		_, err := b.s.ClaimTask(b.ctx, store.ClaimTaskParams{ID: task.ID})
		invalid(t, err, "WorkerID")
		_, err = b.s.ClaimTask(b.ctx, store.ClaimTaskParams{ID: task.ID, WorkerID: "w", From: []store.TaskState{store.TaskSucceeded}})
		invalid(t, err, "From")
		_, err = b.s.ListTasks(b.ctx, store.ListTasksParams{States: []store.TaskState{"done"}})
		invalid(t, err, "States")
		_, err = b.s.ListTasks(b.ctx, store.ListTasksParams{Limit: 5000})
		invalid(t, err, "Limit")
		_, err = b.s.TransitionTask(b.ctx, store.TransitionTaskParams{ID: task.ID, From: store.TaskQueued, To: store.TaskCancelled,
			WaitingFor: json.RawMessage(`{}`)})
		invalid(t, err, "WaitingFor")
		_, err = b.s.CreateTask(b.ctx, store.CreateTaskParams{Spec: []byte(`{}`), Labels: map[string]string{"": "x"}})
		invalid(t, err, "Labels")
		_, err = b.s.PutToolOutput(b.ctx, store.PutToolOutputParams{CallID: "c", Tool: "t"})
		invalid(t, err, "SessionID")
		_, err = b.s.PutArtifact(b.ctx, store.PutArtifactParams{TaskID: task.ID})
		invalid(t, err, "Kind")
	},
}
