package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Provider tools. A request may offer a provider's own tools beside its
// functions: OpenAI's web_search and computer_use_preview (Responses API),
// Gemini's googleSearch, codeExecution and urlContext, Anthropic's typed
// tools (web_search_20250305, computer_20250124...). Constraints records
// their types (in snake case: web_search, computer_use_preview,
// google_search, code_execution, url_context; Anthropic's as sent), and
// a Reply may use them (a Tool of web_search matches Anthropic's
// web_search_20250305):
//
//   - ServerTools is work the provider did itself, answered as content
//     before the text: a web_search_call item (OpenAI); executableCode
//     and codeExecutionResult parts, and the candidate's groundingMetadata
//     (google_search) or urlContextMetadata (url_context) (Gemini); a
//     server_tool_use block and its web_search_tool_result (Anthropic).
//   - ComputerCalls are computer_call items (OpenAI) for the client to
//     carry out.
//
// A reply using a tool the request does not offer is a mistake in the
// script, answered 500 as other such mistakes are. The OpenAI dialect
// also refuses, as the API does, 400: a computer_use_preview tool without
// display_width, display_height (positive integers) or environment, or
// without truncation "auto"; a computer_call_output that answers no
// computer_call of the input, carries no screenshot (output.type
// computer_screenshot with image_url or file_id), or leaves a safety
// check its call raised unacknowledged.

// ServerToolReply is one use of a server-run tool.
type ServerToolReply struct {
	// Tool is the provider tool's type: web_search (openai);
	// google_search, code_execution, url_context (gemini).
	Tool string `json:"tool"`
	// Query is what a search looked for.
	Query string `json:"query,omitempty"`
	// Sources are the pages a search or URL fetch found.
	Sources []Source `json:"sources,omitempty"`
	// Code and Output are the code run and what it printed
	// (code_execution).
	Code   string `json:"code,omitempty"`
	Output string `json:"output,omitempty"`
}

// Source is a page a server tool found.
type Source struct {
	URL   string `json:"url"`
	Title string `json:"title,omitempty"`
}

// ComputerCallReply is one computer_call (OpenAI computer use).
type ComputerCallReply struct {
	ID string `json:"id,omitempty"` // the call_id; empty: generated
	// Action is the action's JSON: {"type":"click","x":1,"y":2,"button":"left"}.
	Action string `json:"action"`
	// SafetyChecks are the call's pending_safety_checks.
	SafetyChecks []SafetyCheck `json:"safety_checks,omitempty"`
}

// SafetyCheck is a pending safety check of a computer call.
type SafetyCheck struct {
	ID      string `json:"id"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// checkProviderTools refuses a reply that uses a provider tool the
// request does not offer.
func (c Constraints) checkProviderTools(rep Reply) error {
	for _, st := range rep.ServerTools {
		if !slices.ContainsFunc(c.ProviderTools, func(t string) bool { return t == st.Tool || strings.HasPrefix(t, st.Tool+"_20") }) {
			return fmt.Errorf("the scripted reply uses the %s tool, which the request does not offer (it offers %v)", st.Tool, c.ProviderTools)
		}
	}
	if len(rep.ComputerCalls) > 0 && !slices.Contains(c.ProviderTools, "computer_use_preview") {
		return fmt.Errorf("the scripted reply makes a computer call, but the request offers no computer_use_preview tool")
	}
	return nil
}

// providerToolTypes returns the types of the non-function tools in a
// tools array, looked for only when the array names one (the fleet
// benchmark's requests carry functions only).
func providerToolTypes(raw json.RawMessage, words ...string) []json.RawMessage {
	found := false
	for _, w := range words {
		if bytes.Contains(raw, []byte(`"`+w+`"`)) {
			found = true
			break
		}
	}
	if !found {
		return nil
	}
	var tools []json.RawMessage
	_ = json.Unmarshal(raw, &tools)
	return tools
}

// openAIProviderTools records a Responses API request's provider tools
// and checks the computer use fields (see the comment at the top).
func openAIProviderTools(f map[string]json.RawMessage, c *Constraints) error {
	computer := false
	for i, raw := range providerToolTypes(f["tools"], "web_search", "web_search_preview", "computer_use_preview") {
		var t struct {
			Type          string  `json:"type"`
			DisplayWidth  float64 `json:"display_width"`
			DisplayHeight float64 `json:"display_height"`
			Environment   string  `json:"environment"`
		}
		_ = json.Unmarshal(raw, &t)
		if t.Type == "function" || t.Type == "" {
			continue
		}
		c.ProviderTools = append(c.ProviderTools, t.Type)
		if t.Type != "computer_use_preview" {
			continue
		}
		computer = true
		switch {
		case t.DisplayWidth <= 0 || t.DisplayWidth != float64(int(t.DisplayWidth)):
			return refuse("Missing required parameter: 'tools[%d].display_width'.", i)
		case t.DisplayHeight <= 0 || t.DisplayHeight != float64(int(t.DisplayHeight)):
			return refuse("Missing required parameter: 'tools[%d].display_height'.", i)
		case !slices.Contains([]string{"browser", "mac", "windows", "ubuntu", "linux"}, t.Environment):
			return refuse("Invalid value for 'tools[%d].environment': %q. Supported values are: 'browser', 'mac', 'windows', 'ubuntu' and 'linux'.", i, t.Environment)
		}
	}
	if computer {
		var trunc string
		_ = json.Unmarshal(f["truncation"], &trunc)
		if trunc != "auto" {
			return refuse("The computer_use_preview tool requires 'truncation' to be 'auto'.")
		}
	}
	if bytes.Contains(f["input"], []byte(`"computer_call_output"`)) {
		return checkComputerOutputs(f["input"])
	}
	return nil
}

// checkComputerOutputs checks each computer_call_output of an input
// against the computer_call it answers.
func checkComputerOutputs(input json.RawMessage) error {
	var items []struct {
		Type    string        `json:"type"`
		CallID  string        `json:"call_id"`
		Pending []SafetyCheck `json:"pending_safety_checks"`
		Acked   []SafetyCheck `json:"acknowledged_safety_checks"`
		Output  struct {
			Type     string `json:"type"`
			ImageURL string `json:"image_url"`
			FileID   string `json:"file_id"`
		} `json:"output"`
	}
	if err := json.Unmarshal(input, &items); err != nil {
		return refuse("Invalid type for 'input': %v", err)
	}
	calls := map[string][]SafetyCheck{}
	for i, it := range items {
		switch it.Type {
		case "computer_call":
			calls[it.CallID] = it.Pending
		case "computer_call_output":
			pending, ok := calls[it.CallID]
			switch {
			case !ok:
				return refuse("No computer call found for computer_call_output with call_id %s.", it.CallID)
			case it.Output.Type != "computer_screenshot" || (it.Output.ImageURL == "" && it.Output.FileID == ""):
				return refuse("Invalid 'input[%d].output': expected a computer_screenshot with an image_url or file_id.", i)
			}
			for _, p := range pending {
				if !slices.ContainsFunc(it.Acked, func(a SafetyCheck) bool { return a.ID == p.ID }) {
					return refuse("Safety check %s (%s) of computer call %s was not acknowledged in 'input[%d].acknowledged_safety_checks'.", p.ID, p.Code, it.CallID, i)
				}
			}
		}
	}
	return nil
}

// geminiProviderTools records a generateContent request's built-in
// tools: {"googleSearch": {}}, {"codeExecution": {}}, {"urlContext": {}}.
func geminiProviderTools(raw json.RawMessage, c *Constraints) {
	for _, t := range providerToolTypes(raw, "googleSearch", "codeExecution", "urlContext", "google_search", "code_execution", "url_context") {
		var m map[string]json.RawMessage
		_ = json.Unmarshal(t, &m)
		for k := range m {
			if k != "functionDeclarations" && k != "function_declarations" {
				c.ProviderTools = append(c.ProviderTools, snakeCase(k))
			}
		}
	}
	slices.Sort(c.ProviderTools)
}

// snakeCase turns googleSearch into google_search.
func snakeCase(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// openAIServerItems are a reply's web_search_call and computer_call
// output items.
func openAIServerItems(rep Reply) (before, calls []obj) {
	for _, st := range rep.ServerTools {
		action := obj{"type": "search", "query": st.Query}
		if len(st.Sources) > 0 {
			var srcs []obj
			for _, s := range st.Sources {
				srcs = append(srcs, obj{"type": "url", "url": s.URL})
			}
			action["sources"] = srcs
		}
		before = append(before, obj{"id": newID("ws"), "type": "web_search_call", "status": "completed", "action": action})
	}
	for _, cc := range rep.ComputerCalls {
		checks := []SafetyCheck{}
		checks = append(checks, cc.SafetyChecks...)
		calls = append(calls, obj{"id": newID("cu"), "type": "computer_call", "status": "completed",
			"call_id": orID(cc.ID, "call"), "action": geminiArgs(cc.Action), "pending_safety_checks": checks})
	}
	return before, calls
}

// geminiServerParts are a reply's code execution parts, and
// geminiMetadata the candidate fields of its searches and URL fetches.
func geminiServerParts(rep Reply) []obj {
	var parts []obj
	for _, st := range rep.ServerTools {
		if st.Tool == "code_execution" {
			parts = append(parts, obj{"executableCode": obj{"language": "PYTHON", "code": st.Code}},
				obj{"codeExecutionResult": obj{"outcome": "OUTCOME_OK", "output": st.Output}})
		}
	}
	return parts
}

func geminiMetadata(rep Reply, cand obj) {
	var queries []string
	var chunks, urls []obj
	for _, st := range rep.ServerTools {
		switch st.Tool {
		case "google_search":
			queries = append(queries, st.Query)
			for _, s := range st.Sources {
				chunks = append(chunks, obj{"web": obj{"uri": s.URL, "title": s.Title}})
			}
		case "url_context":
			for _, s := range st.Sources {
				urls = append(urls, obj{"retrievedUrl": s.URL, "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_SUCCESS"})
			}
		}
	}
	if len(queries) > 0 {
		cand["groundingMetadata"] = obj{"webSearchQueries": queries, "groundingChunks": chunks,
			"searchEntryPoint": obj{"renderedContent": "<div class=\"container\">" + strings.Join(queries, " ") + "</div>"}}
	}
	if len(urls) > 0 {
		cand["urlContextMetadata"] = obj{"urlMetadata": urls}
	}
}

// anthropicProviderTools records a Messages API request's typed tools
// (any with a type but custom).
func anthropicProviderTools(raw json.RawMessage, c *Constraints) {
	if !bytes.Contains(raw, []byte(`"type"`)) {
		return
	}
	var tools []struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(raw, &tools)
	for _, t := range tools {
		if t.Type != "" && t.Type != "custom" {
			c.ProviderTools = append(c.ProviderTools, t.Type)
		}
	}
}

// anthropicServerBlocks are a reply's web searches as the Messages API
// answers them: a server_tool_use block (the query) and its
// web_search_tool_result (the pages), in pairs.
func anthropicServerBlocks(rep Reply) [][2]obj {
	var out [][2]obj
	for _, st := range rep.ServerTools {
		id := newID("srvtoolu")
		results := []obj{}
		for _, s := range st.Sources {
			results = append(results, obj{"type": "web_search_result", "url": s.URL, "title": s.Title,
				"encrypted_content": "llmtest-encrypted", "page_age": nil})
		}
		out = append(out, [2]obj{
			{"type": "server_tool_use", "id": id, "name": st.Tool, "input": obj{"query": st.Query}},
			{"type": st.Tool + "_tool_result", "tool_use_id": id, "content": results}})
	}
	return out
}

// serverTool streams a server tool pair: the use with its input as
// input_json_delta, then the result whole.
func (a *anthropicStream) serverTool(index int, pair [2]obj) bool {
	use, result := pair[0], pair[1]
	input, _ := json.Marshal(use["input"])
	start, _ := json.Marshal(obj{"type": use["type"], "id": use["id"], "name": use["name"], "input": obj{}})
	whole, _ := json.Marshal(result)
	return a.blockStart(index, string(start)) &&
		a.delta(index, "partial_json", string(input), "input_json_delta") &&
		a.blockStop(index) &&
		a.blockStart(index+1, string(whole)) &&
		a.blockStop(index+1)
}
