package chatcompat

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
)

// Dialect is how one OpenAI-compatible host wants Chat Completions: where
// it serves them, what it calls the output limit, which headers it wants
// and which of the optional request fields it accepts. A field the host
// does not accept is not sent (a request's ReasoningEffort, say, is then
// dropped); a tool choice it cannot honour is refused before sending.
type Dialect struct {
	// Name selects the dialect in configuration (provider: groq).
	Name string
	// Hosts are the API host names that select the dialect when the
	// configuration names none (a base URL on api.groq.com is groq).
	Hosts []string
	// BaseURL is the API root, base path included, used when the
	// configuration gives none; "" means one must be given.
	BaseURL string
	// KeyEnv is the environment variable holding the key, "" for local
	// servers that need none.
	KeyEnv string
	// MaxTokensField names the output limit: "max_tokens" or
	// "max_completion_tokens"; "" chooses by model as OpenAI does
	// (max_tokens for gpt-4* and gpt-3.5*).
	MaxTokensField string
	// Header holds extra headers sent with every request.
	Header map[string]string
	// StreamUsage sends stream_options.include_usage on streamed requests;
	// hosts that reject the field report usage in the last chunk anyway.
	StreamUsage bool
	// ParallelToolCalls: the host accepts parallel_tool_calls (sent only
	// when ProviderOptions["chatcompat"]["parallel_tool_calls"] is set).
	ParallelToolCalls bool
	// ReasoningField is where Request.ReasoningEffort goes:
	// "reasoning_effort", "reasoning.effort" (an object, OpenRouter),
	// "thinking.type" (enabled or disabled, Z.ai), or "" (not sent).
	ReasoningField string
	// EchoReasoning sends earlier reasoning back as reasoning_content on
	// assistant messages; hosts that reject the field need it off.
	EchoReasoning bool
	// ForcedToolChoice: the host honours tool_choice "required" and a
	// named function, not only auto and none.
	ForcedToolChoice bool
	// ResponseFormat is how Request.ResponseFormat is sent:
	// "json_schema" (response_format json_schema), "json_object" (JSON
	// mode, with the schema given to the model in a system message; the
	// answer is still validated), or "tool" (a forced tool call, which
	// needs ForcedToolChoice).
	ResponseFormat string
}

// Generic is the dialect of a host no entry names: OpenAI's own Chat
// Completions, which most servers copy.
var Generic = Dialect{Name: "generic", StreamUsage: true, ParallelToolCalls: true,
	ReasoningField: "reasoning_effort", EchoReasoning: true, ForcedToolChoice: true, ResponseFormat: "json_schema"}

// Dialects is the table of known hosts. Each entry's fields follow the
// host's public API documentation, cited above it; where a page did not
// settle a field, the comment says so and the field takes the safer value
// (a field not sent rather than one refused). Operators override any field
// (Overrides) when a host changes.
var Dialects = []Dialect{
	// docs.ollama.com/api/openai-compatibility: /v1/chat/completions with
	// max_tokens, stream_options.include_usage, reasoning_effort,
	// response_format json_schema; tool_choice is not in the supported
	// list (ignored), so no forced choice. Reasoning comes back as
	// "reasoning", not accepted back as reasoning_content.
	{Name: "ollama", BaseURL: "http://localhost:11434/v1", MaxTokensField: "max_tokens", StreamUsage: true,
		ReasoningField: "reasoning_effort", ResponseFormat: "json_schema"},
	// docs.vllm.ai, "OpenAI-Compatible Server": the Chat Completions
	// parameters of the OpenAI client (max_tokens and
	// max_completion_tokens both accepted), stream_options,
	// parallel_tool_calls, reasoning_effort, tool_choice auto, none,
	// required and named (guided decoding), response_format json_schema;
	// reasoning_content is returned and accepted back (gpt-oss needs it).
	{Name: "vllm", BaseURL: "http://localhost:8000/v1", MaxTokensField: "max_tokens", StreamUsage: true,
		ParallelToolCalls: true, ReasoningField: "reasoning_effort", EchoReasoning: true, ForcedToolChoice: true,
		ResponseFormat: "json_schema"},
	// github.com/ggml-org/llama.cpp tools/server/README.md: POST
	// /v1/chat/completions, max_tokens (n_predict), parallel_tool_calls,
	// tool_choice, response_format json_schema; reasoning is controlled
	// by the server's --reasoning-format, not by a request field, and
	// comes back as reasoning_content, which the chat templates accept
	// back. stream_options: usage is sent in the last chunk (unconfirmed
	// whether the field is read; unknown fields are ignored).
	{Name: "llamacpp", BaseURL: "http://localhost:8080/v1", MaxTokensField: "max_tokens", StreamUsage: true,
		ParallelToolCalls: true, EchoReasoning: true, ForcedToolChoice: true, ResponseFormat: "json_schema"},
	// lmstudio.ai/docs/app/api/endpoints/openai: /v1/chat/completions,
	// max_tokens, tools and tool_choice, response_format json_schema
	// (Structured Output page). Reasoning effort and stream_options are
	// not listed (unconfirmed; not sent).
	{Name: "lmstudio", BaseURL: "http://localhost:1234/v1", MaxTokensField: "max_tokens",
		ForcedToolChoice: true, ResponseFormat: "json_schema"},
	// openrouter.ai/docs/api-reference/parameters and /docs/structured-outputs:
	// base https://openrouter.ai/api/v1, max_tokens, parallel_tool_calls,
	// tool_choice, response_format json_schema, reasoning as an object
	// {"effort": ...}; HTTP-Referer and X-Title identify the app
	// (optional, /docs/api-reference/overview). Usage is in the last
	// chunk; stream_options is accepted.
	{Name: "openrouter", Hosts: []string{"openrouter.ai"}, BaseURL: "https://openrouter.ai/api/v1", KeyEnv: "OPENROUTER_API_KEY",
		MaxTokensField: "max_tokens", Header: map[string]string{"HTTP-Referer": "https://github.com/agentfleet/agentfleet", "X-Title": "agentfleet"},
		StreamUsage: true, ParallelToolCalls: true, ReasoningField: "reasoning.effort", ForcedToolChoice: true, ResponseFormat: "json_schema"},
	// console.groq.com/docs/api-reference#chat-create and
	// /docs/openai: base https://api.groq.com/openai/v1,
	// max_completion_tokens (max_tokens deprecated), stream_options,
	// parallel_tool_calls, reasoning_effort (reasoning models), tool_choice
	// required and named, response_format json_schema (/docs/structured-outputs).
	// Message fields beyond OpenAI's are refused, so no reasoning_content.
	{Name: "groq", Hosts: []string{"api.groq.com"}, BaseURL: "https://api.groq.com/openai/v1", KeyEnv: "GROQ_API_KEY",
		MaxTokensField: "max_completion_tokens", StreamUsage: true, ParallelToolCalls: true, ReasoningField: "reasoning_effort",
		ForcedToolChoice: true, ResponseFormat: "json_schema"},
	// docs.together.ai/reference/chat-completions-1 and /docs/json-mode:
	// base https://api.together.xyz/v1, max_tokens, tool_choice,
	// response_format json_schema. stream_options, parallel_tool_calls and
	// reasoning_effort are not in the reference (unconfirmed; not sent);
	// usage arrives in the last chunk.
	{Name: "together", Hosts: []string{"api.together.xyz", "api.together.ai"}, BaseURL: "https://api.together.xyz/v1", KeyEnv: "TOGETHER_API_KEY",
		MaxTokensField: "max_tokens", ForcedToolChoice: true, ResponseFormat: "json_schema"},
	// docs.fireworks.ai/api-reference/post-chatcompletions: base
	// https://api.fireworks.ai/inference/v1, max_tokens, reasoning_effort,
	// tool_choice (auto, none, any/required, named), response_format
	// json_schema (/structured-responses). Usage is in the last chunk;
	// stream_options and parallel_tool_calls unconfirmed (not sent).
	{Name: "fireworks", Hosts: []string{"api.fireworks.ai"}, BaseURL: "https://api.fireworks.ai/inference/v1", KeyEnv: "FIREWORKS_API_KEY",
		MaxTokensField: "max_tokens", ReasoningField: "reasoning_effort", ForcedToolChoice: true, ResponseFormat: "json_schema"},
	// api-docs.deepseek.com/api/create-chat-completion: base
	// https://api.deepseek.com (also /v1), max_tokens,
	// stream_options.include_usage, tool_choice none/auto/required/named,
	// response_format only json_object (JSON Output guide: the prompt must
	// ask for JSON). Reasoning (deepseek-reasoner) is returned as
	// reasoning_content, and the reasoning model guide says sending it
	// back is refused with a 400.
	{Name: "deepseek", Hosts: []string{"api.deepseek.com"}, BaseURL: "https://api.deepseek.com/v1", KeyEnv: "DEEPSEEK_API_KEY",
		MaxTokensField: "max_tokens", StreamUsage: true, ForcedToolChoice: true, ResponseFormat: "json_object"},
	// docs.mistral.ai/api (chat completion): base https://api.mistral.ai/v1,
	// max_tokens, parallel_tool_calls, tool_choice auto/none/any/required
	// and named, response_format json_schema (/capabilities/structured-output).
	// Unknown fields are refused with 422 extra_forbidden, among them
	// stream_options, max_completion_tokens and reasoning_content (usage is
	// sent in the last chunk without asking).
	{Name: "mistral", Hosts: []string{"api.mistral.ai"}, BaseURL: "https://api.mistral.ai/v1", KeyEnv: "MISTRAL_API_KEY",
		MaxTokensField: "max_tokens", ParallelToolCalls: true, ForcedToolChoice: true, ResponseFormat: "json_schema"},
	// docs.x.ai/docs/api-reference#chat-completions: base
	// https://api.x.ai/v1, max_completion_tokens (max_tokens deprecated),
	// stream_options, parallel_tool_calls, reasoning_effort (grok-3-mini;
	// other models refuse it: set reasoning_field "" for them),
	// tool_choice required and named, response_format json_schema
	// (/docs/guides/structured-outputs).
	{Name: "xai", Hosts: []string{"api.x.ai"}, BaseURL: "https://api.x.ai/v1", KeyEnv: "XAI_API_KEY",
		MaxTokensField: "max_completion_tokens", StreamUsage: true, ParallelToolCalls: true, ReasoningField: "reasoning_effort",
		ForcedToolChoice: true, ResponseFormat: "json_schema"},
	// inference-docs.cerebras.ai/api-reference/chat-completions and
	// /resources/openai: base https://api.cerebras.ai/v1,
	// max_completion_tokens, reasoning_effort (gpt-oss), reasoning
	// returned as "reasoning", response_format json_schema with strict
	// (/capabilities/structured-outputs); parallel_tool_calls is refused
	// with a 400 and tool_choice is auto or none only. stream_options
	// unconfirmed (not sent; usage is in the last chunk).
	{Name: "cerebras", Hosts: []string{"api.cerebras.ai"}, BaseURL: "https://api.cerebras.ai/v1", KeyEnv: "CEREBRAS_API_KEY",
		MaxTokensField: "max_completion_tokens", ReasoningField: "reasoning_effort", ResponseFormat: "json_schema"},
	// docs.z.ai/api-reference/llm/chat-completion: POST
	// https://api.z.ai/api/paas/v4/chat/completions, max_tokens, thinking
	// {"type": "enabled" | "disabled"}, tool_choice "auto" only,
	// response_format text or json_object; reasoning_content returned.
	// Usage is in the last chunk (stream_options not documented).
	{Name: "zai", Hosts: []string{"api.z.ai"}, BaseURL: "https://api.z.ai/api/paas/v4", KeyEnv: "ZAI_API_KEY",
		MaxTokensField: "max_tokens", ReasoningField: "thinking.type", ResponseFormat: "json_object"},
	// docs.z.ai/devpack/tool/others (GLM Coding Plan): the same API under
	// https://api.z.ai/api/coding/paas/v4. Chosen by name only (the host
	// is the same as zai's).
	{Name: "zai-coding", BaseURL: "https://api.z.ai/api/coding/paas/v4", KeyEnv: "ZAI_API_KEY",
		MaxTokensField: "max_tokens", ReasoningField: "thinking.type", ResponseFormat: "json_object"},
	// platform.moonshot.ai/docs/api/chat: base https://api.moonshot.ai/v1,
	// max_tokens, response_format json_object, tool_choice auto and none
	// ("required" is not supported); the thinking models return
	// reasoning_content and want it kept in the history of tool rounds.
	// stream_options unconfirmed (not sent).
	{Name: "moonshot", Hosts: []string{"api.moonshot.ai", "api.moonshot.cn"}, BaseURL: "https://api.moonshot.ai/v1", KeyEnv: "MOONSHOT_API_KEY",
		MaxTokensField: "max_tokens", EchoReasoning: true, ResponseFormat: "json_object"},
}

// LookupDialect returns the table's dialect with that name (any case).
func LookupDialect(name string) (Dialect, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == Generic.Name {
		return Generic, true
	}
	for _, d := range Dialects {
		if d.Name == name {
			return d, true
		}
	}
	return Dialect{}, false
}

// DialectNames lists the table's names, for error messages.
func DialectNames() []string {
	names := []string{Generic.Name}
	for _, d := range Dialects {
		names = append(names, d.Name)
	}
	return names
}

// DialectFor returns the dialect named, or when name is "" the one whose
// host serves baseURL, else Generic.
func DialectFor(name, baseURL string) (Dialect, error) {
	if name != "" {
		d, ok := LookupDialect(name)
		if !ok {
			return Dialect{}, fmt.Errorf("chatcompat: dialect %q is unknown; use one of %s", name, strings.Join(DialectNames(), ", "))
		}
		return d, nil
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		return Generic, nil //nolint:nilerr // a base URL that does not parse is reported by the client's own check
	}
	host := strings.ToLower(u.Hostname())
	for _, d := range Dialects {
		if slices.Contains(d.Hosts, host) {
			return d, nil
		}
	}
	return Generic, nil
}

// Overrides change single fields of a dialect; nil fields keep the
// dialect's. They are what an operator writes under dialect_overrides when
// a host behaves otherwise than the table says.
type Overrides struct {
	BaseURL           *string           `mapstructure:"base_url" json:"base_url,omitempty"`
	MaxTokensField    *string           `mapstructure:"max_tokens_field" json:"max_tokens_field,omitempty"`
	Header            map[string]string `mapstructure:"header" json:"header,omitempty"` // merged; "" removes one
	StreamUsage       *bool             `mapstructure:"stream_usage" json:"stream_usage,omitempty"`
	ParallelToolCalls *bool             `mapstructure:"parallel_tool_calls" json:"parallel_tool_calls,omitempty"`
	ReasoningField    *string           `mapstructure:"reasoning_field" json:"reasoning_field,omitempty"`
	EchoReasoning     *bool             `mapstructure:"echo_reasoning" json:"echo_reasoning,omitempty"`
	ForcedToolChoice  *bool             `mapstructure:"forced_tool_choice" json:"forced_tool_choice,omitempty"`
	ResponseFormat    *string           `mapstructure:"response_format" json:"response_format,omitempty"`
}

// Apply returns d with o's fields set, checked.
func (o Overrides) Apply(d Dialect) (Dialect, error) {
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	setBool := func(dst *bool, src *bool) {
		if src != nil {
			*dst = *src
		}
	}
	set(&d.BaseURL, o.BaseURL)
	set(&d.MaxTokensField, o.MaxTokensField)
	set(&d.ReasoningField, o.ReasoningField)
	set(&d.ResponseFormat, o.ResponseFormat)
	setBool(&d.StreamUsage, o.StreamUsage)
	setBool(&d.ParallelToolCalls, o.ParallelToolCalls)
	setBool(&d.EchoReasoning, o.EchoReasoning)
	setBool(&d.ForcedToolChoice, o.ForcedToolChoice)
	if len(o.Header) > 0 {
		h := make(map[string]string, len(d.Header)+len(o.Header))
		maps.Copy(h, d.Header)
		for k, v := range o.Header {
			if v == "" {
				delete(h, k)
			} else {
				h[k] = v
			}
		}
		d.Header = h
	}
	return d, d.Validate()
}

// Validate says which field of d holds a value the adapter does not know.
func (d Dialect) Validate() error {
	check := func(field, v string, allowed ...string) error {
		if slices.Contains(allowed, v) {
			return nil
		}
		return fmt.Errorf("chatcompat: dialect %s: %s %q is not one of %q", d.Name, field, v, allowed)
	}
	if err := check("max_tokens_field", d.MaxTokensField, "", "max_tokens", "max_completion_tokens"); err != nil {
		return err
	}
	if err := check("reasoning_field", d.ReasoningField, "", "reasoning_effort", "reasoning.effort", "thinking.type"); err != nil {
		return err
	}
	if err := check("response_format", d.ResponseFormat, "json_schema", "json_object", "tool"); err != nil {
		return err
	}
	if d.ResponseFormat == "tool" && !d.ForcedToolChoice {
		return fmt.Errorf("chatcompat: dialect %s: response_format \"tool\" needs forced_tool_choice (the answer is a forced tool call); use json_object instead", d.Name)
	}
	return nil
}
