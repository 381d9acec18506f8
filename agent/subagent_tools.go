package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentfleet/agentfleet/tools"
)

// Descriptions of the subagent tools, in our own words.
const (
	spawnAgentDescription = "Start a subagent: a separate agent with its own conversation that works on a scoped task " +
		"in the same files as you. Returns its agent_id at once; call wait to get its result. Use it for independent " +
		"pieces of work that can run while you do something else."
	sendInputDescription  = "Send a message to a subagent: it is injected into a running subagent's work, or starts a new round of work on a finished one."
	waitDescription       = "Wait for a subagent to finish and return its final output, whether it succeeded and how many turns it used."
	closeAgentDescription = "Stop a subagent and release it. Returns its final status."
)

var (
	spawnAgentSchema = json.RawMessage(`{"type":"object","properties":{` +
		`"task":{"type":"string","description":"What the subagent should do, in plain language, with all the context it needs."},` +
		`"working_dir":{"type":"string","description":"Subdirectory of the working directory the subagent starts in."},` +
		`"model":{"type":"string","description":"Model for the subagent; defaults to yours."},` +
		`"max_turns":{"type":"integer","minimum":0,"description":"Turn limit for the subagent; 0 means no limit."},` +
		`"read_only":{"type":"boolean","description":"Make the subagent a reader: it can read and search your files but cannot edit, write or run commands. Use it for research and review; it works in your files, not a copy."}},` +
		`"required":["task"],"additionalProperties":false}`)
	sendInputSchema = json.RawMessage(`{"type":"object","properties":{` +
		`"agent_id":{"type":"string","description":"The id spawn_agent returned."},` +
		`"message":{"type":"string","description":"The message for the subagent."}},` +
		`"required":["agent_id","message"],"additionalProperties":false}`)
	agentIDSchema = json.RawMessage(`{"type":"object","properties":{` +
		`"agent_id":{"type":"string","description":"The id spawn_agent returned."}},` +
		`"required":["agent_id"],"additionalProperties":false}`)
)

// subagentLimits keeps a subagent's result within 20,000 characters, head
// and tail.
var subagentLimits = tools.Limits{MaxChars: 20000, Mode: tools.HeadTail}

// registerSubagentTools adds spawn_agent, send_input, wait and close_agent
// to the session's registry. They mutate (they run in order) so a parking
// wait stops the round cleanly.
func (s *Session) registerSubagentTools() {
	s.registry.Register(tools.Tool{Name: "spawn_agent", Description: spawnAgentDescription, Parameters: spawnAgentSchema,
		Mutates: true, Limits: subagentLimits, Run: s.runSpawnAgent})
	s.registry.Register(tools.Tool{Name: "send_input", Description: sendInputDescription, Parameters: sendInputSchema,
		Mutates: true, Run: s.runSendInput})
	s.registry.Register(tools.Tool{Name: "wait", Description: waitDescription, Parameters: agentIDSchema,
		Mutates: true, Limits: subagentLimits, Run: s.runWait})
	s.registry.Register(tools.Tool{Name: "close_agent", Description: closeAgentDescription, Parameters: agentIDSchema,
		Mutates: true, Run: s.runCloseAgent})
}

// maxDepth is the configured subagent depth (negative: none allowed).
func (s *Session) maxDepth() int { return s.cfg.Session.MaxSubagentDepth }

func (s *Session) runSpawnAgent(ctx context.Context, call tools.Call) (tools.Output, error) {
	var args struct {
		Task       string `json:"task"`
		WorkingDir string `json:"working_dir"`
		Model      string `json:"model"`
		MaxTurns   int    `json:"max_turns"`
		ReadOnly   bool   `json:"read_only"`
	}
	if err := json.Unmarshal(call.Args, &args); err != nil {
		return tools.Output{}, err
	}
	depth := s.cfg.Depth + 1
	if max := s.maxDepth(); max < 0 || depth > max {
		return tools.Output{IsError: true, Text: fmt.Sprintf(
			"Cannot spawn a subagent: this session is at depth %d and max_subagent_depth is %d. Do this task yourself with the tools you have.",
			s.cfg.Depth, max)}, nil
	}
	st, err := s.spawner.Spawn(ctx, SpawnRequest{CallID: call.ID, ParentID: s.id, Depth: depth, Task: args.Task,
		WorkingDir: args.WorkingDir, Model: args.Model, MaxTurns: args.MaxTurns, ReadOnly: args.ReadOnly})
	if err != nil {
		return tools.Output{}, err
	}
	return jsonOutput(st)
}

func (s *Session) runSendInput(ctx context.Context, call tools.Call) (tools.Output, error) {
	var args struct {
		AgentID string `json:"agent_id"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(call.Args, &args); err != nil {
		return tools.Output{}, err
	}
	if err := s.spawner.SendInput(ctx, args.AgentID, args.Message); err != nil {
		return tools.Output{}, err
	}
	return jsonOutput(map[string]string{"agent_id": args.AgentID, "status": "delivered"})
}

func (s *Session) runWait(ctx context.Context, call tools.Call) (tools.Output, error) {
	id, err := agentID(call)
	if err != nil {
		return tools.Output{}, err
	}
	res, err := s.spawner.Wait(ctx, id)
	if errors.Is(err, ErrParked) {
		s.parkIDs.Store(call.ID, struct{}{})
		return tools.Output{Text: "parked"}, nil
	}
	if err != nil {
		return tools.Output{}, err
	}
	out, err := jsonOutput(res)
	out.IsError = !res.Success
	return out, err
}

func (s *Session) runCloseAgent(ctx context.Context, call tools.Call) (tools.Output, error) {
	id, err := agentID(call)
	if err != nil {
		return tools.Output{}, err
	}
	st, err := s.spawner.Close(ctx, id)
	if err != nil {
		return tools.Output{}, err
	}
	return jsonOutput(st)
}

func agentID(call tools.Call) (string, error) { return agentIDArg(call.Args) }

// agentIDArg decodes the agent_id argument of wait and close_agent.
func agentIDArg(args json.RawMessage) (string, error) {
	var a struct {
		AgentID string `json:"agent_id"`
	}
	err := json.Unmarshal(args, &a)
	return a.AgentID, err
}

// PendingWaits returns the agent ids named by the wait calls of the last
// assistant turn of h that have no recorded result, in call order: what a
// session parked in that round waits for. A host that parks sessions reads
// it rather than decoding the wait tool's arguments itself. Calls whose
// arguments do not decode are skipped.
func PendingWaits(h []Turn) []string {
	last := -1
	for i := len(h) - 1; i >= 0 && last < 0; i-- {
		if h[i].Kind == TurnAssistant {
			last = i
		}
	}
	if last < 0 {
		return nil
	}
	answered := map[string]bool{}
	for _, t := range h[last+1:] {
		for _, res := range t.Results {
			answered[res.ToolCallID] = true
		}
	}
	var ids []string
	for _, c := range h[last].ToolCalls {
		if c.Name != "wait" || answered[c.ID] {
			continue
		}
		if id, err := agentIDArg(c.Arguments); err == nil && id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}

func jsonOutput(v any) (tools.Output, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	return tools.Output{Text: string(b)}, err
}
