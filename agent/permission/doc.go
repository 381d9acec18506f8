// Package permission decides whether a tool call may run: the policy a
// session applies before every call (modes, ordered rules, protected paths,
// destructive shell commands), the records of its denials and of people's
// answers, and the rule by which a narrower policy combines with a wider
// one. It has no dependencies beyond the standard library, so a fleet's
// spec validation and its dispatcher can use it without linking the agent.
//
// # Decisions
//
// A Call is described by its tool name, its Kind (read, edit, shell,
// agent, other), the command of a shell call and the paths of any other
// call, or PathsUnknown when its tool does not say (see "Unknown paths").
// Policy.Check gives it one of three actions (allow, ask, deny) in this
// order:
//
//  1. Protected paths: a call that may write (an edit, or another tool
//     that changes state) and names a path in .git/, .husky/,
//     node_modules/, a system directory (/etc, /usr, /bin, /sbin, /boot,
//     /sys, /proc) or a directory of Policy.Protected is denied. No rule
//     or mode overrides it.
//  2. Plan mode: any call that is not a read (edit, shell, other) is
//     denied with a message saying reads and searches still work.
//  3. Rules, in order: the first rule whose tool glob matches the tool
//     name and whose pattern glob matches the command (shell) or one of
//     the paths (other tools) decides. A rule without a pattern matches
//     every call of its tools.
//  4. The mode, when no rule matched: allow allows everything; accept_edits
//     allows reads and edits and asks for the rest; ask allows reads and
//     asks for the rest; deny allows reads and denies the rest.
//  5. Unknown paths: a call that may write, whose paths are unknown and
//     that no rule matched gets at least Policy.UnknownPaths (ask by
//     default).
//  6. Destructive shell commands (rm -rf of a broad path, force pushes,
//     hard resets, git clean -f, recursive chmod 777, DROP TABLE and the
//     like, mkfs, dd onto a device) get at least Policy.Destructive (ask
//     by default): a rule that allows "git *" does not let a force push
//     through unasked.
//
// Reads (read_file, grep, glob, list_dir, ...) and the subagent tools
// are allowed by every mode; only a rule can ask about or deny them.
//
// # Unknown paths
//
// The caller learns a call's paths from its tool (package agent reads
// tools.Tool.Paths, which every core and profile tool but the shell
// declares: a patch tool names every path its patch adds, updates,
// deletes or moves to). A tool that does not say (an MCP tool, a custom
// tool without Paths) is treated as touching every path, which means:
//
//   - a read still runs under every mode, as every read does;
//   - protected paths cannot be checked, so a call that may write is never
//     allowed by the mode alone: it gets at least Policy.UnknownPaths,
//     which WithDefaults makes ask (a person approves it; with no one to
//     ask it is refused, and the model is told why). An operator who
//     trusts a tool allows it by a rule without a pattern whose tool glob
//     matches it ({tool: "mcp__github__*", action: allow}; a rule for
//     every tool, "*", counts too), which decides before the mode;
//     unknown_paths allow turns the check off, and deny refuses such calls
//     unless a rule allows them;
//   - a rule with a pattern that asks or denies matches the call (it may
//     touch the paths the pattern names); one that allows does not (it
//     cannot vouch for paths it does not see);
//   - shell calls are decided by their command, not their paths (see
//     Destructive), and the subagent tools by the children, which carry
//     the policy.
//
// # Globs
//
// Rule patterns are globs where * matches any run of characters (slashes
// and spaces included), ? one character and [...] a class. "git *" matches
// every git command; "src/*" every path under src. Paths are matched
// relative to the working directory when they are inside it, else as
// cleaned absolute paths.
//
// # Narrowing
//
// A Checker combines an operator's policy with the narrowing policies of a
// task: every policy is checked and the strictest action wins (deny over
// ask over allow). A narrowing policy therefore cannot widen what the
// operator allows, whatever its rules say. Its mode, destructive and
// unknown_paths settings, when set, must still be at least as strict as the operator's
// (Policy.Narrows), so that a spec never claims what it cannot have.
// Modes from widest to strictest: allow, accept_edits, ask, deny, plan.
//
// # Read-only subagents
//
// A subagent spawned with read_only gets its parent's policy with mode
// plan (ReadOnly; Checker.Narrowed for an in-process child): every edit,
// write, shell command and other state-changing tool is refused with the
// reason, reads and searches run. The shell is refused whole, as whether a
// command writes cannot be known before it runs.
package permission
