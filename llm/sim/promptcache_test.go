package sim

import (
	"encoding/json"
	"testing"
)

// TestUnmark: cache_control is cut out wherever it stands, and the rest of
// the block keeps its bytes.
func TestUnmark(t *testing.T) {
	for in, want := range map[string]string{
		`{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}`: `{"type":"text","text":"a"}`,
		`{"cache_control":{"type":"ephemeral"},"type":"text"}`:            `{"type":"text"}`,
		`{"type":"text","cache_control":{"type":"ephemeral"},"text":"b"}`: `{"type":"text","text":"b"}`,
		`{"type":"text","text":"\"cache_control\""}`:                      `{"type":"text","text":"\"cache_control\""}`,
	} {
		got, marked := unmark(json.RawMessage(in))
		if string(got) != want || marked != (in != want) {
			t.Errorf("unmark(%s) = %s, %v; want %s", in, got, marked, want)
		}
	}
}
