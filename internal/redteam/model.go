package redteam

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/sim"
	"github.com/agentfleet/agentfleet/llm/sim/scripted"
)

// model is the simulated model of the suite's fleet: the Anthropic
// Messages API is answered by llm/sim/scripted, the OpenAI Responses API
// (POST .../responses, the openai profile) by openAIScript, from the same
// kind of script (scripted.Prompt) in the task's prompt.
type model struct {
	anthropic *scripted.Model
}

func newModel() *model { return &model{anthropic: scripted.New()} }

func (m *model) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/responses") {
		m.anthropic.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rep, err := openAIScript(body)
	if err != nil {
		http.Error(w, "redteam model: "+err.Error(), http.StatusBadRequest)
		return
	}
	one := sim.New()
	defer one.Close()
	one.Enqueue(rep)
	r.Body = io.NopCloser(bytes.NewReader(body))
	one.ServeHTTP(w, r)
}

// scriptMarker is llm/sim/scripted's: what follows it in a prompt is the
// script.
const scriptMarker = "\n#agentfleet-script "

// openAIScript answers a Responses API request from the script in its
// first user message: the turn is the number of assistant answers in the
// input (a run of function_call or assistant message items is one).
func openAIScript(body []byte) (sim.Reply, error) {
	var req struct {
		Input []json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return sim.Reply{}, err
	}
	var first string
	turns, inAnswer := 0, false
	for _, raw := range req.Input {
		var it struct {
			Type    string          `json:"type"`
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(raw, &it) != nil {
			continue
		}
		assistant := it.Type == "function_call" || it.Type == "reasoning" || it.Role == "assistant"
		if assistant && !inAnswer {
			turns++
		}
		inAnswer = assistant
		if it.Role == "user" && first == "" {
			first = contentText(it.Content)
		}
	}
	steps, err := stepsOf(first)
	if err != nil {
		return sim.Reply{}, err
	}
	rep := sim.Reply{Usage: llm.Usage{InputTokens: 100, OutputTokens: 20}}
	if turns >= len(steps) {
		rep.Text = "done"
		return rep, nil
	}
	st := steps[turns]
	rep.Text = st.Text
	for i, c := range st.Calls {
		args, _ := json.Marshal(c.Args)
		rep.ToolCalls = append(rep.ToolCalls, sim.ToolCallReply{ID: fmt.Sprintf("call_%d_%d", turns, i), Name: c.Name, Arguments: string(args)})
	}
	if len(rep.ToolCalls) > 0 {
		rep.Text = ""
	}
	return rep, nil
}

// contentText is the text of a message's content: a string or a list of
// parts with text.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// stepsOf decodes the script that follows the marker (text the worker
// adds after it is ignored).
func stepsOf(prompt string) ([]scripted.Step, error) {
	_, script, ok := strings.Cut(prompt, scriptMarker)
	if !ok {
		return nil, nil
	}
	var steps []scripted.Step
	if err := json.NewDecoder(strings.NewReader(script)).Decode(&steps); err != nil {
		return nil, fmt.Errorf("the script in the prompt is not JSON: %v", err)
	}
	return steps, nil
}
