package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentfleet/agentfleet/agent/permission"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/queue"
)

func init() { addCommand(newTailCmd) }

func newTailCmd() *cobra.Command {
	var cf clientFlags
	var o client.StreamOptions
	var after uint64
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tail TASK",
		Short: "Follow a task's events live, from its start (ends when the task finishes)",
		Long: `Print a task's events as they happen, replaying the earlier ones first.
--tree follows the whole tree of the task's root (children too); --after N resumes after
event id N; --from new skips the history. The command ends when the task has finished
(unless --follow or --tree). --json prints each event envelope as one JSON line.`,
		Args: exactArgs(1, "one task id"),
		RunE: func(c *cobra.Command, args []string) error {
			id, cl, err := cf.taskClient(args[0])
			if err != nil {
				return err
			}
			o.AfterSeq = after
			s, err := cl.Events(c.Context(), id, o)
			if err != nil {
				return apiFail(err)
			}
			defer func() { _ = s.Close() }()
			_, err = tail(c, s, asJSON)
			return err
		},
	}
	cf.register(cmd)
	cmd.Flags().BoolVar(&o.Tree, "tree", false, "follow every task of the tree")
	cmd.Flags().BoolVar(&o.Follow, "follow", false, "keep following after the task finished")
	cmd.Flags().StringVar(&o.From, "from", "", "start, new or an event id (default start)")
	cmd.Flags().Uint64Var(&after, "after", 0, "resume after this event id")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON lines")
	return cmd
}

// tail prints the stream's events until the task's end, which it returns
// (nil when the stream ended without one: --follow, or the context ended).
func tail(c *cobra.Command, s *client.EventStream, asJSON bool) (*api.StreamEnd, error) {
	out := c.OutOrStdout()
	p := &eventPrinter{w: out}
	for {
		ev, err := s.Next()
		switch {
		case errors.Is(err, io.EOF) || c.Context().Err() != nil:
			return nil, nil //nolint:nilerr // the stream ended or the user stopped following: not a failure
		case err != nil:
			return nil, failf("event stream: %v", err)
		case ev.End != nil:
			p.endLine()
			fmt.Fprintf(out, "task %s %s", ev.End.TaskID, ev.End.State)
			if ev.End.Error != "" {
				fmt.Fprintf(out, ": %s", ev.End.Error)
			}
			fmt.Fprintln(out)
			return ev.End, nil
		case asJSON:
			b, _ := json.Marshal(struct {
				ID uint64 `json:"id"`
				queue.Event
			}{ev.Seq, ev.Event})
			fmt.Fprintln(out, string(b))
		default:
			p.print(ev)
		}
	}
}

// eventData holds the fields of an agent event that tail shows.
type eventData struct {
	Text      string          `json:"text"`
	ToolName  string          `json:"tool_name"`
	Arguments json.RawMessage `json:"arguments"`
	Output    string          `json:"output"`
	IsError   bool            `json:"is_error"`
	Error     string          `json:"error"`
	State     string          `json:"state"`
	Reason    string          `json:"reason"`
	Turns     int             `json:"turns"`
	CallID    string          `json:"call_id"`
	// Permission describes APPROVAL_REQUESTED and PERMISSION_DENIED.
	Permission *permission.Record `json:"permission"`
}

// eventPrinter prints events readably: text deltas inline, one line for
// everything else.
type eventPrinter struct {
	w      io.Writer
	inText bool // a text delta line is open
}

func (p *eventPrinter) endLine() {
	if p.inText {
		fmt.Fprintln(p.w)
		p.inText = false
	}
}

func (p *eventPrinter) print(ev client.StreamedEvent) {
	var d eventData
	_ = json.Unmarshal(ev.Event.Data, &d)
	task := ev.Event.TaskID
	if len(task) > 8 {
		task = task[len(task)-8:]
	}
	prefix := fmt.Sprintf("%s [%s]", ev.Event.Time.Format("15:04:05"), task)
	switch ev.Event.Kind {
	case "ASSISTANT_TEXT_DELTA":
		if !p.inText {
			fmt.Fprintf(p.w, "%s assistant: ", prefix)
			p.inText = true
		}
		fmt.Fprint(p.w, d.Text)
		return
	case "ASSISTANT_TEXT_START", "TOOL_CALL_OUTPUT_DELTA":
		return // the end event carries the whole of it
	}
	if p.inText && ev.Event.Kind == "ASSISTANT_TEXT_END" {
		p.endLine()
		return
	}
	p.endLine()
	if s, ok := describeOutcomeEvent(ev.Event.Kind, ev.Event.Data); ok {
		fmt.Fprintf(p.w, "%s %s\n", prefix, s)
		return
	}
	fmt.Fprintf(p.w, "%s %s\n", prefix, describe(ev.Event.Kind, d))
	if ev.Event.Kind == "APPROVAL_REQUESTED" {
		fmt.Fprintf(p.w, "%s answer with: dispatcher approve|deny %s %s\n", prefix, ev.Event.TaskID, d.CallID)
	}
}

func describe(kind string, d eventData) string {
	switch kind {
	case "ASSISTANT_TEXT_END":
		return "assistant: " + oneLine(d.Text, 400)
	case "TOOL_CALL_START":
		return fmt.Sprintf("-> %s %s", d.ToolName, oneLine(string(d.Arguments), 200))
	case "TOOL_CALL_END":
		status := "ok"
		if d.IsError {
			status = "error"
		}
		return fmt.Sprintf("<- %s %s: %s", d.ToolName, status, oneLine(d.Output, 200))
	case "USER_INPUT", "STEERING_INJECTED":
		return strings.ToLower(kind) + ": " + oneLine(d.Text, 400)
	case "ERROR":
		return "error: " + d.Error
	case "APPROVAL_REQUESTED", "PERMISSION_DENIED":
		if r := d.Permission; r != nil {
			what := map[string]string{"APPROVAL_REQUESTED": "waits for approval", "PERMISSION_DENIED": "permission denied"}[kind]
			return fmt.Sprintf("%s: %s (%s): %s %s", what, d.ToolName, r.Rule, oneLine(r.Summary, 200), oneLine(r.Reason, 200))
		}
	case "SESSION_END":
		s := "session end"
		if d.State != "" {
			s += " (" + d.State + ")"
		}
		if d.Reason != "" {
			s += ": " + d.Reason
		}
		return s
	}
	s := kind
	if d.Text != "" {
		s += ": " + oneLine(d.Text, 200)
	}
	if d.Turns > 0 {
		s += " turns=" + strconv.Itoa(d.Turns)
	}
	return s
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		s = s[:max] + "..."
	}
	return s
}
