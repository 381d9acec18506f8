package simtest

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agentfleet/agentfleet/llm/sim"
)

// Cassette is a recording of real HTTP exchanges in the go-vcr version 2
// YAML format.
type Cassette struct {
	Path         string        `yaml:"-"`
	Version      int           `yaml:"version"`
	Interactions []Interaction `yaml:"interactions"`
}

// Interaction is one recorded request and its response.
type Interaction struct {
	ID       int              `yaml:"id"`
	Request  CassetteRequest  `yaml:"request"`
	Response CassetteResponse `yaml:"response"`
}

// CassetteRequest is the request as the recording client sent it.
type CassetteRequest struct {
	Method  string      `yaml:"method"`
	URL     string      `yaml:"url"`
	Headers http.Header `yaml:"headers"`
	Body    string      `yaml:"body"`
}

// CassetteResponse is the provider's response, body verbatim.
type CassetteResponse struct {
	Status  string      `yaml:"status"` // "200 OK"
	Code    int         `yaml:"code"`
	Headers http.Header `yaml:"headers"`
	Body    string      `yaml:"body"`
}

// LoadCassette reads a go-vcr v2 cassette file.
func LoadCassette(path string) (*Cassette, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("simtest: reading cassette: %w", err)
	}
	var c Cassette
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("simtest: cassette %s is not go-vcr YAML: %w", path, err)
	}
	if c.Version != 2 {
		return nil, fmt.Errorf("simtest: cassette %s has version %d; only go-vcr version 2 is supported", path, c.Version)
	}
	c.Path = path
	return &c, nil
}

// RawReply returns the reply that serves the interaction's response
// verbatim from a sim.Server (Enqueue it).
func (i Interaction) RawReply() sim.Reply {
	return sim.Reply{Raw: &sim.RawResponse{Status: i.Response.Code, Header: i.Response.Headers.Clone(), Body: i.Response.Body}}
}

// Replay enqueues every interaction's recorded response on s, in order.
func Replay(s *sim.Server, c *Cassette) {
	for _, in := range c.Interactions {
		s.Enqueue(in.RawReply())
	}
}

// ConformanceDir returns ../shared/conformance next to the module root,
// found by walking up from the working directory to the go.mod. Tests read
// the shared conformance data there in place.
func ConformanceDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "conformance"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("simtest: no go.mod above the working directory")
		}
		dir = parent
	}
}

// LargestStreamedResponse returns the largest recorded streamed (SSE)
// response among the cassettes in the llm-cassettes folders whose names
// start with one of prefixes. Benchmarks replay it.
func LargestStreamedResponse(prefixes ...string) (Interaction, error) {
	all, err := StreamedResponses(prefixes...)
	var best Interaction
	for _, in := range all {
		if len(in.Response.Body) > len(best.Response.Body) {
			best = in
		}
	}
	return best, err
}

// StreamedResponses returns every recorded streamed (SSE) response in the
// cassettes of the llm-cassettes folders whose names start with one of
// prefixes, or an error if there is none.
func StreamedResponses(prefixes ...string) ([]Interaction, error) {
	conf, err := ConformanceDir()
	if err != nil {
		return nil, err
	}
	root := filepath.Join(conf, "llm-cassettes")
	var all []Interaction
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if !hasAnyPrefix(rel, prefixes) {
			return nil
		}
		c, err := LoadCassette(path)
		if err != nil {
			return err
		}
		for _, in := range c.Interactions {
			if strings.HasPrefix(in.Response.Headers.Get("Content-Type"), "text/event-stream") {
				all = append(all, in)
			}
		}
		return nil
	})
	if err == nil && len(all) == 0 {
		err = fmt.Errorf("simtest: no streamed response in cassettes under %s starting with %v", root, prefixes)
	}
	return all, err
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
