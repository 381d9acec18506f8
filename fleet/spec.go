package fleet

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet/internal/gitstore"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// KnownProfiles are the profile names a spec may name when the caller of
// Validate passes no list of its own. The first is the dispatcher's default
// profile: anthropic, as in dev mode's order of preference and the README's
// worker example, so that a task naming no profile runs on the workers a
// first deployment has.
var KnownProfiles = []string{"anthropic", "openai", "gemini"}

// Defaults and bounds of a TaskSpec.
const (
	DefaultQueue = store.DefaultQueue
	// DefaultTenant is the tenant of a task submitted by a principal with
	// no tenant of its own (the bootstrap token, dev mode).
	DefaultTenant           = store.DefaultTenant
	DefaultSubagentDepth    = 1 // MaxSubagentDepth when nil
	MaxSubagentDepthLimit   = 8 // the largest MaxSubagentDepth accepted
	MaxPromptBytes          = 256 << 10
	MaxLabels               = 32
	MaxLabelKeyBytes        = 63
	MaxLabelValueBytes      = 256
	MaxIdempotencyKeyBytes  = 256
	MaxPriority             = 1000 // priorities range over [-MaxPriority, MaxPriority]
	MaxNameBytes            = 128  // model, queue, key reference, host, user
	maxPathBytes            = 4096 // working directory, repository
	reservedWorkerQueueName = "worker"
)

// ChildPolicy says what happens to a task's live children when it ends.
type ChildPolicy string

// Child policies.
const (
	ChildCancel ChildPolicy = "cancel"  // the default: live children are cancelled with their parent
	ChildLetRun ChildPolicy = "let_run" // children keep running after their parent ended
)

// EnvKind is the kind of execution environment a task runs in.
type EnvKind string

// Environment kinds.
const (
	EnvLocal EnvKind = "local" // a fresh workspace on the worker (the default)
	EnvSSH   EnvKind = "ssh"   // a directory on a remote host over SSH
)

// TaskSpec is what a task asks for. Submitters set the prompt and options;
// ParentID, RootID and Depth are set by the system for child tasks and must be
// empty in a submission (see ValidateSubmission). A spec never carries a
// secret: an SSH environment names a key reference that the worker resolves
// from its own configuration.
//
// The zero value of every optional field means its documented default;
// WithDefaults fills them in.
type TaskSpec struct {
	Prompt          string      `json:"prompt"`
	Profile         string      `json:"profile"`                    // "openai", "anthropic" or "gemini"
	Model           string      `json:"model,omitempty"`            // "" = the worker's default for the profile
	ReasoningEffort string      `json:"reasoning_effort,omitempty"` // "", minimal, low, medium, high, xhigh
	Limits          Limits      `json:"limits,omitzero"`
	Environment     Environment `json:"environment,omitzero"`
	// Session holds the session settings (timeouts, tool output limits,
	// loop detection, instructions, environment policy, web_fetch,
	// provider and its options); see spec_session.go.
	Session Session `json:"session,omitzero"`
	// Permissions narrows the operator's permission policy for this task
	// (see spec_permissions.go); nil keeps the operator's.
	Permissions *Permissions `json:"permissions,omitempty"`
	Sandbox     SandboxSpec  `json:"sandbox,omitzero"` // a local task's OS sandbox, within the operator's bound
	Context     ContextSpec  `json:"context,omitzero"` // spec_context.go
	// Extensions adds mcp_servers and hooks at the top level (spec_mcp.go).
	Extensions

	// Set by the system for child tasks.
	ParentID uuid.UUID `json:"parent_id,omitzero"`
	RootID   uuid.UUID `json:"root_id,omitzero"`
	Depth    int       `json:"depth,omitempty"`
	// TraceParent is the W3C trace context the task's trace began in (its
	// submission's span, or the spawn_agent call that made a child), set
	// by the system whatever a submission says: a message for the task
	// published outside a traced context (an approval's answer, an input,
	// a budget release) continues that trace (internal/tracing).
	TraceParent string `json:"traceparent,omitempty"`

	// MaxSubagentDepth bounds how deep the tree under this task may grow:
	// nil means DefaultSubagentDepth, 0 forbids subagents.
	MaxSubagentDepth *int `json:"max_subagent_depth,omitempty"`
	// MaxLiveChildren bounds the children of one task that are not finished;
	// 0 means the default of the worker that runs the task (its
	// max_live_children setting; see LiveChildrenLimit). That default is
	// never written into the spec, so children do not inherit it.
	MaxLiveChildren int         `json:"max_live_children,omitempty"`
	ChildPolicy     ChildPolicy `json:"child_policy,omitempty"` // "" = ChildCancel

	// Tenant is the team the task belongs to: it sees the task, its
	// sessions, events and usage, and its budgets apply. The dispatcher
	// sets it from the submitter (its default tenant, or one it names and
	// may use); children inherit their parent's. "" = DefaultTenant.
	Tenant   string `json:"tenant,omitempty"`
	Queue    string `json:"queue,omitempty"` // "" = the tenant's first in Policy.TenantQueues, else DefaultQueue
	Priority int    `json:"priority,omitempty"`
	// ConcurrencyKey groups tasks for fairness ("" = the tenant): workers
	// share free slots between keys by the weights their operator sets and
	// start at most a key's max_running at once (queue/fairness.go). A
	// child runs under no key: its tree was admitted with its root.
	ConcurrencyKey string            `json:"concurrency_key,omitempty"`
	Labels         map[string]string `json:"labels,omitempty"`
	IdempotencyKey string            `json:"idempotency_key,omitempty"`
	// RunAt, on a submitted root task, delays its start: it is stored
	// queued at once and offered to workers at RunAt, not before
	// (fleet/dispatcher run_at.go). Nil starts it now.
	RunAt *time.Time `json:"run_at,omitempty"`

	// Verification lists the checks the task must pass (spec_checks.go);
	// embedded, so its fields sit at the spec's top level.
	Verification
	// Delivery hands the changes over as a branch and a pull request
	// (spec_delivery.go); nil delivers nothing.
	Delivery *Delivery `json:"delivery,omitempty"`
	// ResultSchema, when set, is a JSON Schema the task's final answer
	// must match, as one JSON object (spec_result.go); the valid answer is
	// TaskResult.Structured.
	ResultSchema json.RawMessage `json:"result_schema,omitempty"`
	// BestOfN runs the task as N attempts and keeps one (spec_attempts.go).
	BestOfN
}

// Limits bound a session. Zero means no limit of the fleet's own (the
// session's defaults apply to turns and tool rounds); a dispatcher fills
// the zero fields of a submitted task from its default limits
// (DefaultLimits unless configured), so no task runs without bound.
type Limits struct {
	MaxTurns      int      `json:"max_turns,omitempty"`       // assistant turns over the session
	MaxToolRounds int      `json:"max_tool_rounds,omitempty"` // tool rounds per input
	WallTime      Duration `json:"wall_time,omitempty"`       // "30m", or seconds as a number
	MaxTokens     int64    `json:"max_tokens,omitempty"`      // input + output tokens over the session
	MaxCostUSD    float64  `json:"max_cost_usd,omitempty"`
	// MaxFollowups bounds how many times the task may be reopened with a
	// follow-up after it ended (0: DefaultMaxFollowups; spec_followups.go).
	// Every round runs in the one session, so max_turns, max_tokens and
	// max_cost_usd bound all rounds together.
	MaxFollowups int `json:"max_followups,omitempty"`
}

// Environment says where a task's tools run. Kind "" or "local": a fresh
// workspace on the worker, with Repo cloned at Ref when Repo is set. Kind
// "ssh": WorkingDir on Host, authenticated with the key KeyRef names in the
// worker's configuration.
type Environment struct {
	Kind       EnvKind `json:"kind,omitempty"`
	Repo       string  `json:"repo,omitempty"` // local: a git URL or path to clone
	Ref        string  `json:"ref,omitempty"`  // local: branch, tag or commit; "" = the default branch
	Host       string  `json:"host,omitempty"`
	Port       int     `json:"port,omitempty"` // 0 = 22
	User       string  `json:"user,omitempty"`
	KeyRef     string  `json:"key_ref,omitempty"`
	WorkingDir string  `json:"working_dir,omitempty"`
	// Shared marks a local working_dir as reachable from every worker (a
	// shared volume): children and resumes may then run on any worker.
	// Without it, a local task's children run on the worker holding its
	// files, unless the fleet git store carries them (Children). Set by
	// the system for child tasks (added by the worker side).
	Shared bool `json:"shared,omitempty"`
	// Image and ImageCredentials: see spec_image.go.
	Image            string `json:"image,omitempty"`
	ImageCredentials string `json:"image_credentials,omitempty"`
	// Children says where the subagents of a local task that is not
	// shared run: "" on any worker, their tree carried by the fleet git
	// store when the workers have one (else on this worker), or
	// ChildrenLocal on the worker holding the task's files, in git
	// worktrees of its tree (for trees that must share a disk).
	Children string `json:"children,omitempty"`
	// StoreBase, set by the spawner on a subagent whose tree travels, is
	// the commit of the fleet git store its fresh workspace starts from
	// (the parent's files when it was spawned). Submissions may not set it.
	StoreBase string `json:"store_base,omitempty"`
	// Setup: see spec_setup.go.
	Setup string `json:"setup,omitempty"`
}

// ChildrenLocal is Environment.Children pinning a task's subagents to
// the worker holding its files.
const ChildrenLocal = "local"

// DefaultLimits are the limits a dispatcher gives a submitted task's zero
// fields unless its operator configures others: generous for a real
// coding task, but a bound. Cost has no default (prices are the
// operator's); tokens stand in for it.
var DefaultLimits = Limits{MaxTurns: 200, WallTime: Duration(2 * time.Hour), MaxTokens: 20_000_000}

// Within returns l with each zero field taken from def.
func (l Limits) Within(def Limits) Limits {
	if l.MaxTurns == 0 {
		l.MaxTurns = def.MaxTurns
	}
	if l.MaxToolRounds == 0 {
		l.MaxToolRounds = def.MaxToolRounds
	}
	if l.WallTime == 0 {
		l.WallTime = def.WallTime
	}
	if l.MaxTokens == 0 {
		l.MaxTokens = def.MaxTokens
	}
	if l.MaxCostUSD == 0 {
		l.MaxCostUSD = def.MaxCostUSD
	}
	return l
}

// Duration is a time.Duration that reads a Go duration string ("90s",
// "1h30m") or a number of seconds from JSON and writes the string form.
type Duration time.Duration

// MarshalJSON writes the duration as a string such as "1m30s".
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads a duration string or a number of seconds. Its
// errors are *json.UnmarshalTypeError, so a decoder names the field.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return durationError(b)
		}
		*d = Duration(v)
		return nil
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil {
		return durationError(b)
	}
	if math.IsNaN(secs) || math.Abs(secs) > float64(math.MaxInt64/int64(time.Second)) {
		return &json.UnmarshalTypeError{Value: fmt.Sprintf("%s seconds, which is out of range", b), Type: reflect.TypeFor[float64]()}
	}
	*d = Duration(secs * float64(time.Second))
	return nil
}

func durationError(b []byte) error {
	v := string(b)
	if len(v) > 40 {
		v = v[:40] + "..."
	}
	return &json.UnmarshalTypeError{Value: v + ` (want a duration such as "90s" or "1h30m", or a number of seconds)`,
		Type: reflect.TypeFor[string]()}
}

// FieldError is a spec that is not valid, naming the field with its JSON
// path ("spec.limits.max_turns") and what is wrong with it.
type FieldError struct {
	Field  string // JSON path, "spec." first
	Reason string // "must be >= 0, got -1"
}

func (e *FieldError) Error() string { return e.Field + " " + e.Reason }

// WithPrefix returns the error with its "spec" root replaced by prefix, as
// the batch API does ("tasks[3].limits.max_turns").
func (e *FieldError) WithPrefix(prefix string) *FieldError {
	return &FieldError{Field: prefix + strings.TrimPrefix(e.Field, "spec"), Reason: e.Reason}
}

func fieldErr(field, format string, a ...any) *FieldError {
	return &FieldError{Field: "spec." + field, Reason: fmt.Sprintf(format, a...)}
}

// SubagentDepthLimit returns MaxSubagentDepth or its default.
func (s TaskSpec) SubagentDepthLimit() int {
	if s.MaxSubagentDepth == nil {
		return DefaultSubagentDepth
	}
	return *s.MaxSubagentDepth
}

// LiveChildrenLimit returns MaxLiveChildren, or workerDefault (the
// max_live_children of the worker running the task) when the spec sets
// none. It is computed where it is used, never stored in the spec.
func (s TaskSpec) LiveChildrenLimit(workerDefault int) int {
	if s.MaxLiveChildren > 0 {
		return s.MaxLiveChildren
	}
	return workerDefault
}

// Defaults are the defaults an operator chooses for a submitted spec: the
// profile of a spec that names none and the limits of one that sets none
// (a default above Policy's maximum is lowered to it, see ApplyLimits).
// The zero Defaults leave profile and limits as given.
type Defaults struct {
	Profile string
	Limits  Limits
	Policy  Policy
}

// Apply is the one function that fills a spec's defaults: d's profile and
// limits, then the spec's own (queue, child policy, subagent depth,
// environment kind). The dispatcher applies it once, before it stores a
// submission; DecodeSpec applies the spec's own again to a spec stored by
// an older version. A value a worker falls back to (its default model,
// its max_live_children) is not a spec default: the worker computes it
// where it uses it (LiveChildrenLimit) and never writes it into a spec.
func (d Defaults) Apply(s TaskSpec) TaskSpec {
	if s.Profile == "" {
		s.Profile = d.Profile
	}
	s.Limits = d.Policy.ApplyLimits(s.Limits, d.Limits)
	s.Environment.Image = d.Policy.Images.ImageFor(s)
	if s.Tenant == "" {
		s.Tenant = DefaultTenant
	}
	if s.Queue == "" {
		s.Queue = d.Policy.TenantQueues.DefaultQueue(s.Tenant)
	}
	if s.ChildPolicy == "" {
		s.ChildPolicy = ChildCancel
	}
	if s.MaxSubagentDepth == nil {
		depth := DefaultSubagentDepth
		s.MaxSubagentDepth = &depth
	}
	if s.Environment.Kind == "" {
		s.Environment.Kind = EnvLocal
	}
	return s
}

// WithDefaults returns the spec with its own defaults filled (queue, child
// policy, subagent depth, environment kind): Defaults{}.Apply(s). Profile
// and limits stay as given.
func (s TaskSpec) WithDefaults() TaskSpec { return Defaults{}.Apply(s) }

// Validate checks the spec and returns a *FieldError naming the first field
// that is wrong. allowed lists the profiles the fleet serves; with none,
// KnownProfiles.
func (s TaskSpec) Validate(allowed ...string) error {
	if len(allowed) == 0 {
		allowed = KnownProfiles
	}
	for _, check := range []func() *FieldError{
		func() *FieldError { return s.checkPrompt(allowed) },
		s.Limits.check,
		s.Environment.check,
		s.Environment.checkImage,
		s.Environment.checkSetup,
		s.checkContext,
		s.Sandbox.check,
		s.checkTree,
		s.checkRouting,
		s.checkLabels,
		s.Session.check,
		s.checkPermissions,
		s.Verification.check,
		s.checkDelivery,
		s.checkResultSchema,
		s.checkAttempts,
		s.Extensions.check,
	} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// ValidateSubmission is Validate for a spec coming from a submitter: it also
// refuses the fields only the system sets (parent_id, root_id, depth).
func (s TaskSpec) ValidateSubmission(allowed ...string) error {
	switch {
	case s.ParentID != uuid.Nil:
		return fieldErr("parent_id", "is set by the system for subagent tasks; remove it from the submission")
	case s.RootID != uuid.Nil:
		return fieldErr("root_id", "is set by the system for subagent tasks; remove it from the submission")
	case s.Depth != 0:
		return fieldErr("depth", "is set by the system for subagent tasks; remove it from the submission")
	case s.Environment.StoreBase != "":
		return fieldErr("environment.store_base", "is set by the system for subagent tasks; remove it from the submission")
	}
	return s.Validate(allowed...)
}

// ReasoningEfforts are the reasoning efforts a spec or a configure request
// may ask for ("" keeps the default).
var ReasoningEfforts = []string{"", "minimal", "low", "medium", "high", "xhigh"}

func (s TaskSpec) checkPrompt(allowed []string) *FieldError {
	switch {
	case strings.TrimSpace(s.Prompt) == "":
		return fieldErr("prompt", "is required: say what the agent should do")
	case len(s.Prompt) > MaxPromptBytes:
		return fieldErr("prompt", "is %d bytes, more than the limit of %d; put long material in the repository", len(s.Prompt), MaxPromptBytes)
	case !utf8.ValidString(s.Prompt):
		return fieldErr("prompt", "is not valid UTF-8")
	case s.Profile == "":
		return fieldErr("profile", "is required, one of %s", strings.Join(allowed, ", "))
	case !slices.Contains(allowed, s.Profile):
		return fieldErr("profile", "%q is unknown, want one of %s", s.Profile, strings.Join(allowed, ", "))
	case len(s.Model) > MaxNameBytes:
		return fieldErr("model", "is longer than %d bytes", MaxNameBytes)
	case !slices.Contains(ReasoningEfforts, s.ReasoningEffort):
		return fieldErr("reasoning_effort", "%q is unknown, want one of minimal, low, medium, high, xhigh (or empty)", s.ReasoningEffort)
	}
	return nil
}

func (l Limits) check() *FieldError {
	switch {
	case l.MaxTurns < 0:
		return fieldErr("limits.max_turns", "must be >= 0, got %d", l.MaxTurns)
	case l.MaxToolRounds < 0:
		return fieldErr("limits.max_tool_rounds", "must be >= 0, got %d", l.MaxToolRounds)
	case l.WallTime < 0:
		return fieldErr("limits.wall_time", "must be >= 0, got %s", time.Duration(l.WallTime))
	case l.MaxTokens < 0:
		return fieldErr("limits.max_tokens", "must be >= 0, got %d", l.MaxTokens)
	case l.MaxCostUSD < 0 || math.IsNaN(l.MaxCostUSD) || math.IsInf(l.MaxCostUSD, 0):
		return fieldErr("limits.max_cost_usd", "must be a number >= 0, got %v", l.MaxCostUSD)
	case l.MaxFollowups < 0 || l.MaxFollowups > MaxFollowupsCap:
		return fieldErr("limits.max_followups", "must be between 0 (the default, %d) and %d, got %d", DefaultMaxFollowups, MaxFollowupsCap, l.MaxFollowups)
	}
	return nil
}

func (e Environment) check() *FieldError {
	switch e.Kind {
	case "", EnvLocal:
		return e.checkLocal()
	case EnvSSH:
		return e.checkSSH()
	}
	return fieldErr("environment.kind", "%q is unknown, want %q or %q", e.Kind, EnvLocal, EnvSSH)
}

func (e Environment) checkLocal() *FieldError {
	switch {
	case e.Host != "" || e.User != "" || e.KeyRef != "" || e.Port != 0:
		return fieldErr("environment.host", "host, port, user and key_ref are for kind %q; this environment is %q", EnvSSH, EnvLocal)
	case e.Ref != "" && e.Repo == "":
		return fieldErr("environment.ref", "%q needs environment.repo to check out", e.Ref)
	case len(e.Repo) > maxPathBytes:
		return fieldErr("environment.repo", "is longer than %d bytes", maxPathBytes)
	case len(e.Ref) > MaxNameBytes*2:
		return fieldErr("environment.ref", "is longer than %d bytes", MaxNameBytes*2)
	case strings.HasPrefix(e.Ref, "-"):
		return fieldErr("environment.ref", "%q must not start with '-'", e.Ref)
	case strings.HasPrefix(e.Repo, "-"):
		return fieldErr("environment.repo", "%q must not start with '-'", e.Repo)
	case repoHasPassword(e.Repo):
		return fieldErr("environment.repo", "carries a password; specs never carry secrets: configure git credentials on the workers")
	case len(e.WorkingDir) > maxPathBytes:
		return fieldErr("environment.working_dir", "is longer than %d bytes", maxPathBytes)
	case e.WorkingDir != "" && !strings.HasPrefix(e.WorkingDir, "/"):
		return fieldErr("environment.working_dir", "%q must be an absolute path under one of the operator's shared roots", e.WorkingDir)
	case e.WorkingDir != "" && e.Repo != "":
		return fieldErr("environment.repo", "is cloned into a fresh workspace, and environment.working_dir names an existing one; set one of them")
	case e.Shared && e.WorkingDir == "":
		return fieldErr("environment.shared", "needs environment.working_dir, a directory under one of the operator's shared roots")
	case e.Children != "" && e.Children != ChildrenLocal:
		return fieldErr("environment.children", "%q is not a placement; leave it out (children run on any worker) or set %q (on this task's worker)", e.Children, ChildrenLocal)
	case e.StoreBase != "" && !gitstore.IsCommitID(e.StoreBase):
		return fieldErr("environment.store_base", "%q is not a commit id; it is set by the spawner, leave it out", e.StoreBase)
	}
	return checkRepoText(e.Repo)
}

func repoHasPassword(repo string) bool {
	u, err := url.Parse(repo)
	if err != nil || u.User == nil {
		return false
	}
	_, ok := u.User.Password()
	return ok
}

func (e Environment) checkSSH() *FieldError {
	switch {
	case e.Host == "":
		return fieldErr("environment.host", "is required for an ssh environment")
	case len(e.Host) > MaxNameBytes || strings.ContainsAny(e.Host, " /@"):
		return fieldErr("environment.host", "%q is not a host name or address", e.Host)
	case e.Port < 0 || e.Port > 65535:
		return fieldErr("environment.port", "must be between 1 and 65535 (0 = 22), got %d", e.Port)
	case e.User == "":
		return fieldErr("environment.user", "is required for an ssh environment")
	case e.KeyRef == "":
		return fieldErr("environment.key_ref", "is required for an ssh environment: name a key the workers are configured with (never the key itself)")
	case strings.Contains(e.KeyRef, "PRIVATE KEY"):
		return fieldErr("environment.key_ref", "looks like a private key; specs carry only the name of a key configured on the workers")
	case e.WorkingDir == "":
		return fieldErr("environment.working_dir", "is required for an ssh environment (an absolute path on the host)")
	case !strings.HasPrefix(e.WorkingDir, "/"):
		return fieldErr("environment.working_dir", "%q must be an absolute path", e.WorkingDir)
	case e.Repo != "" || e.Ref != "":
		return fieldErr("environment.repo", "repo and ref are for kind %q; an ssh environment uses working_dir as it is", EnvLocal)
	}
	return nil
}

func (s TaskSpec) checkTree() *FieldError {
	switch {
	case s.Depth < 0:
		return fieldErr("depth", "must be >= 0, got %d", s.Depth)
	case s.Depth > 0 && s.ParentID == uuid.Nil:
		return fieldErr("parent_id", "is required for a task of depth %d", s.Depth)
	case s.MaxSubagentDepth != nil && (*s.MaxSubagentDepth < 0 || *s.MaxSubagentDepth > MaxSubagentDepthLimit):
		return fieldErr("max_subagent_depth", "must be between 0 and %d, got %d", MaxSubagentDepthLimit, *s.MaxSubagentDepth)
	case s.MaxLiveChildren < 0:
		return fieldErr("max_live_children", "must be >= 0, got %d", s.MaxLiveChildren)
	case s.ChildPolicy != "" && s.ChildPolicy != ChildCancel && s.ChildPolicy != ChildLetRun:
		return fieldErr("child_policy", "%q is unknown, want %q or %q", s.ChildPolicy, ChildCancel, ChildLetRun)
	}
	return nil
}

// FairnessKey is the concurrency key the spec's task runs under: its
// ConcurrencyKey, else its tenant (DefaultTenant when it names none).
func (s TaskSpec) FairnessKey() string {
	switch {
	case s.ConcurrencyKey != "":
		return s.ConcurrencyKey
	case s.Tenant != "":
		return s.Tenant
	}
	return DefaultTenant
}

func (s TaskSpec) checkRouting() *FieldError {
	switch {
	case s.Queue == reservedWorkerQueueName:
		return fieldErr("queue", "%q is reserved for work pinned to one worker", s.Queue)
	case s.Queue != "" && queue.CheckQueueName(s.Queue) != nil:
		return fieldErr("queue", "%q may hold only letters, digits, '-' and '_' (at most %d bytes)", s.Queue, MaxNameBytes)
	case s.Tenant != "" && queue.CheckTenant(s.Tenant) != nil:
		return fieldErr("tenant", "%q may hold only letters, digits, '-' and '_' (at most %d bytes)", s.Tenant, MaxNameBytes)
	case s.ConcurrencyKey != "" && queue.CheckConcurrencyKey(s.ConcurrencyKey) != nil:
		return fieldErr("concurrency_key", "%q may hold only letters, digits, '-' and '_' (at most %d bytes); for a repository, replace '/' with '_'", s.ConcurrencyKey, MaxNameBytes)
	case s.Priority < -MaxPriority || s.Priority > MaxPriority:
		return fieldErr("priority", "must be between %d and %d, got %d", -MaxPriority, MaxPriority, s.Priority)
	case len(s.IdempotencyKey) > MaxIdempotencyKeyBytes:
		return fieldErr("idempotency_key", "is %d bytes, more than %d", len(s.IdempotencyKey), MaxIdempotencyKeyBytes)
	}
	return nil
}

func (s TaskSpec) checkLabels() *FieldError {
	if len(s.Labels) > MaxLabels {
		return fieldErr("labels", "has %d labels, at most %d are allowed", len(s.Labels), MaxLabels)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Labels)) {
		v := s.Labels[k]
		switch {
		case k == "" || len(k) > MaxLabelKeyBytes:
			return fieldErr("labels", "key %q must be 1 to %d bytes", k, MaxLabelKeyBytes)
		case len(v) > MaxLabelValueBytes:
			return fieldErr("labels."+k, "is %d bytes, more than %d", len(v), MaxLabelValueBytes)
		case !utf8.ValidString(k) || !utf8.ValidString(v):
			return fieldErr("labels."+strconv.Quote(k), "is not valid UTF-8")
		}
	}
	return nil
}
