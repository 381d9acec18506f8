package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/agent"
)

func TestRedactorReplacesKnownValues(t *testing.T) {
	r := agent.NewRedactor(map[string]string{
		"ANTHROPIC_API_KEY": "sk-ant-0123456789abcdef",
		"LONGER":            "sk-ant-0123456789abcdef-and-more",
		"SHORT":             "abc", // too short to redact
		"ALIAS":             "pg-secret-pass",
		"DATABASE_PASSWORD": "pg-secret-pass", // the same value: the first name in order wins
	})
	got := r.Redact("key sk-ant-0123456789abcdef, long sk-ant-0123456789abcdef-and-more, abc, db pg-secret-pass")
	want := "key [redacted:ANTHROPIC_API_KEY], long [redacted:LONGER], abc, db [redacted:ALIAS]"
	if got != want {
		t.Errorf("Redact = %q\nwant     %q", got, want)
	}
	if agent.NewRedactor(map[string]string{"SHORT": "1234567"}) != nil {
		t.Error("a Redactor of values shorter than MinSecretLen should be nil")
	}
	var none *agent.Redactor
	if got := none.Redact("anything"); got != "anything" {
		t.Errorf("a nil Redactor changed %q", got)
	}
}

// A secret split across output chunks is redacted whole, and what is held
// back for the next chunk comes out at the flush.
func TestRedactorStreamJoinsSplitSecrets(t *testing.T) {
	r := agent.NewRedactor(map[string]string{"TOKEN": "ghp_0123456789"})
	for _, c := range []struct {
		chunks []string
		want   string
	}{
		{[]string{"before ghp_01", "23456789 after"}, "before [redacted:TOKEN] after"},
		{[]string{"before g", "hp_0123456789", " after"}, "before [redacted:TOKEN] after"},
		{[]string{"before ghp_0123456789 after"}, "before [redacted:TOKEN] after"},
		{[]string{"before ", "ghp_012345678", "9", " after"}, "before [redacted:TOKEN] after"},
		{[]string{"a ghp_0123 is not it, ", "ghp_0123456789 is"}, "a ghp_0123 is not it, [redacted:TOKEN] is"},
		{[]string{"ends with the start: ghp_012"}, "ends with the start: ghp_012"},
	} {
		var out []string
		write, flush := r.Stream(func(s string) { out = append(out, s) })
		for _, chunk := range c.chunks {
			write(chunk)
		}
		flush()
		if got := strings.Join(out, ""); got != c.want {
			t.Errorf("chunks %q gave %q, want %q", c.chunks, got, c.want)
		}
		for _, o := range out {
			if strings.Contains(o, "ghp_01234") {
				t.Errorf("chunks %q: a chunk emitted part of the secret: %q", c.chunks, o)
			}
		}
	}
}

// TestSessionRedactsToolOutput: a shell command through a real local
// environment prints a secret on stdout and stderr; the output deltas,
// TOOL_CALL_END, the recorded turn and what the model is sent all hold
// [redacted:NAME] instead.
func TestSessionRedactsToolOutput(t *testing.T) {
	const secret = "sk-live-5f3a9c1e7b2d4086"
	rec := agent.NewMemoryRecorder()
	w := newWorld(t, providers[0], agent.Config{Recorder: rec,
		Redactor: agent.NewRedactor(map[string]string{"OPENAI_API_KEY": secret})})
	w.writeFile("leak.txt", secret+"\n")
	end, res := w.runShell("cat leak.txt; cat leak.txt >&2")
	w.inputDone()
	var deltas strings.Builder
	for _, ev := range w.Events() {
		if ev.Kind == agent.EventToolCallOutput {
			deltas.WriteString(ev.Output)
		}
	}
	turns, err := rec.Load(context.Background(), w.s.ID())
	if err != nil {
		t.Fatal(err)
	}
	var recorded strings.Builder
	for _, turn := range turns {
		for _, r := range turn.Results {
			recorded.WriteString(r.Content)
		}
	}
	for what, text := range map[string]string{"TOOL_CALL_END": end.Output, "output deltas": deltas.String(),
		"the result": res.Content, "the recorded turn": recorded.String(), "the model's request": w.body(-1)} {
		if strings.Contains(text, secret) || !strings.Contains(text, "[redacted:OPENAI_API_KEY]") {
			if len(text) > 2000 {
				text = text[:2000] + "..."
			}
			t.Errorf("%s is not redacted:\n%s", what, text)
		}
	}
}

// Streamed in two chunks split anywhere, or in chunks of one byte, the
// output is what Redact makes of the whole.
func TestRedactorStreamAnySplit(t *testing.T) {
	r := agent.NewRedactor(map[string]string{"A": "aaaa-secret-1", "B": "aaaa-secret-12345", "C": "xyzxyzxy"})
	whole := "aaaa-secret-aaaa-secret-12345 aaaa-secret-1 xyzxyzxyzxyzxy aaaa-secret-123 xyzxyzx"
	want := r.Redact(whole)
	stream := func(chunks []string) string {
		var out strings.Builder
		write, flush := r.Stream(func(s string) { out.WriteString(s) })
		for _, c := range chunks {
			write(c)
		}
		flush()
		return out.String()
	}
	for i := 0; i <= len(whole); i++ {
		if got := stream([]string{whole[:i], whole[i:]}); got != want {
			t.Fatalf("split at %d: %q, want %q", i, got, want)
		}
	}
	if got := stream(strings.Split(whole, "")); got != want {
		t.Fatalf("byte by byte: %q, want %q", got, want)
	}
}
