package store_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

func TestCanTransition(t *testing.T) {
	allowed := map[string]bool{
		"queued>running": true, "queued>cancelled": true, "queued>failed": true,
		"running>succeeded": true, "running>failed": true, "running>cancelled": true,
		"running>waiting": true, "running>queued": true, "running>running": true,
		"waiting>running": true, "waiting>queued": true, "waiting>cancelled": true, "waiting>failed": true,
		"succeeded>queued": true, "failed>queued": true, // reopen
	}
	for _, from := range store.TaskStates {
		for _, to := range store.TaskStates {
			key := string(from) + ">" + string(to)
			if got := store.CanTransition(from, to); got != allowed[key] {
				t.Errorf("CanTransition(%s) = %v, want %v", key, got, allowed[key])
			}
		}
	}
	err := store.CheckTransition(store.TaskQueued, store.TaskSucceeded)
	if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "queued to succeeded") {
		t.Fatalf("CheckTransition(queued, succeeded) = %v", err)
	}
	if err := store.CheckTransition(store.TaskCancelled, store.TaskQueued); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("a cancelled task was reopened: %v", err)
	}
	for _, from := range store.TaskStates {
		for _, to := range store.TaskStates {
			want := (from == store.TaskSucceeded || from == store.TaskFailed) && to == store.TaskQueued
			if got := store.Reopens(from, to); got != want {
				t.Errorf("Reopens(%s, %s) = %v, want %v", from, to, got, want)
			}
		}
	}
	if err := store.CheckTransition("done", store.TaskFailed); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("an unknown state passed: %v", err)
	}
}

func TestCursorRoundTrip(t *testing.T) {
	at, id := store.Timestamp(time.Now()), uuid.New()
	gotAt, gotID, err := store.DecodeCursor(store.EncodeCursor(at, id))
	if err != nil || !gotAt.Equal(at) || gotID != id {
		t.Fatalf("round trip: %v %v %v, want %v %v", gotAt, gotID, err, at, id)
	}
	for _, bad := range []string{"!!", "djE6eDp5", store.EncodeCursor(at, id)[:10]} {
		if _, _, err := store.DecodeCursor(bad); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("DecodeCursor(%q) = %v, want ErrInvalid", bad, err)
		}
	}
}

func TestLimits(t *testing.T) {
	l := store.Limits{}.WithDefaults()
	if l.MaxPayloadBytes != store.DefaultMaxPayloadBytes || l.MaxBlobBytes != store.DefaultMaxBlobBytes {
		t.Fatalf("defaults: %+v", l)
	}
	if err := (store.Limits{MaxPayloadBytes: -1}).Validate(); err == nil || !strings.Contains(err.Error(), "Limits.MaxPayloadBytes") {
		t.Fatalf("Validate of a negative cap: %v", err)
	}
	small := store.Limits{MaxPayloadBytes: 10, MaxBlobBytes: 4}
	_, err := small.PrepareAppendTurns(store.AppendTurnsParams{SessionID: uuid.New(),
		Turns: []store.NewTurn{{Seq: 1, Kind: "user", Payload: []byte(`"0123456789"`)}}})
	var tooLarge *store.PayloadTooLargeError
	if !errors.As(err, &tooLarge) || tooLarge.Size != 12 || tooLarge.Limit != 10 {
		t.Fatalf("a 12-byte payload under a 10-byte cap: %v", err)
	}
	_, err = small.PreparePutToolOutput(store.PutToolOutputParams{SessionID: uuid.New(), CallID: "c", Tool: "t", Output: "12345"})
	if !errors.As(err, &tooLarge) || tooLarge.Knob != "MaxBlobBytes" {
		t.Fatalf("a 5-byte output under a 4-byte cap: %v", err)
	}
}

func TestRetryable(t *testing.T) {
	err := error(&store.RetryableError{Op: "AppendTurns", Err: errors.New("connection reset")})
	if !store.IsRetryable(err) || store.IsRetryable(store.ErrConflict) || store.IsRetryable(nil) {
		t.Fatal("IsRetryable misclassifies")
	}
	wrapped := errors.Join(errors.New("context"), err)
	if !store.IsRetryable(wrapped) {
		t.Fatal("a wrapped retryable error is not retryable")
	}
}
