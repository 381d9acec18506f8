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
// agent, other), the command of a shell call and the paths of a file call.
// Policy.Check gives it one of three actions (allow, ask, deny) in this
// order:
//
//  1. Protected paths: an edit that touches .git/, .husky/, node_modules/,
//     a system directory (/etc, /usr, /bin, /sbin, /boot, /sys, /proc) or
//     a path of Policy.Protected is denied. No rule or mode overrides it.
//  2. Plan mode: any call that is not a read (edit, shell, other) is
//     denied with a message saying reads and searches still work.
//  3. Rules, in order: the first rule whose tool glob matches the tool
//     name and whose pattern glob matches the command (shell) or one of
//     the paths (file tools) decides. A rule without a pattern matches
//     every call of its tools.
//  4. The mode, when no rule matched: allow allows everything; accept_edits
//     allows reads and edits and asks for the rest; ask allows reads and
//     asks for the rest; deny allows reads and denies the rest.
//  5. Destructive shell commands (rm -rf of a broad path, force pushes,
//     hard resets, git clean -f, recursive chmod 777, DROP TABLE and the
//     like, mkfs, dd onto a device) get at least Policy.Destructive (ask
//     by default): a rule that allows "git *" does not let a force push
//     through unasked.
//
// Reads (read_file, grep, glob, list_dir, ...) and the subagent tools
// are allowed by every mode; only a rule can ask about or deny them.
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
// operator allows, whatever its rules say. Its mode and destructive
// setting, when set, must still be at least as strict as the operator's
// (Policy.Narrows), so that a spec never claims what it cannot have.
// Modes from widest to strictest: allow, accept_edits, ask, deny, plan.
package permission
