package provider

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/anthropic"
	"github.com/agentfleet/agentfleet/llm/chatcompat"
	"github.com/agentfleet/agentfleet/llm/gemini"
	"github.com/agentfleet/agentfleet/llm/openai"
)

// Provider names accepted in Config.Provider.
const (
	OpenAI     = "openai"
	Anthropic  = "anthropic"
	Gemini     = "gemini"
	ChatCompat = "chatcompat"
	Bedrock    = "bedrock" // Anthropic models on AWS Bedrock (llm/bedrock)
	Vertex     = "vertex"  // Gemini and Anthropic models on Vertex AI (llm/vertex)
)

// Config chooses and configures an adapter. Every field is optional except
// that the provider must be knowable: from Provider, from BaseURL's host or
// from Model's name.
type Config struct {
	// Provider is openai, anthropic, gemini or chatcompat, or one of the
	// chatcompat shortcuts ollama, vllm, llamacpp, openrouter, groq (which
	// fill in the usual base URL and key variable). google means gemini.
	// Empty means detect.
	Provider string
	// Model is used only for detection here; requests name their model.
	Model string
	// BaseURL overrides the API root, in each provider's convention:
	// https://api.openai.com/v1, https://api.anthropic.com,
	// https://generativelanguage.googleapis.com, or a compatible server's
	// .../v1.
	BaseURL string
	// APIKey overrides the key from the environment.
	APIKey string
	// Retry is the retry policy; zero fields mean the llm defaults.
	Retry llm.RetryPolicy
	// HTTPClient sends the requests; nil means a shared client.
	HTTPClient *http.Client
	// Region (bedrock, vertex) and Project (vertex) locate the service.
	Region  string
	Project string
	// CredentialsFile (bedrock, vertex) names the credentials: for bedrock
	// a JSON file with AccessKeyId and SecretAccessKey (default: the
	// AWS_* environment variables), for vertex a service account key
	// (default: Application Default Credentials, which include workload
	// identity). Never the secret itself.
	CredentialsFile string
}

// shortcut is a chatcompat server with a well-known base URL and key
// variable.
type shortcut struct {
	baseURL string
	keyEnv  string
}

var shortcuts = map[string]shortcut{
	"ollama":     {"http://localhost:11434/v1", ""},
	"vllm":       {"http://localhost:8000/v1", ""},
	"llamacpp":   {"http://localhost:8080/v1", ""},
	"openrouter": {"https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"},
	"groq":       {"https://api.groq.com/openai/v1", "GROQ_API_KEY"},
}

// officialHosts maps each provider's API host to the provider.
var officialHosts = map[string]string{
	"api.openai.com":                    OpenAI,
	"api.anthropic.com":                 Anthropic,
	"generativelanguage.googleapis.com": Gemini,
}

// keyEnv lists the environment variables holding each provider's key, in
// the order they are read.
var keyEnv = map[string][]string{
	OpenAI:    {"OPENAI_API_KEY"},
	Anthropic: {"ANTHROPIC_API_KEY"},
	Gemini:    {"GEMINI_API_KEY", "GOOGLE_API_KEY"},
}

// HasKey reports whether getenv finds a key for the provider in one of
// the variables it is read from (ANTHROPIC_API_KEY, ...).
func HasKey(name string, getenv func(string) string) bool {
	for _, v := range keyEnv[name] {
		if getenv(v) != "" {
			return true
		}
	}
	return false
}

// Detect returns the provider cfg selects: Provider when set; else the
// provider owning BaseURL's host, any other host meaning chatcompat; else the
// model name's family (claude: anthropic; gemini: gemini; gpt-, o1, o3, o4,
// codex, chatgpt: openai).
func Detect(cfg Config) (string, error) {
	p := strings.ToLower(strings.TrimSpace(cfg.Provider))
	switch {
	case p == "google":
		return Gemini, nil
	case p == OpenAI, p == Anthropic, p == Gemini, p == ChatCompat, p == Bedrock, p == Vertex:
		return p, nil
	case shortcuts[p] != shortcut{}:
		return ChatCompat, nil
	case p != "":
		return "", fmt.Errorf("provider: Config.Provider %q is unknown; use openai, anthropic, gemini, chatcompat, bedrock or vertex (or ollama, vllm, llamacpp, openrouter, groq)", cfg.Provider)
	}
	if cfg.BaseURL != "" {
		u, err := url.Parse(cfg.BaseURL)
		if err != nil || u.Host == "" {
			return "", fmt.Errorf("provider: Config.BaseURL %q is not an absolute URL such as https://api.openai.com/v1", cfg.BaseURL)
		}
		if official, ok := officialHosts[strings.ToLower(u.Hostname())]; ok {
			return official, nil
		}
		return ChatCompat, nil
	}
	if p := fromModel(cfg.Model); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("provider: cannot tell which provider serves model %q; set Config.Provider (openai, anthropic, gemini, chatcompat) or Config.BaseURL", cfg.Model)
}

func fromModel(model string) string {
	m := strings.ToLower(strings.TrimPrefix(model, "models/"))
	switch {
	case strings.HasPrefix(m, "claude"):
		return Anthropic
	case strings.HasPrefix(m, "gemini"):
		return Gemini
	case strings.HasPrefix(m, "gpt-"), strings.HasPrefix(m, "chatgpt"), strings.HasPrefix(m, "codex"),
		isOSeries(m):
		return OpenAI
	}
	return ""
}

// isOSeries matches o1, o3, o4-mini and the like.
func isOSeries(m string) bool {
	return len(m) >= 2 && m[0] == 'o' && m[1] >= '1' && m[1] <= '9'
}

// New returns the client cfg selects.
func New(cfg Config) (llm.Client, error) {
	name, err := Detect(cfg)
	if err != nil {
		return nil, err
	}
	if err := cfg.Retry.Validate(); err != nil {
		return nil, fmt.Errorf("provider: Config.%w", err)
	}
	switch name {
	case Bedrock:
		return newBedrock(cfg)
	case Vertex:
		return newVertex(cfg)
	}
	short := shortcuts[strings.ToLower(strings.TrimSpace(cfg.Provider))]
	if cfg.BaseURL == "" {
		cfg.BaseURL = short.baseURL
	}
	key := cfg.APIKey
	if key == "" {
		key = envKey(name, short)
	}
	switch name {
	case OpenAI:
		if key == "" {
			return nil, missingKey(name)
		}
		return client(openai.New(openai.Config{BaseURL: cfg.BaseURL, APIKey: key, Retry: cfg.Retry, HTTPClient: cfg.HTTPClient}))
	case Anthropic:
		if key == "" {
			return nil, missingKey(name)
		}
		return client(anthropic.New(anthropic.Config{BaseURL: cfg.BaseURL, APIKey: key, Retry: cfg.Retry, HTTPClient: cfg.HTTPClient}))
	case Gemini:
		if key == "" {
			return nil, missingKey(name)
		}
		return client(gemini.New(gemini.Config{BaseURL: cfg.BaseURL, APIKey: key, Retry: cfg.Retry, HTTPClient: cfg.HTTPClient}))
	}
	if cfg.BaseURL == "" {
		return nil, fmt.Errorf("provider: chatcompat needs Config.BaseURL, the server's API root such as http://localhost:11434/v1")
	}
	return client(chatcompat.New(chatcompat.Config{BaseURL: cfg.BaseURL, APIKey: key, Retry: cfg.Retry, HTTPClient: cfg.HTTPClient}))
}

func envKey(name string, short shortcut) string {
	vars := keyEnv[name]
	if short.keyEnv != "" {
		vars = []string{short.keyEnv}
	}
	for _, v := range vars {
		if k := strings.TrimSpace(os.Getenv(v)); k != "" {
			return k
		}
	}
	return ""
}

func missingKey(name string) error {
	return fmt.Errorf("provider: no API key for %s; set %s or Config.APIKey", name, strings.Join(keyEnv[name], " or "))
}

// client converts a constructor's result, so that a failed constructor
// yields a nil interface rather than one holding a nil pointer.
func client[C llm.Client](c C, err error) (llm.Client, error) {
	if err != nil {
		return nil, err
	}
	return c, nil
}
