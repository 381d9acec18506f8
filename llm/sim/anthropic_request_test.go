package sim

import "testing"

func TestAnthropicMessages(t *testing.T) {
	body := []byte(`{"model":"m","messages":[
		{"role":"user","content":"plain text"},
		{"role":"assistant","content":[{"type":"tool_use","id":"tu1","name":"spawn_agent","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu1","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}]}`)
	msgs, err := AnthropicMessages(body)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 || msgs[0].Blocks[0].Text != "plain text" || msgs[1].Blocks[0].Name != "spawn_agent" ||
		msgs[2].Blocks[0].ToolUseID != "tu1" || msgs[2].Blocks[0].ResultText() != "ab" {
		t.Fatalf("messages %+v", msgs)
	}
	if _, err := AnthropicMessages([]byte(`not json`)); err == nil {
		t.Fatal("a body that is not JSON was read")
	}
}
