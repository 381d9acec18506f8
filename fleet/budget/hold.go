package budget

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

// EventHeld is the kind of the session event published when a budget
// holds a task; its data is HeldData.
const EventHeld = "BUDGET_HELD"

// HeldData is the data of a BUDGET_HELD event.
type HeldData struct {
	Tenant      string  `json:"tenant,omitempty"` // "": a fleet-wide budget
	Label       string  `json:"label"`
	LimitUSD    float64 `json:"limit_usd"`
	SpentUSD    float64 `json:"spent_usd"`
	OnExhausted string  `json:"on_exhausted"`
}

// Held returns the BUDGET_HELD data of b.
func (b Budget) Held() json.RawMessage {
	data, _ := json.Marshal(HeldData{Tenant: b.Tenant, Label: b.Label, LimitUSD: b.LimitUSD, SpentUSD: b.SpentUSD, OnExhausted: b.OnExhausted})
	return data
}

// HoldTask moves a task running on workerID back to queued with error Reason,
// held until the dispatcher releases it. A task no longer running there
// (cancelled, taken over) is left as it is.
func HoldTask(ctx context.Context, st store.Store, id uuid.UUID, workerID string) error {
	_, err := st.TransitionTask(ctx, store.TransitionTaskParams{ID: id, From: store.TaskRunning,
		To: store.TaskQueued, WorkerID: workerID, Error: Reason})
	if errors.Is(err, store.ErrConflict) {
		return nil
	}
	return err
}
