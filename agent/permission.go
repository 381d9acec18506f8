package agent

import (
	"context"
	"encoding/json"
	"errors"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/agentfleet/agentfleet/agent/permission"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/tools"
)

// Approver answers the calls a session's permission policy asks about.
// Approve returns the answer, or permission.ErrPending when a person will
// answer later: the session then parks (as for a wait on a subagent, see
// ErrParked) and the host resumes it once it has appended the answer to
// the history (AnswerTurn). Any other error denies the call with its text.
type Approver interface {
	Approve(ctx context.Context, req permission.Request) (permission.Answer, error)
}

// gateOutcome is what the permission gate decided for one call.
type gateOutcome int

const (
	gateRun    gateOutcome = iota // run the call
	gateDenied                    // the call does not run: the result is a denial, or why its arguments cannot run
	gateParked                    // the session parks until a person answers
)

// permLog collects the permission records of a round; the loop appends
// them as one turn after the round's results, since calls of a round may
// run concurrently.
type permLog struct {
	mu      sync.Mutex
	records []permission.Record
}

func (l *permLog) add(r permission.Record) {
	l.mu.Lock()
	l.records = append(l.records, r)
	l.mu.Unlock()
}

func (l *permLog) take() []permission.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.records
	l.records = nil
	return r
}

// gate checks call, whose arguments args the registry has validated for
// tool, against the session's policy before it runs (see
// Config.Permissions). A denied call gets an error result the model can
// act on; an asked one is answered from the history, by a remembered
// answer, or by the Approver. A call whose paths the tool cannot tell
// from its arguments (a patch that does not parse) gets the tool's error
// and is never asked about.
func (s *Session) gate(ctx context.Context, call llm.ToolCall, tool tools.Tool, args json.RawMessage) (llm.ToolResult, gateOutcome) {
	if s.cfg.Permissions == nil {
		return llm.ToolResult{}, gateRun
	}
	pc, err := s.permissionCall(call, tool, args)
	if err != nil {
		text := "Tool error (" + call.Name + "): " + err.Error()
		return llm.ToolResult{ToolCallID: call.ID, Name: call.Name, Content: text, IsError: true}, gateDenied
	}
	d := s.cfg.Permissions.Check(pc)
	if d.Action == permission.Allow {
		return llm.ToolResult{}, gateRun
	}
	req := permission.Request{CallID: call.ID, Tool: call.Name, Arguments: call.Arguments, Rule: d.Rule,
		Reason: d.Reason, Summary: permission.Summarize(pc, call.Arguments)}
	if d.Action == permission.Deny {
		return s.deny(call, req, d.Reason), gateDenied
	}
	ans, found := answerFor(s.view(), req)
	if !found {
		var err error
		if ans, err = s.askTraced(ctx, req); errors.Is(err, permission.ErrPending) {
			return llm.ToolResult{}, gateParked
		} else if err != nil {
			return s.deny(call, req, err.Error()), gateDenied
		}
		s.perms.add(permission.Record{Kind: permission.RecordAnswer, CallID: call.ID, Tool: call.Name, Rule: req.Rule,
			Summary: req.Summary, Answer: &ans, Time: s.clock.Now()})
	}
	if !ans.Approved {
		reason := "a person denied it"
		if ans.Reason != "" {
			reason += ": " + ans.Reason
		}
		return s.deny(call, req, reason), gateDenied
	}
	return llm.ToolResult{}, gateRun
}

// ask asks the Approver, announcing the request first.
func (s *Session) ask(ctx context.Context, req permission.Request) (permission.Answer, error) {
	if s.cfg.Approver == nil {
		return permission.Answer{}, errors.New("it needs a person's approval (" + req.Reason + ") and no one can be asked in this session; do it another way or leave it for a person")
	}
	rec := permission.Record{Kind: permission.RecordRequest, CallID: req.CallID, Tool: req.Tool, Rule: req.Rule, Reason: req.Reason, Summary: req.Summary}
	s.emit(Event{Kind: EventApprovalRequested, ToolName: req.Tool, CallID: req.CallID, Arguments: req.Arguments, Permission: &rec})
	return s.cfg.Approver.Approve(ctx, req)
}

// deny records a denial and returns the error result the model sees.
func (s *Session) deny(call llm.ToolCall, req permission.Request, reason string) llm.ToolResult {
	rec := permission.Record{Kind: permission.RecordDenial, CallID: call.ID, Tool: call.Name, Rule: req.Rule,
		Reason: reason, Summary: req.Summary, Time: s.clock.Now()}
	s.perms.add(rec)
	s.emit(Event{Kind: EventPermissionDenied, ToolName: call.Name, CallID: call.ID, Permission: &rec})
	text := "Permission denied (" + req.Rule + "): " + reason
	return llm.ToolResult{ToolCallID: call.ID, Name: call.Name, Content: text, IsError: true}
}

// answerFor finds the answer to req in the history: one given to this
// call, or a remembered one for the same tool and rule.
func answerFor(h []Turn, req permission.Request) (permission.Answer, bool) {
	var remembered *permission.Answer
	for _, t := range h {
		r := t.Permission
		if t.Kind != TurnPermission || r == nil || r.Kind != permission.RecordAnswer || r.Answer == nil {
			continue
		}
		if r.CallID == req.CallID {
			return *r.Answer, true
		}
		if r.Answer.Remember && r.Tool == req.Tool && r.Rule == req.Rule {
			remembered = r.Answer
		}
	}
	if remembered != nil {
		return *remembered, true
	}
	return permission.Answer{}, false
}

// recordPermissions appends the round's permission records as one turn.
func (s *Session) recordPermissions(ctx context.Context) error {
	for _, r := range s.perms.take() {
		if err := s.appendTurn(ctx, Turn{Kind: TurnPermission, Permission: &r}); err != nil {
			return err
		}
	}
	return nil
}

// permissionCall describes a call of tool with the validated arguments
// args for the policy: its kind from the tool's name and whether it
// mutates; the command of a shell call; else the paths the tool itself
// reads from its arguments (Tool.Paths), or PathsUnknown when the tool
// does not say. An error is the tool's own: its arguments cannot run.
func (s *Session) permissionCall(call llm.ToolCall, tool tools.Tool, args json.RawMessage) (permission.Call, error) {
	c := permission.Call{Tool: call.Name, Kind: toolKind(tool)}
	switch {
	case c.Kind == permission.KindShell:
		var a struct {
			Command string `json:"command"`
		}
		_ = json.Unmarshal(args, &a)
		c.Command = a.Command
		return c, nil
	case c.Kind == permission.KindAgent:
		return c, nil
	case tool.Paths == nil:
		c.PathsUnknown = true
		return c, nil
	}
	paths, err := tool.Paths(args)
	if err != nil {
		return c, err
	}
	for _, p := range paths {
		if p != "" {
			c.Paths = append(c.Paths, s.relPath(p))
		}
	}
	return c, nil
}

// subagentTools coordinate children, which carry the policy themselves.
var subagentTools = map[string]bool{"spawn_agent": true, "send_input": true, "wait": true, "close_agent": true}

// toolKind classifies a tool for the modes.
func toolKind(t tools.Tool) permission.Kind {
	switch name := t.Name; {
	case subagentTools[name]:
		return permission.KindAgent
	case name == "shell":
		return permission.KindShell
	case !t.Mutates:
		return permission.KindRead
	case name == "write_file" || name == "edit_file" || name == "apply_patch":
		return permission.KindEdit
	}
	return permission.KindOther
}

// relPath cleans p and makes it relative to the working directory when it
// is inside it.
func (s *Session) relPath(p string) string {
	wd := s.env.WorkingDir()
	if !path.IsAbs(p) {
		return path.Clean(p)
	}
	p = path.Clean(p)
	if wd != "" && strings.HasPrefix(p, path.Clean(wd)+"/") {
		return strings.TrimPrefix(p, path.Clean(wd)+"/")
	}
	return p
}

// AnswerTurn is the history entry that carries a person's answer a, given
// at time at, to the pending call req (as the Approver was asked it): a
// host that parked a session for an approval appends it (as turn index)
// and resumes the session, which then runs or denies the call. It is the
// one encoder of that turn; a host that stores turns as JSON stores it
// marshalled. The record's Reason is the answer's.
func AnswerTurn(index int, req permission.Request, a permission.Answer, at time.Time) Turn {
	return Turn{Index: index, Kind: TurnPermission, Time: at, Permission: &permission.Record{
		Kind: permission.RecordAnswer, CallID: req.CallID, Tool: req.Tool, Rule: req.Rule,
		Reason: a.Reason, Summary: req.Summary, Answer: &a, Time: at}}
}
