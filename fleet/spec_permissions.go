package fleet

import (
	"github.com/agentfleet/agentfleet/agent/permission"
)

// Permissions is a task's permission policy (TaskSpec.Permissions): a mode,
// ordered rules, a destructive setting and extra protected directories, as
// package agent/permission defines them. It narrows the operator's policy
// (the worker's permissions setting): every call is checked against both
// and the strictest answer wins, so a spec can never widen what the
// operator allows; a spec whose mode or destructive setting is wider than
// the operator's is refused (a 400 naming the field where the dispatcher
// knows the operator's policy, else the task fails on the worker).
// Subagent tasks inherit their parent's.
type Permissions = permission.Policy

// checkPermissions validates the spec's permissions, naming the field
// (spec.permissions.rules[2].pattern).
func (s TaskSpec) checkPermissions() *FieldError {
	if s.Permissions == nil {
		return nil
	}
	if err := s.Permissions.Validate(); err != nil {
		return fieldErr("permissions."+err.Field, "%s", err.Reason)
	}
	return nil
}

// PermissionsWithin checks that the spec's permissions only narrow the
// operator's policy op, naming the field that widens it.
func (s TaskSpec) PermissionsWithin(op permission.Policy) *FieldError {
	if s.Permissions == nil {
		return nil
	}
	if err := s.Permissions.Narrows(op); err != nil {
		return fieldErr("permissions."+err.Field, "%s", err.Reason)
	}
	return nil
}
