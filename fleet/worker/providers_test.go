package worker_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/llm/bedrock/bedrocktest"
	"github.com/agentfleet/agentfleet/store"
)

// localBedrock answers every InvokeModelWithResponseStream with "from
// bedrock" and keeps the requests' paths and Authorization headers.
type localBedrock struct {
	mu    sync.Mutex
	paths []string
	auth  []string
}

func (b *localBedrock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	b.mu.Lock()
	b.paths = append(b.paths, r.URL.EscapedPath())
	b.auth = append(b.auth, r.Header.Get("Authorization"))
	b.mu.Unlock()
	w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
	for _, ev := range []string{
		`{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"claude","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"from bedrock"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}`,
		`{"type":"message_stop"}`,
	} {
		payload, _ := json.Marshal(map[string]string{"bytes": base64.StdEncoding.EncodeToString([]byte(ev))})
		_, _ = w.Write(bedrocktest.EncodeMessage([][2]string{{":event-type", "chunk"}, {":content-type", "application/json"},
			{":message-type", "event"}}, payload))
	}
}

// One fleet serves the anthropic profile from two providers: a task naming
// session.provider "bedrock" is answered through Bedrock (signed with the
// credentials file the worker's configuration names, with the choice's
// own default model), a task naming none through the profile's own
// provider, and a task naming a provider the worker lacks fails with
// not_allowed saying which it has.
func TestSeveralProvidersForOneProfile(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{SQLite: true, NoWorkers: true})
	br := &localBedrock{}
	srv := httptest.NewServer(br)
	t.Cleanup(srv.Close)
	creds := filepath.Join(t.TempDir(), "aws.json")
	if err := os.WriteFile(creds, []byte(`{"Version":1,"AccessKeyId":"AKIDTEST","SecretAccessKey":"secret"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := f.WorkerConfig(0)
	pc := cfg.Providers["anthropic"]
	pc.Choices = map[string]worker.ProviderConfig{"bedrock": {Region: "us-west-2", BaseURL: srv.URL,
		CredentialsFile: creds, DefaultModel: "anthropic.claude-sonnet-4-20250514-v1:0"}}
	cfg.Providers = map[string]worker.ProviderConfig{"anthropic": pc}
	f.StartWorkerWith(cfg)

	viaBedrock := fleet.TaskSpec{Prompt: "hello", Profile: "anthropic", Session: fleet.Session{Provider: "bedrock"}}
	res := succeeded(t, f.WaitDone(f.Submit(viaBedrock)))
	if res.FinalText != "from bedrock" {
		t.Fatalf("final text %q, want Bedrock's answer", res.FinalText)
	}
	if len(br.paths) != 1 || br.paths[0] != "/model/anthropic.claude-sonnet-4-20250514-v1%3A0/invoke-with-response-stream" ||
		!strings.HasPrefix(br.auth[0], "AWS4-HMAC-SHA256 Credential=AKIDTEST/") || !strings.Contains(br.auth[0], "/us-west-2/bedrock/aws4_request") {
		t.Fatalf("Bedrock saw %v with %v", br.paths, br.auth)
	}
	own := succeeded(t, f.WaitDone(f.Submit(fleettest.Spec("own provider", fleettest.Step{Text: "from the anthropic API"}))))
	if own.FinalText != "from the anthropic API" || len(br.paths) != 1 {
		t.Fatalf("the profile's own provider: %q (Bedrock calls %d)", own.FinalText, len(br.paths))
	}
	missing := fleet.TaskSpec{Prompt: "hello", Profile: "anthropic", Session: fleet.Session{Provider: "vertex"}}
	task := f.WaitDone(f.Submit(missing))
	if task.State != store.TaskFailed || !strings.Contains(task.Error, fleet.ReasonNotAllowed) ||
		!strings.Contains(string(task.Result), "it has anthropic, bedrock") {
		t.Fatalf("a provider the worker lacks: %s %q %s", task.State, task.Error, task.Result)
	}
}
