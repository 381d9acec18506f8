package execenv

import (
	"context"
	"log/slog"
	"time"
)

// Logging wraps env so that commands (command, exit code, duration, timeout)
// and file changes are logged to logger (slog.Default() when nil). Reads are
// logged at debug level only when they fail.
func Logging(env Environment, logger *slog.Logger) Environment {
	if logger == nil {
		logger = slog.Default()
	}
	return logging{Environment: env, log: logger}
}

type logging struct {
	Environment
	log *slog.Logger
}

func (l logging) Exec(ctx context.Context, req ExecRequest) (ExecResult, error) {
	l.log.InfoContext(ctx, "exec", slog.String("command", req.Command), slog.String("dir", req.Dir))
	res, err := l.Environment.Exec(ctx, req)
	if err != nil {
		l.log.WarnContext(ctx, "exec failed", slog.String("command", req.Command), slog.Any("error", err))
		return res, err
	}
	l.log.InfoContext(ctx, "exec done", slog.String("command", req.Command), slog.Int("exit_code", res.ExitCode),
		slog.Duration("duration", res.Duration), slog.Bool("timed_out", res.TimedOut), slog.Bool("canceled", res.Canceled))
	return res, nil
}

func (l logging) WriteFile(ctx context.Context, path string, data []byte) error {
	return l.change(ctx, "write", path, func() error { return l.Environment.WriteFile(ctx, path, data) }, slog.Int("bytes", len(data)))
}

func (l logging) Remove(ctx context.Context, path string) error {
	return l.change(ctx, "remove", path, func() error { return l.Environment.Remove(ctx, path) })
}

func (l logging) Rename(ctx context.Context, from, to string) error {
	return l.change(ctx, "rename", from, func() error { return l.Environment.Rename(ctx, from, to) }, slog.String("to", to))
}

func (l logging) ReadFile(ctx context.Context, path string) ([]byte, error) {
	data, err := l.Environment.ReadFile(ctx, path)
	if err != nil {
		l.log.DebugContext(ctx, "read failed", slog.String("path", path), slog.Any("error", err))
	}
	return data, err
}

// change runs one file change and logs it with its outcome.
func (l logging) change(ctx context.Context, op, path string, fn func() error, attrs ...slog.Attr) error {
	start := time.Now()
	err := fn()
	attrs = append(attrs, slog.String("path", path), slog.Duration("duration", time.Since(start)))
	if err != nil {
		l.log.LogAttrs(ctx, slog.LevelWarn, op+" failed", append(attrs, slog.Any("error", err))...)
		return err
	}
	l.log.LogAttrs(ctx, slog.LevelInfo, op, attrs...)
	return nil
}
