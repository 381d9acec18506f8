package mcp

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Defaults of ServerConfig.
const (
	DefaultStartTimeout = 60 * time.Second
	DefaultCallTimeout  = 2 * time.Minute
	// DefaultMaxOutputChars bounds what the model sees of one MCP result.
	DefaultMaxOutputChars = 30000
)

// Transports of an HTTP server (ServerConfig.Transport).
const (
	// TransportAuto, the default (also ""), tries streamable HTTP and
	// falls back to HTTP+SSE when the server refuses the initialize POST
	// with 400, 404 or 405.
	TransportAuto = "auto"
	// TransportStreamable is the streamable-HTTP transport only.
	TransportStreamable = "streamable-http"
	// TransportSSE is the older HTTP+SSE transport only (MCP 2024-11-05).
	TransportSSE = "sse"
)

// Transports are the values ServerConfig.Transport may take besides "".
var Transports = []string{TransportAuto, TransportStreamable, TransportSSE}

// ServerConfig names one MCP server: a stdio command (Command and Args),
// or an HTTP endpoint (URL and Headers) that speaks streamable HTTP or
// the older HTTP+SSE transport. The mapstructure tags are
// the keys of the worker's configuration; the json tags those of a task
// spec (fleet.MCPServer, which package fleet/extensions converts to this
// type).
type ServerConfig struct {
	// Name is the server's name in tool names (mcp__<name>__<tool>):
	// letters, digits, '-' and '_'.
	Name string `mapstructure:"name" json:"name"`
	// Command and Args start a stdio server inside the task's environment.
	Command string   `mapstructure:"command" json:"command,omitempty"`
	Args    []string `mapstructure:"args" json:"args,omitempty"`
	// Env is added to the server's environment. Values may be secret
	// references (see Resolve).
	Env map[string]string `mapstructure:"env" json:"env,omitempty"`
	// URL is a streamable-HTTP endpoint; Headers go with every request and
	// their values may be secret references.
	URL     string            `mapstructure:"url" json:"url,omitempty"`
	Headers map[string]string `mapstructure:"headers" json:"headers,omitempty"`
	// Transport pins an HTTP server's transport: "streamable-http", "sse",
	// or "auto" (the default, also ""): streamable HTTP, falling back to
	// HTTP+SSE when the server refuses it (see the package doc).
	Transport string `mapstructure:"transport" json:"transport,omitempty"`
	// Required fails the task when the server cannot be started; otherwise
	// the session runs without its tools and a WARNING event says why.
	Required bool `mapstructure:"required" json:"required,omitempty"`
	// StartTimeout bounds start-up and the initialize handshake (default
	// 60 s: npx may download the server first).
	StartTimeout time.Duration `mapstructure:"start_timeout" json:"start_timeout,omitempty"`
	// CallTimeout bounds one tool call (default 2 min).
	CallTimeout time.Duration `mapstructure:"call_timeout" json:"call_timeout,omitempty"`
	// MaxOutputChars bounds what the model sees of one result (default
	// 30000; the whole result still goes to the TOOL_CALL_END event).
	MaxOutputChars int `mapstructure:"max_output_chars" json:"max_output_chars,omitempty"`
}

var namePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// WithDefaults returns c with zero fields set to their defaults.
func (c ServerConfig) WithDefaults() ServerConfig {
	if c.StartTimeout == 0 {
		c.StartTimeout = DefaultStartTimeout
	}
	if c.CallTimeout == 0 {
		c.CallTimeout = DefaultCallTimeout
	}
	if c.MaxOutputChars == 0 {
		c.MaxOutputChars = DefaultMaxOutputChars
	}
	return c
}

// Validate reports the invalid fields, prefixed with field (the key path
// of this server in its configuration, such as "mcp_servers[0]").
func (c ServerConfig) Validate(field string) error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(field+"."+format, a...)) }
	if !namePattern.MatchString(c.Name) {
		bad("name must be 1 to 32 letters, digits, '-' or '_', got %q", c.Name)
	}
	if strings.Contains(c.Name, "__") {
		bad("name must not contain \"__\" (it separates the parts of a tool name), got %q", c.Name)
	}
	switch {
	case c.Command == "" && c.URL == "":
		bad("command or url is required: a stdio command, or a streamable-HTTP URL")
	case c.Command != "" && c.URL != "":
		bad("command and url are exclusive: give a stdio command or an HTTP URL, not both")
	case c.URL != "":
		if u, err := url.Parse(c.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("url must be an http or https URL, got %q", c.URL)
		}
	}
	if len(c.Args) > 0 && c.Command == "" {
		bad("args need a command")
	}
	if len(c.Headers) > 0 && c.URL == "" {
		bad("headers need a url")
	}
	switch {
	case c.Transport != "" && !slices.Contains(Transports, c.Transport):
		bad("transport %q is unknown, want one of %s (or leave it out for auto)", c.Transport, strings.Join(Transports, ", "))
	case c.Transport != "" && c.URL == "":
		bad("transport needs a url (a stdio server has no transport to choose)")
	}
	if c.StartTimeout < 0 || c.CallTimeout < 0 || c.MaxOutputChars < 0 {
		bad("start_timeout, call_timeout and max_output_chars must be >= 0")
	}
	return errors.Join(errs...)
}

// Kind is "stdio" or "http".
func (c ServerConfig) Kind() string {
	if c.URL != "" {
		return "http"
	}
	return "stdio"
}

// ShellCommand is Command and Args as one bash command line, each
// argument quoted.
func (c ServerConfig) ShellCommand() string {
	parts := make([]string, 0, 1+len(c.Args))
	parts = append(parts, ShellQuote(c.Command))
	for _, a := range c.Args {
		parts = append(parts, ShellQuote(a))
	}
	return strings.Join(parts, " ")
}

// ShellQuote quotes s for bash when it holds anything but safe characters.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./_-", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Secrets resolves secret references: a value "${secret:NAME}" (whole,
// or inside a longer value such as "Bearer ${secret:NAME}") becomes the
// secret NAME. The worker's Secrets map names come first; a name it does
// not hold is read from the worker's environment variable of that name
// when AllowEnv is set. A name not in Values as written is looked up in
// lower case too, as configuration readers fold map keys. Specs carry only references; the values never
// leave the worker.
type Secrets struct {
	Values   map[string]string
	AllowEnv bool
}

var secretRef = regexp.MustCompile(`\$\{secret:([A-Za-z0-9_.-]+)\}`)

// Resolve replaces every reference in v; an unknown name is an error
// naming it and where to define it.
func (s Secrets) Resolve(v string) (string, error) {
	var missing []string
	out := secretRef.ReplaceAllStringFunc(v, func(ref string) string {
		name := secretRef.FindStringSubmatch(ref)[1]
		if val, ok := s.Values[name]; ok {
			return val
		}
		if val, ok := s.Values[strings.ToLower(name)]; ok {
			return val // configuration files fold map keys to lower case
		}
		if s.AllowEnv {
			if val, ok := os.LookupEnv(name); ok {
				return val
			}
		}
		missing = append(missing, name)
		return ""
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("secret %q is not defined on this worker: add it to mcp_secrets in the worker configuration", missing[0])
	}
	return out, nil
}

// resolveMap resolves every value of m into a new map, and returns the
// values that held references, to be kept out of error messages.
func (s Secrets) resolveMap(m map[string]string) (map[string]string, []string, error) {
	if len(m) == 0 {
		return nil, nil, nil
	}
	out := make(map[string]string, len(m))
	var secret []string
	for k, v := range m {
		r, err := s.Resolve(v)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = r
		if r != v {
			secret = append(secret, r)
		}
	}
	return out, secret, nil
}

// redact replaces each of secrets (of 4 bytes or more) in text.
func redact(text string, secrets []string) string {
	for _, s := range secrets {
		if len(s) >= 4 {
			text = strings.ReplaceAll(text, s, "[secret]")
		}
	}
	return text
}
