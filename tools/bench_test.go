package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/internal/testenv"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/tools/patch"
)

// BenchmarkGrepGoroot compares the grep tool over the Go source tree with
// running rg directly on the same tree (compare the two ns/op figures).
func BenchmarkGrepGoroot(b *testing.B) {
	src := filepath.Join(goroot(b), "src")
	if _, err := os.Stat(src); err != nil {
		testenv.SkipOrFatal(b, "GOROOT/src not found")
	}
	const pattern = `func \(\w+ \*\w+\) Close\(`
	b.Run("tool", func(b *testing.B) {
		bd := setup(b)
		raw, _ := json.Marshal(args{"pattern": pattern, "path": src, "max_results": 1_000_000})
		for b.Loop() {
			res := bd.reg.Execute(context.Background(), llm.ToolCall{Name: "grep", Arguments: raw}, bd.env, ExecOptions{})
			if res.IsError {
				b.Fatal(res.Content)
			}
		}
	})
	b.Run("rg", func(b *testing.B) {
		if _, err := exec.LookPath("rg"); err != nil {
			testenv.SkipOrFatal(b, "rg not on PATH")
		}
		for b.Loop() {
			if out, err := exec.Command("rg", "--line-number", "--no-heading", pattern, src).Output(); err != nil || len(out) == 0 {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkShellTrue measures the shell tool's overhead for `true` against
// the environment's Exec alone.
func BenchmarkShellTrue(b *testing.B) {
	bd := setup(b)
	b.Run("tool", func(b *testing.B) {
		raw := json.RawMessage(`{"command":"true"}`)
		for b.Loop() {
			if res := bd.reg.Execute(context.Background(), llm.ToolCall{Name: "shell", Arguments: raw}, bd.env, ExecOptions{}); res.IsError {
				b.Fatal(res.Content)
			}
		}
	})
	b.Run("env", func(b *testing.B) {
		for b.Loop() {
			if _, err := bd.env.Exec(context.Background(), execenv.ExecRequest{Command: "true"}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// bigPatch returns a 10,000-line file and a patch of 50 hunks changing it.
func bigPatch() (string, string) {
	var file strings.Builder
	for i := range 10_000 {
		fmt.Fprintf(&file, "line %d: some code here\n", i)
	}
	var p strings.Builder
	p.WriteString("*** Begin Patch\n*** Update File: big.txt\n")
	for h := range 50 {
		at := 100 + h*195
		p.WriteString("@@\n")
		for i := at - 3; i < at; i++ {
			fmt.Fprintf(&p, " line %d: some code here\n", i)
		}
		fmt.Fprintf(&p, "-line %d: some code here\n+line %d: changed\n", at, at)
		for i := at + 1; i <= at+3; i++ {
			fmt.Fprintf(&p, " line %d: some code here\n", i)
		}
	}
	p.WriteString("*** End Patch\n")
	return file.String(), p.String()
}

// BenchmarkApplyPatch applies 50 hunks to a 10,000-line file: the pure
// parse+update, and the tool through a Local environment (read and write).
func BenchmarkApplyPatch(b *testing.B) {
	file, text := bigPatch()
	b.Run("pure", func(b *testing.B) {
		for b.Loop() {
			p, err := patch.Parse(text)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := patch.Update(file, p.Files[0].Chunks); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("tool", func(b *testing.B) {
		bd := setup(b)
		raw, _ := json.Marshal(ApplyPatchParams{Patch: text})
		for b.Loop() {
			b.StopTimer()
			bd.write(b, "big.txt", []byte(file))
			b.StartTimer()
			if res := bd.reg.Execute(context.Background(), llm.ToolCall{Name: "apply_patch", Arguments: raw}, bd.env, ExecOptions{}); res.IsError {
				b.Fatal(res.Content)
			}
		}
	})
}

// write50MB creates a 50 MB file of numbered 100-byte lines.
func write50MB(t testing.TB, bd *bundle) {
	t.Helper()
	line := bytes.Repeat([]byte("x"), 90)
	var buf bytes.Buffer
	for i := 0; buf.Len() < 50<<20; i++ {
		fmt.Fprintf(&buf, "%08d %s\n", i, line)
	}
	bd.write(t, "big.log", buf.Bytes())
}

// BenchmarkReadFileOffset50MB reads 100 lines deep inside a 50 MB file; the
// bytes allocated per op and the heap growth over the run show memory stays
// bounded (the file is streamed).
func BenchmarkReadFileOffset50MB(b *testing.B) {
	bd := setup(b)
	write50MB(b, bd)
	raw := json.RawMessage(`{"file_path":"big.log","offset":500000,"limit":100}`)
	b.ReportAllocs()
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak uint64
	for b.Loop() {
		res := bd.reg.Execute(context.Background(), llm.ToolCall{Name: "read_file", Arguments: raw}, bd.env, ExecOptions{})
		if res.IsError {
			b.Fatal(res.Content)
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse-min(ms.HeapInuse, base.HeapInuse))
	}
	b.ReportMetric(float64(peak)/(1<<20), "heap-growth-MB")
}

func TestReadFileOffsetBoundedMemory(t *testing.T) {
	bd := setup(t)
	write50MB(t, bd)
	raw := json.RawMessage(`{"file_path":"big.log","offset":500000,"limit":100}`)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res := bd.reg.Execute(context.Background(), llm.ToolCall{Name: "read_file", Arguments: raw}, bd.env, ExecOptions{})
	runtime.ReadMemStats(&after)
	if res.IsError || !strings.HasPrefix(res.Content, "500000 | 00499999 ") {
		t.Fatalf("content = %.100q", res.Content)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Fatalf("reading 100 lines of a 50 MB file allocated %d bytes; the file should be streamed", alloc)
	}
}
