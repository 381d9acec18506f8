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
	Azure      = "azure"   // OpenAI models deployed on Azure OpenAI (llm/azure)
)

// Config chooses and configures an adapter. Every field is optional except
// that the provider must be knowable: from Provider, from BaseURL's host or
// from Model's name.
type Config struct {
	// Provider is openai, anthropic, gemini or chatcompat, or the name of
	// a chatcompat dialect (ollama, vllm, llamacpp, lmstudio, openrouter,
	// groq, together, fireworks, deepseek, mistral, xai, cerebras, zai,
	// zai-coding, moonshot: chatcompat.Dialects), which fills in the
	// host's base URL and key variable. google means gemini. Empty means
	// detect.
	Provider string
	// Dialect names the chatcompat dialect when Provider does not; ""
	// means the one whose host serves BaseURL, else generic.
	Dialect string
	// DialectOverrides change single fields of the chatcompat dialect.
	DialectOverrides chatcompat.Overrides
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
	// APIVersion is Azure OpenAI's api-version; "" means
	// AZURE_OPENAI_API_VERSION, else the adapter's default.
	APIVersion string
	// AzureAuth is how Azure OpenAI is authenticated: "key" (APIKey, else
	// AZURE_OPENAI_API_KEY), "entra" (Entra ID through the Azure SDK's
	// default credential chain: azure.DefaultCredential), or "" for the
	// key when one is set, else Entra ID.
	AzureAuth string
	// Region (bedrock, vertex) and Project (vertex) locate the service.
	Region  string
	Project string
	// AWSProfile (bedrock) names the shared config profile the AWS SDK's
	// default chain reads; "" means AWS_PROFILE, else "default".
	AWSProfile string
	// CredentialsFile (bedrock, vertex) names the credentials: for bedrock
	// a JSON file with AccessKeyId and SecretAccessKey (default: the AWS
	// SDK's default chain, see bedrock.DefaultChain), for vertex a service account key
	// (default: Application Default Credentials, which include workload
	// identity). Never the secret itself.
	CredentialsFile string
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
	Azure:     {"AZURE_OPENAI_API_KEY"},
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
	case p == OpenAI, p == Anthropic, p == Gemini, p == ChatCompat, p == Bedrock, p == Vertex, p == Azure:
		return p, nil
	case isDialect(p):
		return ChatCompat, nil
	case p != "":
		return "", fmt.Errorf("provider: Config.Provider %q is unknown; use openai, anthropic, gemini, chatcompat, bedrock, vertex or azure, or a chatcompat dialect (%s)", cfg.Provider, strings.Join(chatcompat.DialectNames(), ", "))
	}
	if cfg.BaseURL != "" {
		u, err := url.Parse(cfg.BaseURL)
		if err != nil || u.Host == "" {
			return "", fmt.Errorf("provider: Config.BaseURL %q is not an absolute URL such as https://api.openai.com/v1", cfg.BaseURL)
		}
		host := strings.ToLower(u.Hostname())
		if official, ok := officialHosts[host]; ok {
			return official, nil
		}
		if strings.HasSuffix(host, ".openai.azure.com") {
			return Azure, nil
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
	case Azure:
		return newAzure(cfg)
	}
	if name == ChatCompat {
		return newChatCompat(cfg)
	}
	key := cfg.APIKey
	if key == "" {
		key = envKey(keyEnv[name])
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
	return nil, fmt.Errorf("provider: %s has no client here", name)
}

// isDialect reports whether p names a chatcompat dialect.
func isDialect(p string) bool {
	_, ok := chatcompat.LookupDialect(p)
	return ok
}

// newChatCompat builds an OpenAI-compatible client: the dialect is
// Config.Dialect, else the one Provider names, else the base URL's host's;
// the key is Config.APIKey, else the dialect's key variable.
func newChatCompat(cfg Config) (llm.Client, error) {
	dialect := cfg.Dialect
	if p := strings.ToLower(strings.TrimSpace(cfg.Provider)); dialect == "" && isDialect(p) {
		dialect = p
	}
	d, err := chatcompat.DialectFor(dialect, cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("provider: Config.Dialect: %w", err)
	}
	if d, err = cfg.DialectOverrides.Apply(d); err != nil {
		return nil, fmt.Errorf("provider: Config.DialectOverrides: %w", err)
	}
	if cfg.BaseURL == "" && d.BaseURL == "" {
		return nil, fmt.Errorf("provider: chatcompat needs Config.BaseURL, the server's API root such as http://localhost:11434/v1, or a dialect that has one (%s)", strings.Join(chatcompat.DialectNames()[1:], ", "))
	}
	key := cfg.APIKey
	if key == "" && d.KeyEnv != "" {
		key = envKey([]string{d.KeyEnv})
	}
	return client(chatcompat.New(chatcompat.Config{BaseURL: cfg.BaseURL, APIKey: key, Retry: cfg.Retry, HTTPClient: cfg.HTTPClient,
		Dialect: d.Name, Overrides: cfg.DialectOverrides}))
}

func envKey(vars []string) string {
	for _, v := range vars {
		if k := strings.TrimSpace(os.Getenv(v)); k != "" {
			return k
		}
	}
	return ""
}

func missingKey(name string) error {
	return fmt.Errorf("provider: no API key for %s; set %s, or api_key in its configuration (a worker's providers.<profile>.api_key)",
		name, strings.Join(keyEnv[name], " or "))
}

// client converts a constructor's result, so that a failed constructor
// yields a nil interface rather than one holding a nil pointer.
func client[C llm.Client](c C, err error) (llm.Client, error) {
	if err != nil {
		return nil, err
	}
	return c, nil
}
