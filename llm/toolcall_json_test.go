package llm

import (
	"encoding/json"
	"testing"
)

func TestToolCallJSONRoundTrip(t *testing.T) {
	cases := map[string]ToolCall{
		"valid arguments":   {ID: "c1", Name: "read_file", Arguments: json.RawMessage(`{"file_path":"a.go"}`)},
		"invalid arguments": {ID: "c2", Name: "shell", Arguments: json.RawMessage(`{"command": "ls`), ArgumentsError: "unexpected end of JSON input"},
		"no arguments":      {ID: "c3", Name: "glob", Signature: "sig"},
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			data, err := json.Marshal(in)
			if err != nil {
				t.Fatalf("marshal: %v", err)
			}
			var out ToolCall
			if err := json.Unmarshal(data, &out); err != nil {
				t.Fatalf("unmarshal %s: %v", data, err)
			}
			if out.ID != in.ID || out.Name != in.Name || string(out.Arguments) != string(in.Arguments) ||
				out.ArgumentsError != in.ArgumentsError || out.Signature != in.Signature {
				t.Fatalf("round trip changed the call:\n in: %+v\nout: %+v\njson: %s", in, out, data)
			}
		})
	}
}
