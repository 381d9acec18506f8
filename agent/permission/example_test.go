package permission_test

import (
	"fmt"

	"github.com/agentfleet/agentfleet/agent/permission"
)

// An operator allows everything (asking about destructive commands, the
// default); a task narrows that: it asks about edits and denies pushes.
func Example() {
	operator := permission.Policy{Rules: []permission.Rule{{Tool: "shell", Pattern: "git *", Action: permission.Allow}}}
	task := permission.Policy{Mode: permission.ModeAsk, Rules: []permission.Rule{{Tool: "shell", Pattern: "git push*", Action: permission.Deny}}}
	if err := task.Narrows(operator); err != nil {
		fmt.Println("refused:", err)
		return
	}
	k := permission.NewChecker(operator, task)
	for _, c := range []permission.Call{
		{Tool: "read_file", Kind: permission.KindRead, Paths: []string{"main.go"}},
		{Tool: "write_file", Kind: permission.KindEdit, Paths: []string{"main.go"}},
		{Tool: "write_file", Kind: permission.KindEdit, Paths: []string{".git/config"}},
		{Tool: "shell", Kind: permission.KindShell, Command: "git reset --hard"},
		{Tool: "shell", Kind: permission.KindShell, Command: "git push origin main"},
	} {
		d := k.Check(c)
		subject := c.Command
		if subject == "" {
			subject = c.Paths[0]
		}
		fmt.Printf("%-10s %-19s %-5s by %s\n", c.Tool, subject, d.Action, d.Rule)
	}
	// Output:
	// read_file  main.go             allow by mode allow
	// write_file main.go             ask   by mode ask
	// write_file .git/config         deny  by protected .git/
	// shell      git reset --hard    ask   by destructive: hard reset
	// shell      git push origin main deny  by rules[0]
}
