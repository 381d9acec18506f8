package fleet

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzDecodeSpec: any stored spec bytes decode without a panic, and
// validation of what decodes does not panic either. A spec that decodes
// and validates encodes the same after a round trip through JSON, and still
// validates: what the dispatcher stores is what the worker reads.
func FuzzDecodeSpec(f *testing.F) {
	f.Add([]byte(`{"prompt":"fix the build","profile":"anthropic"}`))
	f.Add([]byte(`{"prompt":"x","profile":"openai","limits":{"wall_time":"30m","max_turns":3},"labels":{"team":"a"}}`))
	f.Add([]byte(`{"prompt":"x","profile":"gemini","environment":{"kind":"ssh","host":"h","working_dir":"/w","key_ref":"k"}}`))
	f.Add([]byte(`{"prompt":"x","profile":"anthropic","limits":{"wall_time":90},"max_subagent_depth":0,"priority":-5}`))
	f.Add([]byte(`{"prompt":"","profile":"nope","queue":"bad queue!","idempotency_key":"` + string(make([]byte, 300)) + `"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, err := DecodeSpec(raw)
		if err != nil {
			return
		}
		if s.ValidateSubmission("openai", "anthropic", "gemini") != nil || s.Validate("openai", "anthropic", "gemini") != nil {
			return
		}
		again, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("a valid spec does not encode: %v", err)
		}
		back, err := DecodeSpec(again)
		if err != nil {
			t.Fatalf("a valid spec does not decode back: %v\n%s", err, again)
		}
		if twice, _ := json.Marshal(back); !bytes.Equal(twice, again) {
			t.Fatalf("round trip changed the spec:\nbefore %s\nafter  %s", again, twice)
		}
		if err := back.Validate("openai", "anthropic", "gemini"); err != nil {
			t.Fatalf("round trip made the spec invalid: %v", err)
		}
	})
}
