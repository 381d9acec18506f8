package llmtest

import (
	"fmt"
	"net/http"
	"os"

	"gopkg.in/yaml.v3"
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
		return nil, fmt.Errorf("llmtest: reading cassette: %w", err)
	}
	var c Cassette
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("llmtest: cassette %s is not go-vcr YAML: %w", path, err)
	}
	if c.Version != 2 {
		return nil, fmt.Errorf("llmtest: cassette %s has version %d; only go-vcr version 2 is supported", path, c.Version)
	}
	c.Path = path
	return &c, nil
}

// RawReply returns the reply that serves the interaction's response verbatim.
func (i Interaction) RawReply() Reply {
	return Reply{Raw: &RawResponse{Status: i.Response.Code, Header: i.Response.Headers.Clone(), Body: i.Response.Body}}
}

// Replay enqueues every interaction's recorded response, in order.
func (s *Server) Replay(c *Cassette) {
	for _, in := range c.Interactions {
		s.Enqueue(in.RawReply())
	}
}
