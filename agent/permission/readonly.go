package permission

// Read-only subagents (spawn_agent's read_only argument) are enforced here,
// by the same checks as every other call, rather than by hiding tools: the
// child's policy is its parent's with mode plan, the strictest mode, which
// refuses every edit, write, shell command and other state-changing tool
// whatever the rules say, and tells the model so. A shell command is
// refused even when it would only read: whether a command writes cannot be
// known before it runs, so a reader reads with the file tools (read, grep,
// glob, list). Plan is the narrowest mode, so a read-only child always
// narrows the operator's policy and never needs an approval.

// ReadOnly returns p with mode plan: the policy of a read-only child whose
// parent's policy is p.
func ReadOnly(p Policy) Policy {
	p.Mode = ModePlan
	return p
}

// Narrowed returns a checker that applies k's policies and then narrowing
// (the strictest action wins). A nil k is the operator's default policy.
func (k *Checker) Narrowed(narrowing ...Policy) *Checker {
	if k == nil {
		return NewChecker(Policy{}, narrowing...)
	}
	return &Checker{policies: append(append([]Policy(nil), k.policies...), narrowing...)}
}
