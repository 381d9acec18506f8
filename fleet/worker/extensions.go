package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentfleet/agentfleet/fleet/extensions"
)

// startExtensions starts the task's MCP servers, hooks and skills (package
// fleet/extensions) and maps a required server that did not start onto
// errBadEnvironment; a spec beyond the operator's bounds is errNotAllowed.
func (r *run) startExtensions(ctx context.Context) (*extensions.Session, error) {
	x, err := extensions.Start(ctx, r.w.cfg.ExtensionsConfig, extensions.Task{Spec: r.spec.Extensions, Env: r.env,
		RepoSkills: r.ws == nil || !r.ws.lazy, Logger: r.log, AllowPrivate: r.w.cfg.allowPrivate()})
	if errors.Is(err, extensions.ErrRequired) {
		return nil, fmt.Errorf("%w: %v", errBadEnvironment, err)
	}
	return x, err // extensions.ErrNotAllowed is errNotAllowed
}
