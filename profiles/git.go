package profiles

import (
	"bufio"
	"context"
	"strings"
	"time"

	"github.com/agentfleet/agentfleet/execenv"
)

// GitSnapshot is the repository state at session start, as the system
// prompt shows it.
type GitSnapshot struct {
	IsRepo        bool
	Root          string
	Branch        string
	Modified      int
	Untracked     int
	RecentCommits []string // "<short hash> <subject>", newest first
}

// gitScript prints the snapshot in one round trip: sections separated by
// marker lines, nothing at all outside a repository.
const gitScript = `git rev-parse --is-inside-work-tree >/dev/null 2>&1 || exit 0
echo "@root"; git rev-parse --show-toplevel
echo "@branch"; git branch --show-current 2>/dev/null || git rev-parse --short HEAD 2>/dev/null
echo "@status"; git status --porcelain 2>/dev/null
echo "@log"; git log --oneline -n 10 2>/dev/null
true`

// snapshotGit runs git through env. A missing git or a failure gives a
// snapshot with IsRepo false; the prompt then says so. A local working
// directory with no ".git" above it starts no process at all.
func snapshotGit(ctx context.Context, env execenv.Environment) GitSnapshot {
	if !execenv.MayBeGitRepo(ctx, env) {
		return GitSnapshot{}
	}
	res, err := env.Exec(ctx, execenv.ExecRequest{Command: gitScript, Timeout: 10 * time.Second})
	if err != nil || res.ExitCode != 0 || res.Stdout == "" {
		return GitSnapshot{}
	}
	return parseGit(res.Stdout)
}

func parseGit(out string) GitSnapshot {
	g := GitSnapshot{IsRepo: true}
	section := ""
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "@") {
			section = line[1:]
			continue
		}
		switch section {
		case "root":
			g.Root = strings.TrimSpace(line)
		case "branch":
			g.Branch = strings.TrimSpace(line)
		case "status":
			if strings.HasPrefix(line, "??") {
				g.Untracked++
			} else if strings.TrimSpace(line) != "" {
				g.Modified++
			}
		case "log":
			if line = strings.TrimSpace(line); line != "" {
				g.RecentCommits = append(g.RecentCommits, line)
			}
		}
	}
	return g
}
