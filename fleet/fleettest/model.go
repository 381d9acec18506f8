package fleettest

import (
	"net/http/httptest"

	"github.com/agentfleet/agentfleet/llm/sim/scripted"
)

// Step is what the simulated model answers at one turn (scripted.Step).
type Step = scripted.Step

// Call is one tool call of a Step (scripted.Call).
type Call = scripted.Call

// Prompt returns a task prompt: a title the model ignores, then the script.
func Prompt(title string, steps ...Step) string { return scripted.Prompt(title, steps...) }

// Spawn is a call to spawn_agent whose child follows steps.
func Spawn(title string, steps ...Step) Call { return scripted.Spawn(title, steps...) }

// Shell is a call to the anthropic profile's shell tool.
func Shell(command string) Call { return scripted.Shell(command) }

// Model is the simulated provider of fleet tests: the scripted model served
// over HTTP on loopback for the length of a test.
type Model struct {
	*scripted.Model
	srv *httptest.Server
}

// NewModel starts the simulated provider; it stops when the test ends.
func NewModel(t interface{ Cleanup(f func()) }) *Model {
	m := &Model{Model: scripted.New()}
	m.srv = httptest.NewServer(m.Model)
	t.Cleanup(m.srv.Close)
	return m
}

// URL is the provider base URL to configure (ProviderConfig.BaseURL).
func (m *Model) URL() string { return m.srv.URL }
