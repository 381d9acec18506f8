package sim

import (
	"strings"
	"testing"
)

// TestComputerUseRefused: the Responses dialect refuses, 400 with the
// API's error shape, a computer tool without its display or environment
// or without truncation auto, and a computer_call_output that answers no
// call, has no screenshot or leaves a raised safety check unacknowledged;
// a well-formed round is answered.
func TestComputerUseRefused(t *testing.T) {
	s := NewServer()
	defer s.Close()
	s.SetDefault(Text("ok"))
	const tool = `"tools":[{"type":"computer_use_preview","display_width":1024,"display_height":768,"environment":"browser"}],"truncation":"auto"`
	const call = `{"type":"computer_call","id":"cu_1","call_id":"c1","action":{"type":"screenshot"},"pending_safety_checks":[{"id":"cs_1","code":"sensitive_domain","message":"m"}]}`
	const shot = `"output":{"type":"computer_screenshot","image_url":"data:image/png;base64,AA=="}`
	cases := []struct{ body, want string }{
		{`{"model":"m","tools":[{"type":"computer_use_preview","display_height":768,"environment":"browser"}],"truncation":"auto"}`, "tools[0].display_width"},
		{`{"model":"m","tools":[{"type":"computer_use_preview","display_width":1024,"display_height":768,"environment":"dos"}],"truncation":"auto"}`, "tools[0].environment"},
		{`{"model":"m","tools":[{"type":"computer_use_preview","display_width":1024,"display_height":768,"environment":"mac"}]}`, "truncation"},
		{`{"model":"m",` + tool + `,"input":[{"type":"computer_call_output","call_id":"c9",` + shot + `}]}`, "No computer call found"},
		{`{"model":"m",` + tool + `,"input":[` + call + `,{"type":"computer_call_output","call_id":"c1","output":{"type":"computer_screenshot"},"acknowledged_safety_checks":[{"id":"cs_1"}]}]}`, "computer_screenshot with an image_url"},
		{`{"model":"m",` + tool + `,"input":[` + call + `,{"type":"computer_call_output","call_id":"c1",` + shot + `}]}`, "cs_1 (sensitive_domain) of computer call c1 was not acknowledged"},
	}
	for _, c := range cases {
		code, body := post(t, s.URL()+"/v1/responses", c.body)
		if code != 400 || !strings.Contains(body, c.want) || !strings.Contains(body, `"type":"invalid_request_error"`) {
			t.Errorf("%s: %d %s; want 400 mentioning %s", c.body, code, body, c.want)
		}
	}
	ok := `{"model":"m",` + tool + `,"input":[` + call + `,{"type":"computer_call_output","call_id":"c1",` + shot + `,"acknowledged_safety_checks":[{"id":"cs_1","code":"sensitive_domain","message":"m"}]}]}`
	if code, body := post(t, s.URL()+"/v1/responses", ok); code != 200 {
		t.Errorf("a well-formed round: %d %s", code, body)
	}
}

// TestProviderToolsScriptMistakes: a reply using a provider tool the
// request does not offer is answered 500 naming the script's mistake;
// one the request offers is rendered in the dialect's shape.
func TestProviderToolsScriptMistakes(t *testing.T) {
	s := NewServer()
	defer s.Close()
	s.Enqueue(Reply{ComputerCalls: []ComputerCallReply{{Action: `{"type":"wait"}`}}},
		Reply{ServerTools: []ServerToolReply{{Tool: "google_search", Query: "q"}}},
		Reply{ServerTools: []ServerToolReply{{Tool: "google_search", Query: "weather Rome", Sources: []Source{{URL: "https://example.com/rome", Title: "Rome"}}}}, Text: "Sunny."})
	if code, body := post(t, s.URL()+"/v1/responses", `{"model":"m","tools":[{"type":"web_search"}]}`); code != 500 || !strings.Contains(body, "offers no computer_use_preview") {
		t.Errorf("a computer call without the tool: %d %s", code, body)
	}
	if code, body := post(t, s.URL()+"/v1beta/models/g:generateContent", `{"contents":[]}`); code != 500 || !strings.Contains(body, "google_search tool, which the request does not offer") {
		t.Errorf("a search without the tool: %d %s", code, body)
	}
	code, body := post(t, s.URL()+"/v1beta/models/g:generateContent", `{"contents":[],"tools":[{"googleSearch":{}}]}`)
	if code != 200 || !strings.Contains(body, `"groundingMetadata":{"groundingChunks":[{"web":{"title":"Rome","uri":"https://example.com/rome"}}]`) ||
		!strings.Contains(body, `"webSearchQueries":["weather Rome"]`) {
		t.Errorf("a search: %d %s", code, body)
	}
}
