package agent

import (
	"strings"
	"testing"
)

func TestStateTransitions(t *testing.T) {
	tests := []struct {
		from, to State
		ok       bool
	}{
		{StateIdle, StateProcessing, true},
		{StateProcessing, StateProcessing, true},
		{StateProcessing, StateAwaitingInput, true},
		{StateProcessing, StateIdle, true},
		{StateProcessing, StateClosed, true},
		{StateIdle, StateClosed, true},
		{StateAwaitingInput, StateProcessing, true},
		{StateAwaitingInput, StateClosed, true},
		{StateIdle, StateAwaitingInput, false},
		{StateAwaitingInput, StateIdle, false},
		{StateClosed, StateProcessing, false},
		{StateClosed, StateIdle, false},
	}
	for _, tt := range tests {
		s := &Session{state: tt.from}
		err := s.setStateLocked(tt.to)
		if (err == nil) != tt.ok {
			t.Errorf("%s -> %s: err = %v, want ok=%v", tt.from, tt.to, err, tt.ok)
		}
		if err != nil && s.state != tt.from {
			t.Errorf("%s -> %s: state changed on an illegal move", tt.from, tt.to)
		}
	}
}

func TestRepeatingPatterns(t *testing.T) {
	tests := []struct {
		name   string
		sigs   string
		window int
		want   bool
	}{
		{"same call", "aaaa", 4, true},
		{"pair cycle", "abababab", 8, true},
		{"triple cycle", "abcabcabc", 9, true},
		{"triple in window 10 is not a cycle", "abcabcabca", 10, false},
		{"varied", "abcdabcdab", 10, false},
		{"too few", "aaa", 4, false},
		{"only the last window counts", "xaaaa", 4, true},
	}
	for _, tt := range tests {
		sigs := strings.Split(tt.sigs, "")
		if got := repeating(sigs, tt.window); got != tt.want {
			t.Errorf("%s: repeating(%q, %d) = %v", tt.name, tt.sigs, tt.window, got)
		}
	}
}

func TestStopConditions(t *testing.T) {
	if !roundLimitReached(2, 2) || roundLimitReached(2, 1) || roundLimitReached(0, 100) {
		t.Error("roundLimitReached")
	}
	if !turnLimitReached(3, 3) || turnLimitReached(3, 2) || turnLimitReached(0, 9) {
		t.Error("turnLimitReached")
	}
	if !contextOver(801, 1000) || contextOver(800, 1000) {
		t.Error("contextOver: the warning fires above 80%")
	}
	if completion("Shall I proceed?") != StopAwaitingInput || completion("Done.") != StopCompleted {
		t.Error("completion")
	}
}

func TestSessionConfigValidate(t *testing.T) {
	bad := []struct {
		cfg  SessionConfig
		want string
	}{
		{SessionConfig{MaxTurns: -1}, "MaxTurns"},
		{SessionConfig{MaxToolRoundsPerInput: -1}, "MaxToolRoundsPerInput"},
		{SessionConfig{ReasoningEffort: "max"}, "ReasoningEffort"},
		{SessionConfig{QueueMode: "drop"}, "QueueMode"},
		{SessionConfig{DefaultCommandTimeout: 20 * 60e9, MaxCommandTimeout: 60e9}, "DefaultCommandTimeout"},
		{SessionConfig{ToolOutputLimits: map[string]int{"shell": 0}}, `ToolOutputLimits["shell"]`},
	}
	for _, tt := range bad {
		err := tt.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Validate(%+v) = %v, want an error naming %s", tt.cfg, err, tt.want)
		}
	}
	d := SessionConfig{}.WithDefaults()
	if d.LoopDetectionWindow != 10 || d.MaxSubagentDepth != 1 || d.MaxCommandTimeout != DefaultMaxCommandTimeout || d.QueueMode != QueueQueue {
		t.Errorf("defaults = %+v", d)
	}
	if err := (Config{}).Validate(); err == nil || !strings.Contains(err.Error(), "Client") {
		t.Errorf("Config{}.Validate() = %v", err)
	}
}
