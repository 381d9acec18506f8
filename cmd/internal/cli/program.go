package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// Program is one command-line program: a cobra root named Name whose
// subcommands its files register with Add from init functions.
type Program struct {
	Name  string // the root command's name, also the prefix of error lines
	Short string // the root command's one-line summary

	subcommands []func() *cobra.Command
}

// Add registers a subcommand constructor. Call it from init.
func (p *Program) Add(newCmd func() *cobra.Command) {
	p.subcommands = append(p.subcommands, newCmd)
}

// Root builds the root command with every registered subcommand. Bad flags
// are usage errors.
func (p *Program) Root() *cobra.Command {
	root := &cobra.Command{
		Use:           p.Name,
		Short:         p.Short,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return UsageErrorf("%v", err) })
	for _, newCmd := range p.subcommands {
		root.AddCommand(newCmd())
	}
	return root
}

// Execute runs the command line args and returns the exit status.
func (p *Program) Execute(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := p.Root()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	code := 2 // cobra's own errors (unknown command, wrong arguments) are usage errors
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		code = ec.ExitCode()
	}
	if msg := err.Error(); msg != "" {
		fmt.Fprintln(stderr, p.Name+":", msg)
	}
	return code
}

// Main runs the program on os.Args until it ends or SIGINT or SIGTERM
// cancels its context, then exits with its status.
func (p *Program) Main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := p.Execute(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
