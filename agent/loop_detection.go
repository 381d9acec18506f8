package agent

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
)

// loopSourceDetection marks the steering turns loop detection injects.
const loopSourceDetection = "loop_detection"

// detectLoop injects a warning steering turn and emits LOOP_DETECTION when
// the last LoopDetectionWindow tool calls repeat a pattern.
func (s *Session) detectLoop(ctx context.Context) error {
	cfg := s.cfg.Session
	if cfg.DisableLoopDetection {
		return nil
	}
	if !repeating(callSignatures(s.view(), cfg.LoopDetectionWindow), cfg.LoopDetectionWindow) {
		return nil
	}
	msg := fmt.Sprintf("Loop detected: the last %d tool calls follow a repeating pattern. Try a different approach.", cfg.LoopDetectionWindow)
	if err := s.appendTurn(ctx, Turn{Kind: TurnSteering, Text: msg, Source: loopSourceDetection}); err != nil {
		return err
	}
	s.emit(Event{Kind: EventLoopDetection, Text: msg})
	return nil
}

// callSignatures returns up to the last n tool-call signatures (name plus a
// hash of the arguments) made since the last loop warning, oldest first.
func callSignatures(history []Turn, n int) []string {
	var sigs []string
	for i := len(history) - 1; i >= 0 && len(sigs) < n; i-- {
		t := history[i]
		if t.Kind == TurnSteering && t.Source == loopSourceDetection {
			break
		}
		for j := len(t.ToolCalls) - 1; j >= 0 && len(sigs) < n; j-- {
			c := t.ToolCalls[j]
			sigs = append(sigs, fmt.Sprintf("%s:%x", c.Name, sha256.Sum256(c.Arguments)))
		}
	}
	slices.Reverse(sigs)
	return sigs
}

// repeating reports whether the window is one pattern of length 1, 2 or 3
// repeated.
func repeating(sigs []string, window int) bool {
	if window <= 0 || len(sigs) < window {
		return false
	}
	sigs = sigs[len(sigs)-window:]
	for plen := 1; plen <= 3; plen++ {
		if window%plen != 0 {
			continue
		}
		match := true
		for i := plen; i < window && match; i++ {
			match = sigs[i] == sigs[i%plen]
		}
		if match {
			return true
		}
	}
	return false
}
