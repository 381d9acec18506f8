package dev

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/agentfleet/agentfleet/fleet/models"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/llm/provider"
)

// devModel is the model dev mode runs its sessions on: the workers'
// provider configuration, the profiles tasks may name, and a sentence for
// the user saying which model this is.
type devModel struct {
	providers map[string]worker.ProviderConfig
	profiles  []string // the first is the default
	describe  string
	simulated bool
	close     func()
}

// The environment variables dev mode reads to choose a model (the same as
// `worker run`'s, see models.ApplyEnv).
const (
	EnvLLMBaseURL = models.EnvLLMBaseURL
	EnvLLMAPIKey  = models.EnvLLMAPIKey
	EnvModel      = models.EnvModel
)

// providerKeys lists, in order of preference, the profiles dev mode serves
// when their provider's key is set.
var providerKeys = []struct{ profile, provider string }{
	{"anthropic", provider.Anthropic}, {"openai", provider.OpenAI}, {"gemini", provider.Gemini},
}

// chooseDevModel picks the real providers whose keys getenv finds, an
// OpenAI-compatible server named by AGENTFLEET_LLM_BASE_URL, or, with
// neither (or forceSim), the simulated model.
func chooseDevModel(getenv func(string) string, forceSim bool, plan SimPlan) (devModel, error) {
	if !forceSim {
		if base := getenv(EnvLLMBaseURL); base != "" {
			providers, err := models.ApplyEnv(nil, getenv)
			if err != nil {
				return devModel{}, err
			}
			return devModel{profiles: []string{"openai"}, close: func() {}, providers: providers,
				describe: fmt.Sprintf("real model %s from the OpenAI-compatible server at %s (profile openai)", getenv(EnvModel), base)}, nil
		}
		m := devModel{providers: map[string]worker.ProviderConfig{}, close: func() {}}
		for _, pk := range providerKeys {
			if !hasKey(getenv, pk.provider) {
				continue
			}
			m.profiles = append(m.profiles, pk.profile)
			m.providers[pk.profile] = worker.ProviderConfig{DefaultModel: getenv(EnvModel)}
		}
		if len(m.profiles) > 0 {
			model := getenv(EnvModel)
			if model == "" {
				model = "the profile's default model"
			}
			m.describe = fmt.Sprintf("real provider(s) %v, default profile %s, %s", m.profiles, m.profiles[0], model)
			return m, nil
		}
	}
	return startSimModel(plan)
}

func hasKey(getenv func(string) string, name string) bool { return provider.HasKey(name, getenv) }

// startSimModel serves the simulated model on a loopback port.
func startSimModel(plan SimPlan) (devModel, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return devModel{}, fmt.Errorf("starting the simulated model: %w", err)
	}
	closing := make(chan struct{})
	srv := &http.Server{Handler: &simModel{plan: plan, closing: closing}, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the listener failed: requests will fail and say so
		}
	}()
	stop := func() {
		close(closing)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}
	url := "http://" + ln.Addr().String()
	return devModel{simulated: true, profiles: []string{"anthropic"}, close: stop,
		providers: map[string]worker.ProviderConfig{"anthropic": {APIKey: "simulated", BaseURL: url, DefaultModel: "simulated"}},
		describe: "SIMULATED model (llm/sim in this process, scripted; no provider key found). " +
			"Set ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY, or AGENTFLEET_LLM_BASE_URL and AGENTFLEET_MODEL " +
			"(an OpenAI-compatible server such as Ollama), to use a real model"}, nil
}
