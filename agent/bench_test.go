package agent_test

import (
	"bufio"
	"context"
	"fmt"
	"iter"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/tools"
)

// pingPong is an instant model: a tool call when the last message is from
// the user, a text answer after tool results.
type pingPong struct{ fakeClient }

func (p *pingPong) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	if req.Messages[len(req.Messages)-1].Role == llm.RoleTool {
		return response("done", llm.Usage{InputTokens: 10, OutputTokens: 2}), nil
	}
	return response("", llm.Usage{InputTokens: 10, OutputTokens: 2}, call("c", "echo", map[string]string{"text": "hi"})), nil
}

func (p *pingPong) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return streamOf(p.Complete(ctx, req))
}

// streamOf turns a whole response into a stream: one text delta, then finish.
func streamOf(resp *llm.Response, err error) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		if err != nil {
			yield(llm.StreamEvent{}, err)
			return
		}
		if t := resp.Text(); t != "" && !yield(llm.StreamEvent{Kind: llm.EventTextDelta, Delta: t}, nil) {
			return
		}
		yield(llm.StreamEvent{Kind: llm.EventFinish, Response: resp}, nil)
	}
}

// syntheticHistory is n turns of earlier work: user, assistant with a call,
// results, assistant text, repeated.
func syntheticHistory(n int) []agent.Turn {
	h := make([]agent.Turn, 0, n)
	for i := 0; len(h) < n; i++ {
		c := call(fmt.Sprintf("old%d", i), "echo", map[string]string{"text": "earlier"})
		for _, t := range []agent.Turn{
			{Kind: agent.TurnUser, Text: "please echo something for me"},
			{Kind: agent.TurnAssistant, ToolCalls: []llm.ToolCall{c}},
			{Kind: agent.TurnToolResults, Results: []llm.ToolResult{{ToolCallID: c.ID, Name: "echo", Content: "earlier"}}},
			{Kind: agent.TurnAssistant, Text: "I echoed it."},
		} {
			if len(h) < n {
				h = append(h, t)
			}
		}
	}
	return h
}

// BenchmarkLoopRound measures the loop's own cost for one input of one tool
// round (two model calls, one trivial tool) with an instant in-process
// model, at several history lengths. Session creation and a first input
// (which renders the prompt and converts the loaded history once) are not
// timed: the figure is the steady-state cost of a round.
func BenchmarkLoopRound(b *testing.B) {
	reg := tools.NewRegistry(echoTool(false))
	profile := &testProfile{reg: reg, window: 1 << 30}
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("history=%d", n), func(b *testing.B) {
			hist := syntheticHistory(n)
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				s, err := agent.New(agent.Config{Client: &pingPong{}, Profile: profile, Env: dirEnv{dir: b.TempDir()},
					History: hist, ID: "bench"})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Submit(context.Background(), "warm up"); err != nil { // builds the prompt and message cache
					b.Fatal(err)
				}
				b.StartTimer()
				if out, err := s.Submit(context.Background(), "echo hi"); err != nil || out.Rounds != 1 {
					b.Fatalf("%+v %v", out, err)
				}
				b.StopTimer()
				_ = s.Close()
				b.StartTimer()
			}
		})
	}
}

// slowModel answers after a fixed latency: rounds-1 tool calls, then text.
type slowModel struct {
	fakeClient
	latency time.Duration
	rounds  int
}

func (m *slowModel) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	select {
	case <-time.After(m.latency):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	calls := 0
	for _, msg := range req.Messages {
		if msg.Role == llm.RoleTool {
			calls++
		}
	}
	if calls >= m.rounds-1 {
		return response("finished", llm.Usage{}), nil
	}
	return response("", llm.Usage{}, call(fmt.Sprintf("c%d", calls), "echo", map[string]string{"text": "x"})), nil
}

func (m *slowModel) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return streamOf(m.Complete(ctx, req))
}

// BenchmarkConcurrentSessions runs 1,000 sessions in this process at once,
// each waiting on a simulated model with 2 s latency for 5 model rounds
// (4 tool rounds), and reports peak RSS (VmHWM, the whole test process) and
// peak goroutines. Run it with -benchtime=1x; it takes about 10 s.
func BenchmarkConcurrentSessions(b *testing.B) {
	const sessions, rounds = 1000, 5
	profile := &testProfile{reg: tools.NewRegistry(echoTool(false)), window: 1 << 30}
	model := &slowModel{latency: 2 * time.Second, rounds: rounds}
	env := dirEnv{dir: b.TempDir()}
	for b.Loop() {
		var peakG atomic.Int64
		stop := make(chan struct{})
		var sampler sync.WaitGroup
		sampler.Go(func() {
			t := time.NewTicker(50 * time.Millisecond)
			defer t.Stop()
			for {
				if g := int64(runtime.NumGoroutine()); g > peakG.Load() {
					peakG.Store(g)
				}
				select {
				case <-t.C:
				case <-stop:
					return
				}
			}
		})
		var wg sync.WaitGroup
		var failed atomic.Int32
		for range sessions {
			wg.Go(func() {
				s, err := agent.New(agent.Config{Client: model, Profile: profile, Env: env})
				if err != nil {
					failed.Add(1)
					return
				}
				defer func() { _ = s.Close() }()
				if out, err := s.Submit(context.Background(), "work"); err != nil || out.Turns != rounds {
					failed.Add(1)
				}
			})
		}
		wg.Wait()
		close(stop)
		sampler.Wait()
		if failed.Load() > 0 {
			b.Fatalf("%d sessions failed", failed.Load())
		}
		b.ReportMetric(float64(peakRSSKB())/1024, "peak-RSS-MB")
		b.ReportMetric(float64(peakG.Load()), "peak-goroutines")
	}
}

// peakRSSKB reads the process's resident-set high-water mark (Linux).
func peakRSSKB() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return n
		}
	}
	return -1
}
