package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentfleet/agentfleet/agent/compact"
	"github.com/agentfleet/agentfleet/llm"
)

// The memory flush (lifecycle spec, MEMORY_FLUSH): before a compaction
// that will summarize (pruning alone loses nothing), once per compaction
// cycle, when SessionConfig.Context.MemoryFlush is on, the model gets a
// silent turn to write lasting notes to the memory file, or
// to answer NO_REPLY. Its text answers in that turn are recorded but never
// shown: no text events, no part of the outcome. The notes are read at the
// compaction and carried into the compacted context.

// noReply is the answer of a model with nothing to store.
const noReply = "NO_REPLY"

// maxMemoryChars bounds the notes carried into the context.
const maxMemoryChars = 16_000

func memoryFlushNote(path string) string {
	return "[Silent turn: the conversation is about to be compacted, and older turns will be replaced by a summary.] " +
		"Store durable memories now: write any notes worth keeping beyond this point (decisions and their reasons, " +
		"facts about the code, commands that work, pitfalls) to " + path + " in the working directory with your file " +
		"tools, adding to what it holds. Reply " + noReply + " if there is nothing to store. Nobody reads your reply."
}

const memoryDoneNote = "[The notes are stored. Continue the task where you left off.]"

// startMemoryFlush queues the silent turn instead of compacting, once per
// compaction cycle. It reports whether it did.
func (s *Session) startMemoryFlush(ctx context.Context) (bool, error) {
	if !s.cw.cfg.MemoryFlush || s.cw.flushed {
		return false, nil
	}
	if compact.PruneFits(compact.Params{Turns: s.planTurns(), View: s.cw.view, Fixed: s.cw.fixed, Budget: s.budget(),
		KeepRecent: s.cw.cfg.KeepRecentRounds, Tokens: s.cw.est.Tokens}) {
		return false, nil // nothing will be lost
	}
	s.cw.flushed, s.cw.flushing = true, true
	err := s.appendTurn(ctx, Turn{Kind: TurnSteering, Text: memoryFlushNote(s.cw.cfg.MemoryPath()), Source: "memory_flush"})
	return err == nil, err
}

// endMemoryFlush ends the silent turn at the model's text answer: the
// answer is not the input's outcome, and the model is told to go on. It
// reports whether the loop should go on.
func (s *Session) endMemoryFlush(ctx context.Context, out *Outcome, shownText string) (bool, error) {
	if !s.cw.flushing {
		return false, nil
	}
	s.cw.flushing = false
	out.Text = shownText
	return true, s.appendTurn(ctx, Turn{Kind: TurnSteering, Text: memoryDoneNote, Source: "memory_flush"})
}

// readMemory returns the notes file for a compaction, or "".
func (s *Session) readMemory(ctx context.Context) string {
	if !s.cw.cfg.MemoryFlush {
		return ""
	}
	b, err := s.env.ReadFile(ctx, s.cw.cfg.MemoryPath())
	if err != nil {
		return ""
	}
	text := strings.TrimSpace(string(b))
	if len(text) > maxMemoryChars {
		text = text[:maxMemoryChars] + fmt.Sprintf("\n[... cut at %d characters]", maxMemoryChars)
	}
	return strings.ToValidUTF8(text, "")
}

// silentCall calls the model for the silent turn without streaming and
// without text events.
func (s *Session) silentCall(ctx context.Context, req llm.Request) (*llm.Response, error) {
	resp, err := s.client.Complete(ctx, req)
	if err != nil && ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	return resp, err
}
