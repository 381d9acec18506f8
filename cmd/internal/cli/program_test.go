package cli

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/spf13/cobra"
)

func TestExecuteExitStatus(t *testing.T) {
	p := &Program{Name: "prog"}
	p.Add(func() *cobra.Command {
		return &cobra.Command{Use: "fail", RunE: func(*cobra.Command, []string) error { return Failf("broke %d", 1) }}
	})
	p.Add(func() *cobra.Command {
		return &cobra.Command{Use: "usage", RunE: func(*cobra.Command, []string) error { return UsageErrorf("bad") }}
	})
	p.Add(func() *cobra.Command {
		return &cobra.Command{Use: "wrapped", RunE: func(*cobra.Command, []string) error {
			return errors.Join(errors.New("context"), &ExitError{Code: 3})
		}}
	})
	p.Add(func() *cobra.Command { return &cobra.Command{Use: "ok", Run: func(*cobra.Command, []string) {}} })
	for _, tt := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"ok"}, 0, ""},
		{[]string{"fail"}, 1, "prog: broke 1\n"},
		{[]string{"usage"}, 2, "prog: bad\n"},
		{[]string{"wrapped"}, 3, "prog: context\n\n"},
		{[]string{"nosuch"}, 2, "prog: unknown command \"nosuch\" for \"prog\"\n"},
		{[]string{"ok", "--nosuch"}, 2, "prog: unknown flag: --nosuch\n"},
	} {
		var stderr bytes.Buffer
		code := p.Execute(context.Background(), tt.args, nil, &bytes.Buffer{}, &stderr)
		if code != tt.code || stderr.String() != tt.stderr {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", tt.args, code, stderr.String(), tt.code, tt.stderr)
		}
	}
}
