package sim

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestScriptOrderDefaultAndExhaustion(t *testing.T) {
	s := NewServer()
	defer s.Close()
	s.Enqueue(Text("first"), Text("second"))
	for _, want := range []string{"first", "second"} {
		if code, body := post(t, s.URL()+"/v1/chat/completions", `{"model":"m"}`); code != 200 || !strings.Contains(body, want) {
			t.Fatalf("got %d %s, want %s", code, body, want)
		}
	}
	code, body := post(t, s.URL()+"/v1/chat/completions", `{"model":"m"}`)
	if code != 500 || !strings.Contains(body, "script exhausted") {
		t.Fatalf("exhausted script: %d %s", code, body)
	}
	s.SetDefault(Text("fallback"))
	if _, body := post(t, s.URL()+"/v1/responses", `{"model":"m"}`); !strings.Contains(body, "fallback") {
		t.Fatalf("default reply: %s", body)
	}
	if code, body := post(t, s.URL()+"/nowhere", `{}`); code != 404 || !strings.Contains(body, "known paths") {
		t.Fatalf("unknown path: %d %s", code, body)
	}
	reqs := s.Requests()
	if len(reqs) != 5 || reqs[0].Dialect != "chatcompat" || reqs[3].Dialect != "openai" || reqs[4].Dialect != "" || string(reqs[0].Body) != `{"model":"m"}` {
		t.Fatalf("recorded %+v", reqs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if got, err := s.WaitRequests(ctx, 5); err != nil || len(got) != 5 {
		t.Fatalf("WaitRequests: %d, %v", len(got), err)
	}
}

func TestChunksKeepRunes(t *testing.T) {
	got := chunks("héllo wörld ✓", 2)
	if strings.Join(got, "") != "héllo wörld ✓" {
		t.Fatalf("chunks lost text: %q", got)
	}
	for _, c := range got {
		if !utf8.ValidString(c) || len(c) > 4 {
			t.Fatalf("bad chunk %q in %q", c, got)
		}
	}
}
