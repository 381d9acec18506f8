package storetest

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

// turns makes n turns from seq first, with payloads that vary in layout.
func turns(first int64, n int) []store.NewTurn {
	out := make([]store.NewTurn, n)
	for i := range out {
		seq := first + int64(i)
		out[i] = store.NewTurn{Seq: seq, Kind: "assistant",
			Payload: json.RawMessage(fmt.Sprintf(`{"text": "turn %d",  "b":1, "a":[1, 2]}`, seq))}
	}
	return out
}

func (b *bundle) load(t *testing.T, session uuid.UUID) []store.Turn {
	t.Helper()
	got, err := b.s.LoadTurns(b.ctx, store.LoadTurnsParams{SessionID: session})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// gapless fails unless history is seqs 1..n with the payloads of turns().
func gapless(t *testing.T, history []store.Turn, n int) {
	t.Helper()
	if len(history) != n {
		t.Fatalf("history has %d turns, want %d", len(history), n)
	}
	want := turns(1, n)
	for i, tr := range history {
		if tr.Seq != int64(i+1) || string(tr.Payload) != string(want[i].Payload) {
			t.Fatalf("turn %d: seq %d payload %s, want seq %d payload %s", i, tr.Seq, tr.Payload, i+1, want[i].Payload)
		}
	}
}

var turnTests = map[string]func(*testing.T, *bundle){
	"AppendAndLoad": func(t *testing.T, b *bundle) {
		s := b.session(t, b.task(t, store.CreateTaskParams{}).ID)
		if h := b.load(t, s.ID); len(h) != 0 {
			t.Fatalf("new session has %d turns", len(h))
		}
		batch := turns(1, 3)
		batch[1].Kind, batch[1].Usage = "user", json.RawMessage(`{"input_tokens":7}`)
		u := store.Usage{InputTokens: 100, OutputTokens: 20}
		written, err := b.s.AppendTurns(b.ctx, store.AppendTurnsParams{SessionID: s.ID, Turns: batch, AddUsage: u, AddCostUSD: 0.01})
		if err != nil {
			t.Fatal(err)
		}
		if len(written) != 3 || written[2].Seq != 3 {
			t.Fatalf("AppendTurns returned %+v", written)
		}
		recent(t, "Turn.CreatedAt", written[0].CreatedAt)
		history := b.load(t, s.ID)
		gapless(t, history, 3) // payloads byte for byte
		if history[1].Kind != "user" || string(history[1].Usage) != `{"input_tokens":7}` || history[0].Usage != nil {
			t.Fatalf("kinds/usage not kept: %+v", history)
		}
		sess, err := b.s.GetSession(b.ctx, store.GetSessionParams{ID: s.ID})
		if err != nil || sess.LastSeq != 3 || sess.Usage != u || sess.CostUSD != 0.01 {
			t.Fatalf("session after append: %+v, %v", sess, err)
		}
		part, err := b.s.LoadTurns(b.ctx, store.LoadTurnsParams{SessionID: s.ID, AfterSeq: 1, Limit: 1})
		if err != nil || len(part) != 1 || part[0].Seq != 2 {
			t.Fatalf("LoadTurns after 1 limit 1 = %+v, %v", part, err)
		}
	},
	"RepeatedSeqIsConflict": func(t *testing.T, b *bundle) {
		s := b.session(t, b.task(t, store.CreateTaskParams{}).ID)
		if _, err := b.s.AppendTurns(b.ctx, store.AppendTurnsParams{SessionID: s.ID, Turns: turns(1, 3)}); err != nil {
			t.Fatal(err)
		}
		// 3 exists: the whole batch 3,4 is refused and 4 is not written.
		_, err := b.s.AppendTurns(b.ctx, store.AppendTurnsParams{SessionID: s.ID, Turns: turns(3, 2),
			AddUsage: store.Usage{InputTokens: 5}})
		wantErr(t, err, store.ErrConflict)
		_, err = b.s.AppendTurns(b.ctx, store.AppendTurnsParams{SessionID: s.ID, Turns: turns(1, 1)})
		wantErr(t, err, store.ErrConflict)
		gapless(t, b.load(t, s.ID), 3)
		if sess, _ := b.s.GetSession(b.ctx, store.GetSessionParams{ID: s.ID}); sess.Usage.InputTokens != 0 || sess.LastSeq != 3 {
			t.Fatalf("a refused batch changed the session: %+v", sess)
		}
	},
	"GapIsInvalid": func(t *testing.T, b *bundle) {
		s := b.session(t, b.task(t, store.CreateTaskParams{}).ID)
		_, err := b.s.AppendTurns(b.ctx, store.AppendTurnsParams{SessionID: s.ID, Turns: turns(2, 1)})
		wantErr(t, err, store.ErrInvalid)
		bad := turns(1, 3)
		bad[2].Seq = 7
		_, err = b.s.AppendTurns(b.ctx, store.AppendTurnsParams{SessionID: s.ID, Turns: bad})
		wantErr(t, err, store.ErrInvalid)
		if h := b.load(t, s.ID); len(h) != 0 {
			t.Fatalf("refused batches wrote %d turns", len(h))
		}
	},
	"LargeBatch": func(t *testing.T, b *bundle) {
		s := b.session(t, b.task(t, store.CreateTaskParams{}).ID)
		if _, err := b.s.AppendTurns(b.ctx, store.AppendTurnsParams{SessionID: s.ID, Turns: turns(1, 250)}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.s.AppendTurns(b.ctx, store.AppendTurnsParams{SessionID: s.ID, Turns: turns(251, 50)}); err != nil {
			t.Fatal(err)
		}
		gapless(t, b.load(t, s.ID), 300)
	},
	"UnknownSession": func(t *testing.T, b *bundle) {
		_, err := b.s.AppendTurns(b.ctx, store.AppendTurnsParams{SessionID: uuid.New(), Turns: turns(1, 1)})
		wantErr(t, err, store.ErrNotFound)
		_, err = b.s.LoadTurns(b.ctx, store.LoadTurnsParams{SessionID: uuid.New()})
		wantErr(t, err, store.ErrNotFound)
	},
}
