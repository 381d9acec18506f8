package vertex_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/llmtest"
	"github.com/agentfleet/agentfleet/llm/vertex"
)

// tokenServer is Google's OAuth2 token endpoint for service accounts: it
// takes a JWT bearer assertion, checks its RS256 signature with the
// account's public key and its claims, and answers an access token.
type tokenServer struct {
	t     *testing.T
	key   *rsa.PublicKey
	email string
	url   string
	mu    sync.Mutex
	bad   []string
	calls int
}

func (s *tokenServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if why := s.check(r.PostForm.Get("grant_type"), r.PostForm.Get("assertion")); why != "" {
		s.bad = append(s.bad, why)
		http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"access_token":"ya29.test-token","token_type":"Bearer","expires_in":3600}`)
}

func (s *tokenServer) check(grant, assertion string) string {
	if grant != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		return "grant_type " + grant
	}
	parts := strings.Split(assertion, ".")
	if len(parts) != 3 {
		return "the assertion is not a JWT"
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return "signature encoding: " + err.Error()
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(s.key, crypto.SHA256, sum[:], sig); err != nil {
		return "RS256 signature: " + err.Error()
	}
	var hdr struct {
		Alg string `json:"alg"`
	}
	var claims struct {
		Iss   string `json:"iss"`
		Scope string `json:"scope"`
		Aud   string `json:"aud"`
		Iat   int64  `json:"iat"`
		Exp   int64  `json:"exp"`
	}
	h, _ := base64.RawURLEncoding.DecodeString(parts[0])
	c, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if json.Unmarshal(h, &hdr) != nil || json.Unmarshal(c, &claims) != nil {
		return "undecodable header or claims"
	}
	switch {
	case hdr.Alg != "RS256":
		return "alg " + hdr.Alg
	case claims.Iss != s.email:
		return "iss " + claims.Iss
	case claims.Aud != s.url:
		return "aud " + claims.Aud
	case claims.Scope != vertex.Scope:
		return "scope " + claims.Scope
	case claims.Exp <= claims.Iat:
		return "exp not after iat"
	}
	return ""
}

// serviceAccount writes a service account key file whose token_uri is a
// local token server, and returns the path and the server.
func serviceAccount(t *testing.T) (string, *tokenServer) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ts := &tokenServer{t: t, key: &key.PublicKey, email: "agentfleet@proj-1.iam.gserviceaccount.com"}
	srv := httptest.NewServer(ts)
	t.Cleanup(srv.Close)
	ts.url = srv.URL + "/token"
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	file, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "proj-1", "private_key_id": "k1",
		"private_key": string(pemKey), "client_email": ts.email, "client_id": "1", "token_uri": ts.url})
	path := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, ts
}

// fakeVertex records each request and answers from answer.
type fakeVertex struct {
	mu     sync.Mutex
	reqs   []*http.Request
	bodies []map[string]any
	raw    [][]byte
	answer func(w http.ResponseWriter, r *http.Request)
}

func (f *fakeVertex) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	f.mu.Lock()
	f.reqs = append(f.reqs, r)
	f.bodies = append(f.bodies, m)
	f.raw = append(f.raw, body)
	f.mu.Unlock()
	f.answer(w, r)
}

func newClient(t *testing.T, f *fakeVertex) (*vertex.Client, *tokenServer) {
	path, ts := serviceAccount(t)
	tokens, err := vertex.ServiceAccountTokens(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	retry, _ := llmtest.FastRetry(1)
	c, err := vertex.New(vertex.Config{Project: "proj-1", Region: "us-east5", BaseURL: srv.URL, Tokens: tokens, Retry: retry})
	if err != nil {
		t.Fatal(err)
	}
	return c, ts
}

func sse(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, e := range events {
		_, _ = io.WriteString(w, e+"\n\n")
	}
}

// A Gemini model: the service account's JWT is exchanged for a token (the
// token server checks the signature and claims), the request carries it as
// Bearer and goes to the google publisher's streamGenerateContent with the
// generateContent body.
func TestGeminiOnVertex(t *testing.T) {
	f := &fakeVertex{answer: func(w http.ResponseWriter, r *http.Request) {
		sse(w, `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Hi from Vertex"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":3}}`)
	}}
	c, ts := newClient(t, f)
	req := llm.Request{Model: "gemini-2.5-pro", Messages: []llm.Message{llm.SystemMessage("be brief"), llm.UserMessage("hi")}}
	_, resp, err := llmtest.Collect(c.Stream(context.Background(), req))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text() != "Hi from Vertex" || resp.Usage.OutputTokens != 3 {
		t.Fatalf("response %+v", resp)
	}
	if len(ts.bad) > 0 || ts.calls != 1 {
		t.Fatalf("token exchange: %d calls, problems %v", ts.calls, ts.bad)
	}
	r := f.reqs[0]
	if got := r.Header.Get("Authorization"); got != "Bearer ya29.test-token" {
		t.Errorf("Authorization %q", got)
	}
	if want := "/v1/projects/proj-1/locations/us-east5/publishers/google/models/gemini-2.5-pro:streamGenerateContent"; r.URL.Path != want || r.URL.RawQuery != "alt=sse" {
		t.Errorf("URL %s?%s, want %s?alt=sse", r.URL.Path, r.URL.RawQuery, want)
	}
	if f.bodies[0]["contents"] == nil || f.bodies[0]["systemInstruction"] == nil {
		t.Errorf("body is not a generateContent body: %v", f.bodies[0])
	}
	if r.Header.Get("X-Goog-Api-Key") != "" {
		t.Error("an API key header was sent")
	}
}

// A Claude model: the anthropic publisher's streamRawPredict, the Messages
// body without model and with anthropic_version, betas as a header; the
// same token is reused for the second call.
func TestClaudeOnVertex(t *testing.T) {
	f := &fakeVertex{answer: func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ":rawPredict") {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"id":"msg_9","type":"message","role":"assistant","model":"claude","content":[{"type":"text","text":"whole"}],"stop_reason":"end_turn","usage":{"input_tokens":2,"output_tokens":1}}`)
			return
		}
		sse(w,
			"event: message_start\ndata: "+`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[],"usage":{"input_tokens":5,"output_tokens":1}}}`,
			"event: content_block_start\ndata: "+`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			"event: content_block_delta\ndata: "+`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Claude here"}}`,
			"event: content_block_stop\ndata: "+`{"type":"content_block_stop","index":0}`,
			"event: message_delta\ndata: "+`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":4}}`,
			"event: message_stop\ndata: "+`{"type":"message_stop"}`)
	}}
	c, ts := newClient(t, f)
	req := llm.Request{Model: "claude-sonnet-4@20250514", Messages: []llm.Message{llm.UserMessage("hi")},
		ProviderOptions: llm.ProviderOptions{"anthropic": {"beta_headers": []string{"context-1m-2025-08-07"}}}}
	_, resp, err := llmtest.Collect(c.Stream(context.Background(), req))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text() != "Claude here" {
		t.Fatalf("response %q", resp.Text())
	}
	r, b := f.reqs[0], f.bodies[0]
	if want := "/v1/projects/proj-1/locations/us-east5/publishers/anthropic/models/claude-sonnet-4@20250514:streamRawPredict"; r.URL.Path != want {
		t.Errorf("path %s, want %s", r.URL.Path, want)
	}
	if b["anthropic_version"] != vertex.AnthropicVersion || b["model"] != nil || b["stream"] != true || b["messages"] == nil {
		t.Errorf("body %v", b)
	}
	if r.Header.Get("Anthropic-Beta") != "context-1m-2025-08-07" || r.Header.Get("Authorization") != "Bearer ya29.test-token" {
		t.Errorf("headers %v", r.Header)
	}
	whole, err := c.Complete(context.Background(), req)
	if err != nil || whole.Text() != "whole" || !strings.HasSuffix(f.reqs[1].URL.Path, ":rawPredict") {
		t.Fatalf("Complete: %v, %v", whole, err)
	}
	if ts.calls != 1 || len(ts.bad) > 0 {
		t.Fatalf("token exchange: %d calls (want the token reused), problems %v", ts.calls, ts.bad)
	}
}

// A Google error body is classified: RESOURCE_EXHAUSTED is a rate limit.
func TestVertexErrors(t *testing.T) {
	f := &fakeVertex{answer: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, `{"error":{"code":429,"message":"Quota exceeded for aiplatform.googleapis.com","status":"RESOURCE_EXHAUSTED"}}`)
	}}
	c, _ := newClient(t, f)
	_, err := c.Complete(context.Background(), llm.Request{Model: "gemini-2.5-pro", Messages: []llm.Message{llm.UserMessage("hi")}})
	var le *llm.Error
	if !errors.As(err, &le) || (le.Kind != llm.ErrRateLimited && le.Kind != llm.ErrQuota) || le.Provider != vertex.ProviderName {
		t.Fatalf("error %v", err)
	}
}

// Claude with a response format on the v1beta1 route: the format goes out
// as a forced tool call, the tool_use comes back as the answer's text.
func TestClaudeStructuredOutputV1beta1(t *testing.T) {
	f := &fakeVertex{answer: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"msg_5","type":"message","role":"assistant","model":"claude","content":[{"type":"tool_use","id":"toolu_1","name":"answer","input":{"answer":5,"unit":"apples"}}],"stop_reason":"tool_use","usage":{"input_tokens":2,"output_tokens":1}}`)
	}}
	path, _ := serviceAccount(t)
	tokens, err := vertex.ServiceAccountTokens(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, err := vertex.New(vertex.Config{Project: "p", Region: "global", APIVersion: "v1beta1", BaseURL: srv.URL, Tokens: tokens})
	if err != nil {
		t.Fatal(err)
	}
	req := llm.Request{Model: "claude-sonnet-4@20250514", Messages: []llm.Message{llm.UserMessage("2+3 apples?")}, ResponseFormat: llmtest.AnswerFormat()}
	resp, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !jsonSame(resp.Text(), `{"answer":5,"unit":"apples"}`) || len(resp.ToolCalls()) != 0 || resp.FinishReason.Reason != llm.FinishStop {
		t.Errorf("text %q calls %v finish %+v", resp.Text(), resp.ToolCalls(), resp.FinishReason)
	}
	if want := "/v1beta1/projects/p/locations/global/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict"; f.reqs[0].URL.Path != want {
		t.Errorf("path %s, want %s", f.reqs[0].URL.Path, want)
	}
	if choice, _ := f.bodies[0]["tool_choice"].(map[string]any); choice["name"] != "answer" {
		t.Errorf("tool_choice %v", f.bodies[0]["tool_choice"])
	}
	if _, err := vertex.New(vertex.Config{Project: "p", Region: "global", APIVersion: "v2", Tokens: tokens}); err == nil {
		t.Error("APIVersion v2 was accepted")
	}
}

func jsonSame(a, b string) bool {
	var x, y any
	return json.Unmarshal([]byte(a), &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y)
}
