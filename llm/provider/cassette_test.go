package provider

// TestCassettes replays every recorded exchange under
// ../shared/conformance/llm-cassettes against the adapter for its wire
// format. For each interaction it checks two things:
//
//  1. Response: the recorded response body, served verbatim by llm/sim,
//     parses into the text, tool calls (ids, names, parsed arguments),
//     reasoning (text and signatures), usage and finish reason that the
//     recording holds. The expectation is extracted from the recorded body by
//     generic JSON walking, independently of the adapter's decoder.
//  2. Request: the request the adapter builds for the same conversation
//     (decoded from the recorded request) equals the recorded request body,
//     compared field by field on the JSON, and goes to the same path.
//
// Each top folder is handled by the cassetteDialect registered for its
// prefix; anthropic and gemini register theirs from init in
// cassette_anthropic_test.go and cassette_gemini_test.go.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/internal/testenv"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/llmtest"
	"github.com/agentfleet/agentfleet/llm/sim"
	"github.com/agentfleet/agentfleet/llm/sim/simtest"
)

// cassetteExpectation is what a recorded response holds, in adapter-neutral
// terms.
type cassetteExpectation struct {
	Text      string
	Reasoning string
	// Signatures are the opaque reasoning tokens in the order the parts
	// carry them (Anthropic signatures, OpenAI encrypted_content, Gemini
	// thoughtSignature); empty ones are left out.
	Signatures []string
	ToolCalls  []cassetteToolCall
	Usage      llm.Usage
	Finish     llm.FinishReason
}

// cassetteToolCall is an expected tool call. An empty ID is not compared
// (Gemini sends none).
type cassetteToolCall struct {
	ID   string
	Name string
	Args any // the parsed JSON arguments
}

// cassetteDialect adapts the test to one wire format.
type cassetteDialect struct {
	// newClient returns the adapter pointed at the sim server root.
	newClient func(baseURL string) llm.Client
	// requestFromRecording decodes a recorded request body into the
	// conversation and options it expresses.
	requestFromRecording func(t *testing.T, body []byte) llm.Request
	// expected extracts what a recorded response body holds.
	expected func(t *testing.T, body []byte, streaming bool) cassetteExpectation
	// modelFromURL, when set, names the model from the recorded URL, for
	// wire formats that carry it there rather than in the body (Gemini).
	modelFromURL func(url string) string
	// ignored lists request JSON paths (indices written [*]) whose values
	// legitimately differ from the recording, each with the reason.
	ignored map[string]string
}

// cassetteDialects is keyed by the prefix of the cassette's top folder; the
// longest matching prefix wins.
var cassetteDialects = map[string]cassetteDialect{}

// cassetteRoot finds ../shared/conformance/llm-cassettes next to the module.
func cassetteRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
	return filepath.Join(dir, "..", "shared", "conformance", "llm-cassettes")
}

func TestCassettes(t *testing.T) {
	root := cassetteRoot(t)
	if _, err := os.Stat(root); err != nil {
		testenv.SkipOrFatal(t, fmt.Sprintf("the recorded cassettes are not at %s: %v", root, err))
	}
	var files []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".yaml") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no cassettes under %s", root)
	}
	sort.Strings(files)
	for _, path := range files {
		rel, _ := filepath.Rel(root, path)
		name := strings.TrimSuffix(filepath.ToSlash(rel), ".yaml")
		t.Run(name, func(t *testing.T) {
			d, ok := dialectFor(strings.Split(name, "/")[0])
			if !ok {
				testenv.SkipOrFatal(t, fmt.Sprintf("no cassette dialect is registered for %s", name))
			}
			runCassette(t, d, path)
		})
	}
}

func dialectFor(folder string) (cassetteDialect, bool) {
	best := ""
	for prefix := range cassetteDialects {
		if strings.HasPrefix(folder, prefix) && len(prefix) > len(best) {
			best = prefix
		}
	}
	d, ok := cassetteDialects[best]
	return d, ok && best != ""
}

func runCassette(t *testing.T, d cassetteDialect, path string) {
	c, err := simtest.LoadCassette(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Interactions) == 0 {
		t.Fatal("the cassette holds no interactions")
	}
	for i, in := range c.Interactions {
		t.Run(fmt.Sprintf("interaction_%d", i), func(t *testing.T) {
			if in.Response.Code != 200 {
				t.Fatalf("recorded status %d: the replay covers successful exchanges only; teach runInteraction the error path before adding error cassettes", in.Response.Code)
			}
			runInteraction(t, d, in)
		})
	}
}

func runInteraction(t *testing.T, d cassetteDialect, in simtest.Interaction) {
	srv := sim.NewServer()
	defer srv.Close()
	srv.Enqueue(in.RawReply())
	streaming := isStreaming(in.Request)
	req := d.requestFromRecording(t, []byte(in.Request.Body))
	if d.modelFromURL != nil {
		req.Model = d.modelFromURL(in.Request.URL)
	}
	client := d.newClient(srv.URL())
	var resp *llm.Response
	var events []llm.StreamEvent
	var err error
	if streaming {
		events, resp, err = llmtest.Collect(client.Stream(context.Background(), req))
	} else {
		resp, err = client.Complete(context.Background(), req)
	}
	if err != nil {
		t.Fatalf("replaying the recorded response: %v", err)
	}
	want := d.expected(t, []byte(in.Response.Body), streaming)
	checkResponse(t, resp, want)
	if streaming {
		if got := llmtest.Deltas(events, llm.EventTextDelta); got != want.Text {
			t.Errorf("text deltas = %q, want %q", got, want.Text)
		}
		if got := llmtest.Deltas(events, llm.EventReasoningDelta); got != want.Reasoning {
			t.Errorf("reasoning deltas = %q, want %q", got, want.Reasoning)
		}
	}
	sent := srv.Requests()
	if len(sent) != 1 {
		t.Fatalf("the adapter sent %d requests, want 1", len(sent))
	}
	checkRequest(t, d, in.Request, sent[0])
}

func isStreaming(r simtest.CassetteRequest) bool {
	if strings.Contains(r.URL, "streamGenerateContent") {
		return true
	}
	var body struct {
		Stream bool `json:"stream"`
	}
	_ = json.Unmarshal([]byte(r.Body), &body)
	return body.Stream
}

func checkResponse(t *testing.T, resp *llm.Response, want cassetteExpectation) {
	t.Helper()
	if got := resp.Text(); got != want.Text {
		t.Errorf("text = %q, want %q", got, want.Text)
	}
	if got := resp.Reasoning(); got != want.Reasoning {
		t.Errorf("reasoning = %q, want %q", got, want.Reasoning)
	}
	if got := signatures(resp.Message); !reflect.DeepEqual(got, want.Signatures) {
		t.Errorf("signatures = %q, want %q", got, want.Signatures)
	}
	if resp.Usage != want.Usage {
		t.Errorf("usage = %+v, want %+v", resp.Usage, want.Usage)
	}
	if resp.FinishReason != want.Finish {
		t.Errorf("finish = %+v, want %+v", resp.FinishReason, want.Finish)
	}
	calls := resp.ToolCalls()
	if len(calls) != len(want.ToolCalls) {
		t.Fatalf("%d tool calls %+v, want %d %+v", len(calls), calls, len(want.ToolCalls), want.ToolCalls)
	}
	for i, c := range calls {
		w := want.ToolCalls[i]
		var args any
		if err := json.Unmarshal(c.Arguments, &args); err != nil || c.ArgumentsError != "" {
			t.Errorf("tool call %d arguments %s do not parse: %v %s", i, c.Arguments, err, c.ArgumentsError)
		}
		if c.Name != w.Name || w.ID != "" && c.ID != w.ID || !reflect.DeepEqual(args, w.Args) {
			t.Errorf("tool call %d = %s %s %v, want %s %s %v", i, c.ID, c.Name, args, w.ID, w.Name, w.Args)
		}
	}
}

// signatures lists the opaque tokens on a message's parts, in order.
func signatures(m llm.Message) []string {
	var out []string
	add := func(s string) {
		if s != "" {
			out = append(out, s)
		}
	}
	for _, p := range m.Content {
		if p.Reasoning != nil {
			add(p.Reasoning.Signature)
		}
		add(p.Signature)
		if p.ToolCall != nil {
			add(p.ToolCall.Signature)
		}
	}
	return out
}

// checkRequest compares the request the adapter sent with the recorded one:
// the same path and query (the key query parameter aside) and the same JSON
// body, field by field.
func checkRequest(t *testing.T, d cassetteDialect, recorded simtest.CassetteRequest, sent sim.RecordedRequest) {
	t.Helper()
	u, err := url.Parse(recorded.URL)
	if err != nil {
		t.Fatalf("recorded url: %v", err)
	}
	if u.Path != sent.Path {
		t.Errorf("request path = %s, want %s", sent.Path, u.Path)
	}
	q := u.Query()
	q.Del("key") // a credential, never compared
	if sq, _ := url.ParseQuery(sent.Query); sq.Encode() != q.Encode() {
		t.Errorf("request query = %q, want %q", sq.Encode(), q.Encode())
	}
	var want, got any
	if err := json.Unmarshal([]byte(recorded.Body), &want); err != nil {
		t.Fatalf("recorded request body: %v", err)
	}
	if err := json.Unmarshal(sent.Body, &got); err != nil {
		t.Fatalf("sent request body: %v", err)
	}
	for _, diff := range jsonDiff("", got, want, d.ignored) {
		t.Errorf("request %s", diff)
	}
}

var indexRE = regexp.MustCompile(`\[\d+\]`)

// jsonDiff lists the differences between got and want, by path. Paths in
// ignored (with indices written [*]) are skipped.
func jsonDiff(path string, got, want any, ignored map[string]string) []string {
	if _, skip := ignored[indexRE.ReplaceAllString(path, "[*]")]; skip && path != "" {
		return nil
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s = %s, want an object %s", orRoot(path), compact(got), compact(want))}
		}
		var out []string
		for _, k := range unionKeys(g, w) {
			p := strings.TrimPrefix(path+"."+k, ".")
			gv, gok := g[k]
			wv, wok := w[k]
			switch {
			case !gok:
				if _, skip := ignored[indexRE.ReplaceAllString(p, "[*]")]; !skip {
					out = append(out, fmt.Sprintf("%s is missing, want %s", p, compact(wv)))
				}
			case !wok:
				if _, skip := ignored[indexRE.ReplaceAllString(p, "[*]")]; !skip {
					out = append(out, fmt.Sprintf("%s = %s is not in the recording", p, compact(gv)))
				}
			default:
				out = append(out, jsonDiff(p, gv, wv, ignored)...)
			}
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s = %s, want %s", orRoot(path), compact(got), compact(want))}
		}
		var out []string
		for i := range w {
			out = append(out, jsonDiff(fmt.Sprintf("%s[%d]", path, i), g[i], w[i], ignored)...)
		}
		return out
	}
	if !reflect.DeepEqual(got, want) {
		return []string{fmt.Sprintf("%s = %s, want %s", orRoot(path), compact(got), compact(want))}
	}
	return nil
}

func orRoot(path string) string {
	if path == "" {
		return "body"
	}
	return path
}

func unionKeys(a, b map[string]any) []string {
	seen := map[string]bool{}
	var keys []string
	for _, m := range []map[string]any{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}

// Generic JSON walking helpers for the expectation extractors.

// jpath follows keys and indices through decoded JSON; nil when absent.
func jpath(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func jstr(v any, keys ...any) string {
	s, _ := jpath(v, keys...).(string)
	return s
}

func jint(v any, keys ...any) int {
	f, _ := jpath(v, keys...).(float64)
	return int(f)
}

func jarr(v any, keys ...any) []any {
	a, _ := jpath(v, keys...).([]any)
	return a
}

func decodeJSON(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("recorded JSON: %v", err)
	}
	return v
}

// sseData returns the decoded data of every SSE event in a recorded stream
// body, skipping [DONE]. It splits lines itself rather than use the
// adapter's reader.
func sseData(t *testing.T, body []byte) []any {
	t.Helper()
	var out []any
	var data []string
	flush := func() {
		if len(data) > 0 && strings.Join(data, "\n") != "[DONE]" {
			out = append(out, decodeJSON(t, []byte(strings.Join(data, "\n"))))
		}
		data = nil
	}
	for line := range strings.SplitSeq(strings.ReplaceAll(string(body), "\r\n", "\n"), "\n") {
		switch {
		case line == "":
			flush()
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	flush()
	return out
}

func parseArgs(t *testing.T, s string) any {
	t.Helper()
	if strings.TrimSpace(s) == "" {
		return map[string]any{}
	}
	return decodeJSON(t, []byte(s))
}

func finishFor(raw string, kind llm.FinishKind) llm.FinishReason {
	return llm.FinishReason{Reason: kind, Raw: raw}
}
