package permission

import (
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrPending is what an Approver returns when a person will answer later:
// the session parks until the answer is in its history.
var ErrPending = errors.New("permission: approval pending")

// Request is a call that needs a person's approval.
type Request struct {
	CallID    string          `json:"call_id"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Rule      string          `json:"rule"`   // the decision's Rule
	Reason    string          `json:"reason"` // the decision's Reason
	Summary   string          `json:"summary"`
}

// Answer is a person's decision on a Request.
type Answer struct {
	Approved bool   `json:"approved"`
	Reason   string `json:"reason,omitempty"`
	// Remember applies the answer to the later calls of the same tool that
	// the same rule asks about, for the rest of the session.
	Remember bool `json:"remember,omitempty"`
	// By says who answered: a person's name, "api", "expiry".
	By string `json:"by,omitempty"`
}

// Record kinds.
const (
	RecordDenial  = "denial"  // the policy (or a person, or an expiry) refused a call
	RecordAnswer  = "answer"  // a person's answer to a pending approval
	RecordRequest = "request" // a call waiting for a person (in APPROVAL_REQUESTED events only)
)

// Record is one permission event of a session, kept in its history: a
// denial, or an answer to an approval. Records are what a host shows as
// the session's permission log.
type Record struct {
	Kind    string `json:"kind"` // RecordDenial, RecordAnswer or RecordRequest
	CallID  string `json:"call_id"`
	Tool    string `json:"tool,omitempty"`
	Rule    string `json:"rule,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Summary string `json:"summary,omitempty"` // the call's arguments, shortened
	// Answer is set on RecordAnswer records.
	Answer *Answer   `json:"answer,omitempty"`
	Time   time.Time `json:"time,omitzero"`
}

// MaxSummary bounds an argument summary in bytes.
const MaxSummary = 200

// Summarize shortens a call's arguments for records and logs: the command
// of a shell call, the paths of a file call, else the arguments as JSON.
func Summarize(c Call, args json.RawMessage) string {
	s := string(args)
	switch {
	case c.Kind == KindShell && c.Command != "":
		s = c.Command
	case len(c.Paths) > 0:
		s = strings.Join(c.Paths, ", ")
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= MaxSummary {
		return s
	}
	cut := MaxSummary
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
