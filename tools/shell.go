package tools

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentfleet/agentfleet/execenv"
)

//go:embed shell.md
var shellDescription string

// ShellParams are the arguments of the shell tool.
type ShellParams struct {
	Command     string `json:"command"`
	TimeoutMs   int    `json:"timeout_ms,omitempty"`
	Description string `json:"description,omitempty"`
	Workdir     string `json:"workdir,omitempty"`
	// TimeoutHint, when set, replaces the timeout message's advice to
	// retry with timeout_ms (execenv.TimeoutRetryHint): for a shell whose
	// timeout parameter has another name, or that has none. Not an argument.
	TimeoutHint string `json:"-"`
}

const shellSchema = `{
  "type": "object",
  "properties": {
    "command": {"type": "string", "minLength": 1, "description": "The command line, run with bash -c."},
    "timeout_ms": {"type": "integer", "minimum": 1, "description": "Timeout in milliseconds (default {default_ms}, at most {max_ms})."},
    "description": {"type": "string", "description": "A few words saying what the command does."},
    "workdir": {"type": "string", "description": "Directory to run in; the working directory when omitted."}
  },
  "required": ["command"],
  "additionalProperties": false
}`

// Shell returns the core shell tool. Its description and schema state the
// session's default and maximum timeouts (Settled; execenv's defaults
// until Registry.Settle).
func Shell() Tool {
	return Settled(func(s Settings) Tool {
		return Typed(coreTool("shell", s.FillTimeouts(shellDescription, execenv.DefaultTimeout),
			s.FillTimeouts(shellSchema, execenv.DefaultTimeout), true, nil), RunShell)
	})
}

// RunShell runs p.Command through call.Env and formats exit code, duration
// and output. The timeout is p.TimeoutMs, else the session default, capped
// by the session maximum. Output streams to call.OnOutput as it arrives,
// in chunks that never split a UTF-8 sequence. A non-zero exit status or a
// timeout gives an error output (the text is the same).
func RunShell(ctx context.Context, call Call, p ShellParams) (Output, error) {
	res, err := ExecShell(ctx, call, p)
	if err != nil {
		return Output{}, err
	}
	if res.TimedOut && p.TimeoutHint != "" {
		res.Stderr = replaceLast(res.Stderr, execenv.TimeoutRetryHint, p.TimeoutHint)
	}
	return Output{Text: FormatExec(res), IsError: res.ExitCode != 0 || res.TimedOut || res.Canceled}, nil
}

// replaceLast replaces the last occurrence of old in s (the timeout
// message comes after whatever the command printed).
func replaceLast(s, old, new string) string {
	i := strings.LastIndex(s, old)
	if i < 0 {
		return s
	}
	return s[:i] + new + s[i+len(old):]
}

// ExecShell runs the command as RunShell does and returns the raw result,
// for variants that format it their own way.
func ExecShell(ctx context.Context, call Call, p ShellParams) (execenv.ExecResult, error) {
	if strings.TrimSpace(p.Command) == "" {
		return execenv.ExecResult{}, fmt.Errorf("command is empty; pass the command line to run")
	}
	req := execenv.ExecRequest{Command: p.Command, Timeout: shellTimeout(p.TimeoutMs, call.Settings), Dir: p.Workdir}
	if call.OnOutput != nil {
		req.OnOutput = streamer(call.OnOutput)
	}
	res, err := call.Env.Exec(ctx, req)
	if err != nil {
		return res, fmt.Errorf("the command could not be started: %w", err)
	}
	return res, nil
}

// shellTimeout resolves the timeout of one call from the session settings.
func shellTimeout(requestedMs int, s Settings) time.Duration {
	ms := requestedMs
	if ms <= 0 {
		ms = s.DefaultCommandTimeoutMs
	}
	if ms <= 0 {
		ms = int(execenv.DefaultTimeout / time.Millisecond)
	}
	maxMs := s.MaxCommandTimeoutMs
	if maxMs <= 0 {
		maxMs = int(execenv.MaxTimeout / time.Millisecond)
	}
	return time.Duration(min(ms, maxMs)) * time.Millisecond
}

// FormatExec renders a command result for the model: exit code, duration,
// then stdout and stderr (invalid UTF-8 replaced).
func FormatExec(res execenv.ExecResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Exit code: %d\nDuration: %s\n", res.ExitCode, res.Duration.Round(time.Millisecond))
	if res.Canceled {
		b.WriteString("The command was canceled before it finished.\n")
	}
	if res.OmittedBytes > 0 {
		fmt.Fprintf(&b, "Note: %d bytes from the middle of the output were not kept.\n", res.OmittedBytes)
	}
	stdout := strings.ToValidUTF8(res.Stdout, "\uFFFD")
	stderr := strings.ToValidUTF8(res.Stderr, "\uFFFD")
	switch {
	case stdout == "" && stderr == "":
		b.WriteString("Output: (none)")
	case stderr == "":
		b.WriteString("Output:\n" + stdout)
	case stdout == "":
		b.WriteString("Output (stderr):\n" + stderr)
	default:
		b.WriteString("Output:\n" + stdout)
		if !strings.HasSuffix(stdout, "\n") {
			b.WriteByte('\n')
		}
		b.WriteString("Stderr:\n" + stderr)
	}
	return b.String()
}

// streamer adapts a string callback to execenv's chunk callback, holding
// back an incomplete UTF-8 sequence at the end of a chunk until the rest
// arrives, per stream.
func streamer(on func(string)) func(execenv.OutputStream, []byte) {
	pending := map[execenv.OutputStream][]byte{}
	return func(s execenv.OutputStream, chunk []byte) {
		buf := append(pending[s], chunk...)
		cut := completeUTF8(buf)
		pending[s] = append([]byte(nil), buf[cut:]...)
		if cut > 0 {
			on(string(buf[:cut]))
		}
	}
}

// completeUTF8 returns the length of the longest prefix of b that does not
// end inside a multi-byte sequence that may still be completed.
func completeUTF8(b []byte) int {
	for back := 1; back <= utf8.UTFMax-1 && back <= len(b); back++ {
		c := b[len(b)-back]
		if c < utf8.RuneSelf {
			return len(b)
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-back:]) {
				return len(b) - back
			}
			return len(b)
		}
	}
	return len(b)
}
