package permission

import (
	"path"
	"regexp"
	"strings"
)

// destructivePatterns are commands that destroy work or data whatever their
// arguments, each with the label a decision names.
var destructivePatterns = []struct {
	label string
	re    *regexp.Regexp
}{
	{"force push", regexp.MustCompile(`\bgit\b[^;&|\n]*\bpush\b[^;&|\n]*(\s--force\b|\s-[a-zA-Z]*f[a-zA-Z]*\b|\s\+\S+)`)},
	{"hard reset", regexp.MustCompile(`\bgit\b[^;&|\n]*\breset\b[^;&|\n]*\s--hard\b`)},
	{"git clean -f", regexp.MustCompile(`\bgit\b[^;&|\n]*\bclean\b[^;&|\n]*\s(-[a-zA-Z]*f[a-zA-Z]*|--force)\b`)},
	{"recursive chmod 777", regexp.MustCompile(`\bchmod\b[^;&|\n]*\s(-[a-zA-Z]*R|--recursive)\b[^;&|\n]*\s(0?777|a\+rwx)\b|\bchmod\b[^;&|\n]*\s(0?777|a\+rwx)\b[^;&|\n]*\s(-[a-zA-Z]*R|--recursive)\b`)},
	{"drops a database object", regexp.MustCompile(`(?i)\b(drop\s+(table|database|schema)|truncate\s+table)\b`)},
	{"makes a file system", regexp.MustCompile(`\bmkfs(\.\w+)?\b`)},
	{"writes onto a device", regexp.MustCompile(`\bdd\b[^;&|\n]*\bof=/dev/`)},
}

// Destructive returns a short label when command looks destructive ("force
// push", "rm -rf of a broad path"), else "". It reads every part of a
// compound command (;, &&, ||, |, newlines).
func Destructive(command string) string {
	for _, p := range destructivePatterns {
		if p.re.MatchString(command) {
			return p.label
		}
	}
	for _, part := range splitCommands(command) {
		if broadRemove(strings.Fields(part)) {
			return "rm -rf of a broad path"
		}
	}
	return ""
}

// splitCommands cuts a compound command at its separators.
func splitCommands(command string) []string {
	return strings.FieldsFunc(command, func(r rune) bool {
		return r == ';' || r == '&' || r == '|' || r == '\n' || r == '(' || r == ')' || r == '`'
	})
}

// broadRemove reports whether args (one simple command) is an rm that is
// both recursive and forced and names a broad path.
func broadRemove(args []string) bool {
	i := 0
	for i < len(args) && (args[i] == "sudo" || strings.Contains(args[i], "=")) {
		i++ // sudo, VAR=value prefixes
	}
	if i >= len(args) || path.Base(args[i]) != "rm" {
		return false
	}
	recursive, force, broad := false, false, false
	for _, a := range args[i+1:] {
		switch {
		case a == "--recursive":
			recursive = true
		case a == "--force":
			force = true
		case strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--"):
			recursive = recursive || strings.ContainsAny(a, "rR")
			force = force || strings.Contains(a, "f")
		default:
			broad = broad || broadPath(strings.Trim(a, `"'`))
		}
	}
	return recursive && force && broad
}

// broadPath reports whether p names a lot: the root, the home directory,
// the current or parent directory, everything in one of them, a variable
// (which may be empty or anything), a top-level directory (/usr, /home) or
// a home (/home/me, /Users/me, /root).
func broadPath(p string) bool {
	switch p {
	case "/", "/*", "~", "~/", "~/*", ".", "./", "./*", "..", "../", "../*", "*", ".*":
		return true
	}
	if strings.HasPrefix(p, "$") {
		return true
	}
	if !strings.HasPrefix(p, "/") {
		return false
	}
	parts := strings.Split(strings.Trim(path.Clean(strings.TrimSuffix(p, "/*")), "/"), "/")
	switch {
	case len(parts) <= 1:
		return true
	case len(parts) == 2:
		return parts[0] == "home" || parts[0] == "Users"
	}
	return false
}
