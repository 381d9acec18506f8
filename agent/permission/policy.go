package permission

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Mode is what a policy does with calls no rule matched.
type Mode string

// Modes, from widest to strictest.
const (
	ModeAllow       Mode = "allow"        // everything runs
	ModeAcceptEdits Mode = "accept_edits" // reads and edits run; shell and other tools ask
	ModeAsk         Mode = "ask"          // reads run; everything else asks
	ModeDeny        Mode = "deny"         // reads run; everything else is refused
	ModePlan        Mode = "plan"         // reads only, whatever the rules say
)

// Modes lists the valid modes, widest first.
var Modes = []Mode{ModeAllow, ModeAcceptEdits, ModeAsk, ModeDeny, ModePlan}

// Action is what happens to a call.
type Action string

// Actions, from widest to strictest.
const (
	Allow Action = "allow"
	Ask   Action = "ask"
	Deny  Action = "deny"
)

// Actions lists the valid actions, widest first.
var Actions = []Action{Allow, Ask, Deny}

// Kind says what a tool does, for the modes.
type Kind string

// Kinds of tool.
const (
	KindRead  Kind = "read"  // reads files or searches (read_file, grep, glob, list_dir, web_fetch)
	KindEdit  Kind = "edit"  // changes files (write_file, edit_file, apply_patch)
	KindShell Kind = "shell" // runs a command
	KindAgent Kind = "agent" // coordinates subagents (spawn_agent, wait, ...): children carry the policy
	KindOther Kind = "other" // anything else that changes state (MCP tools, custom tools)
)

// Rule decides the calls it matches.
type Rule struct {
	// Tool is a glob over the tool name; "" and "*" match every tool.
	Tool string `json:"tool,omitempty"`
	// Pattern is a glob over the command of a shell call or the paths of a
	// file call; "" matches every call of the tool.
	Pattern string `json:"pattern,omitempty"`
	// Action is allow, ask or deny.
	Action Action `json:"action"`
}

// Policy is a set of permission settings. The zero value allows every call
// except edits of protected paths, and leaves destructive commands
// unchecked; WithDefaults asks for those.
type Policy struct {
	// Mode applies when no rule matches; "" means allow.
	Mode Mode `json:"mode,omitempty"`
	// Rules are checked in order; the first match decides.
	Rules []Rule `json:"rules,omitempty"`
	// Destructive is the least action a destructive shell command gets;
	// "" leaves them to the rules and the mode (WithDefaults makes it ask).
	Destructive Action `json:"destructive,omitempty"`
	// UnknownPaths is the least action a call gets that may change files
	// but whose paths are unknown (Call.PathsUnknown: an MCP tool, a custom
	// tool that does not declare its paths) when no rule matched it; ""
	// leaves them to the mode (WithDefaults makes it ask). A rule without
	// a pattern whose tool glob matches still decides such a call.
	UnknownPaths Action `json:"unknown_paths,omitempty"`
	// Protected adds directories (relative to the working directory, or
	// absolute) that edits never touch, to the built-in ones.
	Protected []string `json:"protected,omitempty"`
}

// ProtectedDirs are the directory names no edit touches at any depth.
var ProtectedDirs = []string{".git", ".husky", "node_modules"}

// SystemDirs are the absolute directories no edit touches.
var SystemDirs = []string{"/etc", "/usr", "/bin", "/sbin", "/boot", "/sys", "/proc"}

// WithDefaults returns p with the documented defaults of an operator's
// policy: mode allow, and destructive commands and writes to unknown
// paths asked about.
func (p Policy) WithDefaults() Policy {
	if p.Mode == "" {
		p.Mode = ModeAllow
	}
	if p.Destructive == "" {
		p.Destructive = Ask
	}
	if p.UnknownPaths == "" {
		p.UnknownPaths = Ask
	}
	return p
}

// FieldError names the field of a policy that is wrong, as a JSON path
// below the policy ("mode", "rules[2].pattern").
type FieldError struct {
	Field  string
	Reason string
}

func (e *FieldError) Error() string { return e.Field + " " + e.Reason }

// Validate reports the first invalid field.
func (p Policy) Validate() *FieldError {
	if p.Mode != "" && !slices.Contains(Modes, p.Mode) {
		return &FieldError{"mode", fmt.Sprintf("%q is unknown, want one of %s", p.Mode, join(Modes))}
	}
	if p.Destructive != "" && !slices.Contains(Actions, p.Destructive) {
		return &FieldError{"destructive", fmt.Sprintf("%q is unknown, want one of %s", p.Destructive, join(Actions))}
	}
	if p.UnknownPaths != "" && !slices.Contains(Actions, p.UnknownPaths) {
		return &FieldError{"unknown_paths", fmt.Sprintf("%q is unknown, want one of %s", p.UnknownPaths, join(Actions))}
	}
	for i, r := range p.Rules {
		if err := r.validate(); err != nil {
			return &FieldError{fmt.Sprintf("rules[%d].%s", i, err.Field), err.Reason}
		}
	}
	for i, dir := range p.Protected {
		if strings.TrimSpace(dir) == "" {
			return &FieldError{fmt.Sprintf("protected[%d]", i), "is empty: name a directory"}
		}
	}
	return nil
}

func (r Rule) validate() *FieldError {
	if !slices.Contains(Actions, r.Action) {
		return &FieldError{"action", fmt.Sprintf("%q is unknown, want one of %s", r.Action, join(Actions))}
	}
	if _, err := compileGlob(r.Tool); err != nil {
		return &FieldError{"tool", err.Error()}
	}
	if _, err := compileGlob(r.Pattern); err != nil {
		return &FieldError{"pattern", err.Error()}
	}
	return nil
}

// Narrows reports whether p (a task's policy) is within op (the operator's,
// with its defaults): a mode, destructive or unknown_paths setting of p
// that is set and wider than op's is a FieldError naming it. Rules cannot
// widen (see the package doc), so they are not compared.
func (p Policy) Narrows(op Policy) *FieldError {
	op = op.WithDefaults()
	if p.Mode != "" && modeRank(p.Mode) < modeRank(op.Mode) {
		return &FieldError{"mode", fmt.Sprintf("%q is wider than the operator's %q: a task may only narrow the operator's policy (modes from widest to strictest: %s)",
			p.Mode, op.Mode, join(Modes))}
	}
	if p.Destructive != "" && actionRank(p.Destructive) < actionRank(op.Destructive) {
		return &FieldError{"destructive", fmt.Sprintf("%q is wider than the operator's %q: a task may only narrow the operator's policy", p.Destructive, op.Destructive)}
	}
	if p.UnknownPaths != "" && actionRank(p.UnknownPaths) < actionRank(op.UnknownPaths) {
		return &FieldError{"unknown_paths", fmt.Sprintf("%q is wider than the operator's %q: a task may only narrow the operator's policy", p.UnknownPaths, op.UnknownPaths)}
	}
	return nil
}

// Call is a tool call as the policy sees it.
type Call struct {
	Tool    string
	Kind    Kind
	Command string   // the command of a shell call
	Paths   []string // the paths of a file call, relative to the working directory when inside it
	// PathsUnknown says the tool does not tell which paths the call
	// touches, so it may touch any (see the package doc, "Unknown
	// paths"). Shell calls are decided by their command and ignore it.
	PathsUnknown bool
}

// anyPath reports whether c may touch any path.
func (c Call) anyPath() bool { return c.PathsUnknown && c.Kind != KindShell }

// writes reports whether c is a call that may change files by the paths
// it names (an edit, or another tool that changes state); shell commands
// are checked by their command instead.
func (c Call) writes() bool { return c.Kind == KindEdit || c.Kind == KindOther }

// Decision is the outcome of a check.
type Decision struct {
	Action Action
	// Rule names what decided: "rules[2]", "mode ask", "protected .git",
	// "destructive: force push".
	Rule string
	// Reason says why in a sentence for the model and for people.
	Reason string
}

// Check decides c (see the package doc for the order).
func (p Policy) Check(c Call) Decision {
	if c.writes() && !c.anyPath() {
		if d, ok := p.protected(c); ok {
			return d
		}
	}
	mutating := c.Kind == KindEdit || c.Kind == KindShell || c.Kind == KindOther
	if p.Mode == ModePlan && mutating {
		return Decision{Action: Deny, Rule: "mode plan", Reason: fmt.Sprintf(
			"this session is in plan mode, which is read-only: reading files and searching work, but %s changes files or runs commands. Do not retry it; finish by describing the changes you would make", c.Tool)}
	}
	d, matched := p.byRules(c)
	if c.writes() && c.anyPath() && !matched && p.UnknownPaths != "" && Stricter(p.UnknownPaths, d.Action) {
		d = unknownPaths(c, p.UnknownPaths)
	}
	if c.Kind == KindShell && p.Destructive != "" && actionRank(p.Destructive) > actionRank(d.Action) {
		if what := Destructive(c.Command); what != "" {
			d = Decision{Action: p.Destructive, Rule: "destructive: " + what,
				Reason: fmt.Sprintf("the command looks destructive (%s)", what)}
		}
	}
	return d
}

// byRules applies the first matching rule (matched), else the mode.
func (p Policy) byRules(c Call) (d Decision, matched bool) {
	for i, r := range p.Rules {
		if r.matches(c) {
			return Decision{Action: r.Action, Rule: fmt.Sprintf("rules[%d]", i),
				Reason: fmt.Sprintf("rule %d (tool %q, pattern %q) says %s", i, r.Tool, r.Pattern, r.Action)}, true
		}
	}
	mode := p.Mode
	if mode == "" {
		mode = ModeAllow
	}
	a := modeAction(mode, c.Kind)
	d = Decision{Action: a, Rule: "mode " + string(mode)}
	switch a {
	case Ask:
		d.Reason = fmt.Sprintf("mode %s asks a person before %s runs", mode, c.Tool)
	case Deny:
		d.Reason = fmt.Sprintf("mode %s allows reading and searching only; %s changes files or runs commands", mode, c.Tool)
	}
	return d, false
}

// unknownPaths is the decision on a write whose paths are unknown.
func unknownPaths(c Call, a Action) Decision {
	d := Decision{Action: a, Rule: "unknown paths", Reason: fmt.Sprintf(
		"%s does not say which files it changes, so it could change a protected path (%s, system directories)", c.Tool,
		strings.Join(ProtectedDirs, "/, ")+"/")}
	switch a {
	case Ask:
		d.Reason += "; a person must approve it, unless the operator allows the tool by a rule that names it"
	case Deny:
		d.Reason += "; it is refused unless the operator allows the tool by a rule that names it. Do it with the file tools instead"
	}
	return d
}

func (r Rule) matches(c Call) bool {
	if !globMatch(r.Tool, c.Tool) {
		return false
	}
	if r.Pattern == "" {
		return true
	}
	if c.Kind == KindShell {
		return globMatch(r.Pattern, strings.TrimSpace(c.Command))
	}
	if c.anyPath() {
		// The call may touch any path: a rule that restricts matches it;
		// one that allows cannot vouch for paths it does not see.
		return r.Action != Allow
	}
	for _, p := range c.Paths {
		if globMatch(r.Pattern, p) {
			return true
		}
	}
	return false
}

// protected denies an edit of a protected path.
func (p Policy) protected(c Call) (Decision, bool) {
	for _, raw := range c.Paths {
		clean := path.Clean(raw)
		if dir := protectedDir(clean, p.Protected); dir != "" {
			return Decision{Action: Deny, Rule: "protected " + dir, Reason: fmt.Sprintf(
				"%s is inside %s, which file edits never change; leave it alone or change it through the tools meant for it (git, the package manager)", raw, dir)}, true
		}
	}
	return Decision{}, false
}

// protectedDir returns the protected directory clean is in, or "".
func protectedDir(clean string, extra []string) string {
	for part := range strings.SplitSeq(clean, "/") {
		if slices.Contains(ProtectedDirs, part) {
			return part + "/"
		}
	}
	for _, dir := range append(slices.Clone(SystemDirs), extra...) {
		d := path.Clean(dir)
		if clean == d || strings.HasPrefix(clean, d+"/") {
			return d + "/"
		}
	}
	return ""
}

// modeAction is what mode does with a call of kind k that no rule matched.
func modeAction(mode Mode, k Kind) Action {
	if k == KindRead || k == KindAgent {
		return Allow
	}
	switch mode {
	case ModeAllow:
		return Allow
	case ModeAcceptEdits:
		if k == KindEdit {
			return Allow
		}
		return Ask
	case ModeAsk:
		return Ask
	}
	return Deny
}

func modeRank(m Mode) int     { return slices.Index(Modes, m) }
func actionRank(a Action) int { return slices.Index(Actions, a) }

// Stricter reports whether a is stricter than b (deny over ask over allow).
func Stricter(a, b Action) bool { return actionRank(a) > actionRank(b) }

func join[T ~string](vs []T) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}
