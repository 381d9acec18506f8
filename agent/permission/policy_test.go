package permission

import (
	"strings"
	"testing"
)

func shell(cmd string) Call   { return Call{Tool: "shell", Kind: KindShell, Command: cmd} }
func edit(p ...string) Call   { return Call{Tool: "write_file", Kind: KindEdit, Paths: p} }
func read(p ...string) Call   { return Call{Tool: "read_file", Kind: KindRead, Paths: p} }
func other(tool string) Call  { return Call{Tool: tool, Kind: KindOther} }
func agentCall(t string) Call { return Call{Tool: t, Kind: KindAgent} }

func TestCheckRulesFirstMatchWins(t *testing.T) {
	p := Policy{Mode: ModeAsk, Rules: []Rule{
		{Tool: "shell", Pattern: "git push*", Action: Deny},
		{Tool: "shell", Pattern: "git *", Action: Allow},
		{Tool: "write_file", Pattern: "docs/*", Action: Allow},
		{Tool: "read_file", Pattern: "secrets/*", Action: Deny},
		{Tool: "mcp__*", Action: Deny},
	}}.WithDefaults()
	cases := []struct {
		call Call
		want Action
		rule string
	}{
		{shell("git status"), Allow, "rules[1]"},
		{shell("git push origin main"), Deny, "rules[0]"},
		{shell("  git log --oneline"), Allow, "rules[1]"},
		{shell("go test ./..."), Ask, "mode ask"},
		{edit("docs/a/b.md"), Allow, "rules[2]"},
		{edit("src/main.go"), Ask, "mode ask"},
		{read("src/main.go"), Allow, "mode ask"},
		{read("secrets/key"), Deny, "rules[3]"},
		{other("mcp__github__create_issue"), Deny, "rules[4]"},
		{other("deploy"), Ask, "mode ask"},
		{agentCall("spawn_agent"), Allow, "mode ask"},
	}
	for _, c := range cases {
		d := p.Check(c.call)
		if d.Action != c.want || d.Rule != c.rule {
			t.Errorf("%s %q %v: got %s by %q, want %s by %q", c.call.Tool, c.call.Command, c.call.Paths, d.Action, d.Rule, c.want, c.rule)
		}
	}
}

func TestCheckModes(t *testing.T) {
	kinds := []Call{read("a"), edit("a"), shell("ls"), other("x"), agentCall("wait")}
	want := map[Mode][]Action{
		ModeAllow:       {Allow, Allow, Allow, Allow, Allow},
		ModeAcceptEdits: {Allow, Allow, Ask, Ask, Allow},
		ModeAsk:         {Allow, Ask, Ask, Ask, Allow},
		ModeDeny:        {Allow, Deny, Deny, Deny, Allow},
		ModePlan:        {Allow, Deny, Deny, Deny, Allow},
	}
	for mode, actions := range want {
		p := Policy{Mode: mode}
		for i, c := range kinds {
			if got := p.Check(c).Action; got != actions[i] {
				t.Errorf("mode %s, %s: got %s, want %s", mode, c.Kind, got, actions[i])
			}
		}
	}
}

func TestPlanModeIgnoresAllowRules(t *testing.T) {
	p := Policy{Mode: ModePlan, Rules: []Rule{{Tool: "*", Action: Allow}}}
	d := p.Check(edit("main.go"))
	if d.Action != Deny || d.Rule != "mode plan" {
		t.Fatalf("got %+v", d)
	}
	for _, want := range []string{"plan mode", "reading files and searching work", "write_file"} {
		if !strings.Contains(d.Reason, want) {
			t.Errorf("reason %q lacks %q", d.Reason, want)
		}
	}
	if d := p.Check(read("main.go")); d.Action != Allow {
		t.Errorf("a read in plan mode: %+v", d)
	}
}

func TestProtectedPaths(t *testing.T) {
	p := Policy{Rules: []Rule{{Tool: "*", Action: Allow}}, Protected: []string{"/srv/data"}}.WithDefaults()
	for _, path := range []string{".git/config", "sub/.git/hooks/pre-commit", "node_modules/x/index.js", ".husky/pre-push", "/etc/passwd", "/usr/local/bin/x", "/srv/data/db"} {
		if d := p.Check(edit(path)); d.Action != Deny || !strings.HasPrefix(d.Rule, "protected ") {
			t.Errorf("edit of %s: %+v", path, d)
		}
		if d := p.Check(read(path)); d.Action != Allow {
			t.Errorf("read of %s: %+v", path, d)
		}
	}
	for _, path := range []string{".gitignore", "src/git/x.go", "/srv/database"} {
		if d := p.Check(edit(path)); d.Action != Allow {
			t.Errorf("edit of %s: %+v", path, d)
		}
	}
}

func TestDestructive(t *testing.T) {
	yes := map[string]string{
		"rm -rf /":                            "rm -rf of a broad path",
		"rm -rf ~":                            "rm -rf of a broad path",
		"cd x && rm -fr .":                    "rm -rf of a broad path",
		"sudo rm -r -f /usr":                  "rm -rf of a broad path",
		"rm --recursive --force $HOME":        "rm -rf of a broad path",
		"rm -Rf /home/me":                     "rm -rf of a broad path",
		"rm -rf *":                            "rm -rf of a broad path",
		"git push --force origin main":        "force push",
		"git push -f":                         "force push",
		"git push origin +main":               "force push",
		"git -C repo push --force-with-lease": "force push",
		"git reset --hard HEAD~3":             "hard reset",
		"git clean -fdx":                      "git clean -f",
		"chmod -R 777 .":                      "recursive chmod 777",
		"chmod 777 -R /var/www":               "recursive chmod 777",
		"psql -c 'DROP TABLE users'":          "drops a database object",
		"echo 'drop database prod;' | mysql":  "drops a database object",
		"mkfs.ext4 /dev/sdb1":                 "makes a file system",
		"dd if=/dev/zero of=/dev/sda":         "writes onto a device",
	}
	for cmd, want := range yes {
		if got := Destructive(cmd); got != want {
			t.Errorf("Destructive(%q) = %q, want %q", cmd, got, want)
		}
	}
	for _, cmd := range []string{"rm -rf build", "rm -rf ./node_modules", "rm -rf /tmp/work/x", "rm -r /", "rm -f *.o",
		"git push origin main", "git reset --soft HEAD~1", "git status", "chmod 777 file", "chmod -R 755 .", "echo drop", "ls -la /"} {
		if got := Destructive(cmd); got != "" {
			t.Errorf("Destructive(%q) = %q, want none", cmd, got)
		}
	}
}

func TestDestructiveIsAskedEvenWhenARuleAllows(t *testing.T) {
	p := Policy{Rules: []Rule{{Tool: "shell", Pattern: "git *", Action: Allow}}}.WithDefaults()
	d := p.Check(shell("git push --force"))
	if d.Action != Ask || d.Rule != "destructive: force push" {
		t.Fatalf("got %+v", d)
	}
	if d := (Policy{Destructive: Allow}).Check(shell("git push --force")); d.Action != Allow {
		t.Fatalf("destructive allow: %+v", d)
	}
	if d := (Policy{Destructive: Deny}).Check(shell("rm -rf /")); d.Action != Deny {
		t.Fatalf("destructive deny: %+v", d)
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		p     Policy
		field string
		has   string
	}{
		{Policy{Mode: "yolo"}, "mode", "plan"},
		{Policy{Rules: []Rule{{Tool: "shell", Action: Allow}, {Tool: "shell", Pattern: "git [abc", Action: Deny}}}, "rules[1].pattern", "'['"},
		{Policy{Rules: []Rule{{Tool: "shell", Action: "maybe"}}}, "rules[0].action", "allow, ask, deny"},
		{Policy{Destructive: "sometimes"}, "destructive", "ask"},
		{Policy{UnknownPaths: "never"}, "unknown_paths", "allow, ask, deny"},
		{Policy{Protected: []string{" "}}, "protected[0]", "empty"},
	}
	for _, c := range cases {
		err := c.p.Validate()
		if err == nil || err.Field != c.field || !strings.Contains(err.Reason, c.has) {
			t.Errorf("%+v: got %v, want field %s mentioning %q", c.p, err, c.field, c.has)
		}
	}
	if err := (Policy{Mode: ModePlan, Rules: []Rule{{Tool: "sh?ll", Pattern: "[!x]*", Action: Ask}}}).Validate(); err != nil {
		t.Errorf("valid policy: %v", err)
	}
}

func TestNarrows(t *testing.T) {
	op := Policy{Mode: ModeAsk}
	if err := (Policy{Mode: ModeAllow}).Narrows(op); err == nil || err.Field != "mode" || !strings.Contains(err.Reason, "wider") {
		t.Errorf("allow under ask: %v", err)
	}
	if err := (Policy{Mode: ModeAcceptEdits}).Narrows(op); err == nil {
		t.Error("accept_edits under ask was accepted")
	}
	if err := (Policy{Destructive: Allow}).Narrows(op); err == nil || err.Field != "destructive" {
		t.Errorf("destructive allow under the default ask: %v", err)
	}
	if err := (Policy{UnknownPaths: Allow}).Narrows(op); err == nil || err.Field != "unknown_paths" || !strings.Contains(err.Reason, "wider") {
		t.Errorf("unknown_paths allow under the default ask: %v", err)
	}
	if err := (Policy{UnknownPaths: Deny}).Narrows(op); err != nil {
		t.Errorf("unknown_paths deny under the default ask: %v", err)
	}
	for _, p := range []Policy{{}, {Mode: ModeAsk}, {Mode: ModeDeny}, {Mode: ModePlan, Destructive: Deny},
		{Rules: []Rule{{Tool: "*", Action: Allow}}}} {
		if err := p.Narrows(op); err != nil {
			t.Errorf("%+v under ask: %v", p, err)
		}
	}
}

func TestCheckerStrictestWins(t *testing.T) {
	op := Policy{Mode: ModeAllow, Rules: []Rule{{Tool: "shell", Pattern: "curl *", Action: Deny}}}
	task := Policy{Mode: ModeAsk, Rules: []Rule{{Tool: "shell", Action: Allow}}}
	k := NewChecker(op, task)
	if d := k.Check(shell("curl example.com")); d.Action != Deny || d.Rule != "rules[0]" {
		t.Errorf("operator deny: %+v", d)
	}
	if d := k.Check(shell("ls")); d.Action != Allow {
		t.Errorf("both allow: %+v", d)
	}
	if d := k.Check(edit("a.go")); d.Action != Ask || d.Rule != "mode ask" {
		t.Errorf("task asks for edits: %+v", d)
	}
	if d := k.Check(shell("git reset --hard")); d.Action != Ask {
		t.Errorf("destructive under the operator's default: %+v", d)
	}
	if k.Mode() != ModeAsk {
		t.Errorf("mode %s", k.Mode())
	}
	var none *Checker
	if d := none.Check(shell("rm -rf /")); d.Action != Allow {
		t.Errorf("nil checker: %+v", d)
	}
}

func TestSummarize(t *testing.T) {
	if s := Summarize(shell("go   test\n./..."), []byte(`{"command":"x"}`)); s != "go test ./..." {
		t.Errorf("shell: %q", s)
	}
	if s := Summarize(edit("a", "b"), nil); s != "a, b" {
		t.Errorf("paths: %q", s)
	}
	long := strings.Repeat("é", 300)
	if s := Summarize(shell(long), nil); len(s) > MaxSummary+len("…") || !strings.HasSuffix(s, "…") {
		t.Errorf("long: %d bytes", len(s))
	}
}

func unknownEdit(tool string) Call  { return Call{Tool: tool, Kind: KindEdit, PathsUnknown: true} }
func unknownOther(tool string) Call { return Call{Tool: tool, Kind: KindOther, PathsUnknown: true} }
func unknownRead(tool string) Call  { return Call{Tool: tool, Kind: KindRead, PathsUnknown: true} }

// A call that may write where the permission layer cannot see (an MCP
// tool, a custom tool that does not declare its paths) could write into a
// protected directory: under the operator's defaults it asks, whatever
// the mode, unless a rule names the tool.
func TestUnknownPathsAskUnlessARuleNamesTheTool(t *testing.T) {
	def := Policy{}.WithDefaults()
	for _, c := range []Call{unknownOther("mcp__fs__write"), unknownEdit("save_file")} {
		d := def.Check(c)
		if d.Action != Ask || d.Rule != "unknown paths" {
			t.Errorf("%s under the defaults: %+v", c.Tool, d)
		}
		for _, want := range []string{c.Tool, "does not say which files", ".git/", "a person must approve it", "rule that names it"} {
			if !strings.Contains(d.Reason, want) {
				t.Errorf("reason %q lacks %q", d.Reason, want)
			}
		}
	}
	// Reads whose paths are unknown run, as every read does.
	if d := def.Check(unknownRead("mcp__fs__read")); d.Action != Allow {
		t.Errorf("unknown read: %+v", d)
	}
	// Shell calls are decided by their command.
	if d := def.Check(Call{Tool: "shell", Kind: KindShell, Command: "ls", PathsUnknown: true}); d.Action != Allow {
		t.Errorf("shell: %+v", d)
	}
	p := Policy{Rules: []Rule{
		{Tool: "mcp__fs__*", Pattern: "docs/*", Action: Allow}, // cannot vouch for paths it does not see
		{Tool: "mcp__fs__*", Pattern: "secrets/*", Action: Deny},
		{Tool: "mcp__github__*", Action: Allow},
		{Tool: "mcp__notes__*", Pattern: "*.md", Action: Ask},
	}}.WithDefaults()
	cases := []struct {
		call Call
		want Action
		rule string
	}{
		{unknownOther("mcp__fs__write"), Deny, "rules[1]"},
		{unknownRead("mcp__fs__read"), Deny, "rules[1]"},
		{unknownOther("mcp__github__create_issue"), Allow, "rules[2]"},
		{unknownOther("mcp__notes__save"), Ask, "rules[3]"},
		{unknownOther("mcp__other__x"), Ask, "unknown paths"},
		{Call{Tool: "mcp__fs__write", Kind: KindOther, Paths: []string{"docs/a.md"}}, Allow, "rules[0]"},
	}
	for _, c := range cases {
		if d := p.Check(c.call); d.Action != c.want || d.Rule != c.rule {
			t.Errorf("%s %v: got %s by %q, want %s by %q", c.call.Tool, c.call.Paths, d.Action, d.Rule, c.want, c.rule)
		}
	}
	// The operator may refuse them outright, or (explicitly) let them run.
	if d := (Policy{UnknownPaths: Deny}).Check(unknownOther("x")); d.Action != Deny || !strings.Contains(d.Reason, "refused") {
		t.Errorf("unknown_paths deny: %+v", d)
	}
	if d := (Policy{UnknownPaths: Allow}).WithDefaults().Check(unknownOther("x")); d.Action != Allow {
		t.Errorf("unknown_paths allow: %+v", d)
	}
	// Plan mode refuses them as every write.
	if d := (Policy{Mode: ModePlan}).Check(unknownOther("x")); d.Action != Deny || d.Rule != "mode plan" {
		t.Errorf("plan: %+v", d)
	}
}

// A task's policy that leaves unknown_paths unset has no say: the
// operator's rule naming a tool lets its calls run. One that sets it
// narrows as any setting does.
func TestUnknownPathsNarrowing(t *testing.T) {
	op := Policy{Rules: []Rule{{Tool: "mcp__github__*", Action: Allow}}}
	if d := NewChecker(op, Policy{}).Check(unknownOther("mcp__github__create_issue")); d.Action != Allow {
		t.Errorf("operator's rule under an empty task policy: %+v", d)
	}
	// A task that refuses them narrows the operator's rule away, unless
	// its own rules name the tool.
	if d := NewChecker(op, Policy{UnknownPaths: Deny}).Check(unknownOther("mcp__github__create_issue")); d.Action != Deny || d.Rule != "unknown paths" {
		t.Errorf("task's unknown_paths deny: %+v", d)
	}
	task := Policy{UnknownPaths: Deny, Rules: []Rule{{Tool: "mcp__github__create_issue", Action: Allow}}}
	if d := NewChecker(op, task).Check(unknownOther("mcp__github__create_issue")); d.Action != Allow {
		t.Errorf("task's rule naming the tool: %+v", d)
	}
}

// A tool other than the edit tools that names its paths is held to the
// protected directories too.
func TestProtectedPathsHoldForEveryWriter(t *testing.T) {
	p := Policy{Rules: []Rule{{Tool: "*", Action: Allow}}}.WithDefaults()
	if d := p.Check(Call{Tool: "save_note", Kind: KindOther, Paths: []string{"x/.git/hooks/pre-commit"}}); d.Action != Deny || d.Rule != "protected .git/" {
		t.Errorf("other tool into .git: %+v", d)
	}
}
