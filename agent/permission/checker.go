package permission

// Checker applies an operator's policy and the narrowing policies of a
// task together: each is checked and the strictest action wins; on a tie
// the earlier policy's decision is kept (the operator's first). A nil
// *Checker allows everything. Safe for concurrent use.
type Checker struct {
	policies []Policy
}

// NewChecker returns a checker for the operator's policy (its defaults
// applied, see WithDefaults) narrowed by the task's policies (taken as
// they are: an unset mode or destructive setting has no say).
func NewChecker(operator Policy, narrowing ...Policy) *Checker {
	return &Checker{policies: append([]Policy{operator.WithDefaults()}, narrowing...)}
}

// Check decides c.
func (k *Checker) Check(c Call) Decision {
	if k == nil {
		return Decision{Action: Allow}
	}
	var d Decision
	for i, p := range k.policies {
		next := p.Check(c)
		if i == 0 || Stricter(next.Action, d.Action) {
			d = next
		}
	}
	return d
}

// Mode is the strictest mode among the policies.
func (k *Checker) Mode() Mode {
	if k == nil {
		return ModeAllow
	}
	m := ModeAllow
	for _, p := range k.policies {
		if p.Mode != "" && modeRank(p.Mode) > modeRank(m) {
			m = p.Mode
		}
	}
	return m
}
