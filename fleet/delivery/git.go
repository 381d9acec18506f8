package delivery

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"
)

// gitTimeout bounds one git command (a push of a large change included).
const gitTimeout = 10 * time.Minute

// gitRun runs git in dir with extra environment and returns its standard
// output, trimmed. Its error carries git's standard error.
func gitRun(ctx context.Context, dir string, env []string, stdin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=true", "LC_ALL=C")
	cmd.Env = append(cmd.Env, env...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return strings.TrimSpace(stdout.String()), &GitError{Command: "git " + args[0], Message: msg, err: err}
	}
	return strings.TrimSpace(stdout.String()), nil
}

// GitError is a git command that failed, with git's own message.
type GitError struct {
	Command string // "git push"
	Message string // its standard error
	err     error
}

func (e *GitError) Error() string { return e.Command + ": " + e.Message }
func (e *GitError) Unwrap() error { return e.err }

// remoteKind classifies a git remote URL.
type remoteKind int

const (
	remoteLocal remoteKind = iota // a path or file:// URL
	remoteHTTP
	remoteSSH
)

// classify says how git reaches remote, and its host ("" for a local one).
func classify(remote string) (remoteKind, string) {
	if u, err := url.Parse(remote); err == nil && u.Scheme != "" && len(u.Scheme) > 1 {
		switch u.Scheme {
		case "http", "https":
			return remoteHTTP, u.Host
		case "ssh", "git+ssh", "ssh+git":
			return remoteSSH, u.Hostname()
		}
		return remoteLocal, ""
	}
	// scp-like: [user@]host:path, with no slash before the colon.
	if i := strings.IndexByte(remote, ':'); i > 0 && !strings.Contains(remote[:i], "/") {
		host := remote[:i]
		if j := strings.LastIndexByte(host, '@'); j >= 0 {
			host = host[j+1:]
		}
		return remoteSSH, host
	}
	return remoteLocal, ""
}

// redact drops what may be a secret from a remote URL: an HTTP(S) URL's
// user information (a token is sometimes given as the user), any password.
func redact(remote string) string {
	u, err := url.Parse(remote)
	if err != nil || u.User == nil || u.Scheme == "" {
		return remote
	}
	if u.Scheme == "http" || u.Scheme == "https" {
		u.User = nil
	} else {
		u.User = url.User(u.User.Username())
	}
	return u.String()
}

// authEnv returns the environment that lets git reach remote with the
// spec's credentials.
func authEnv(remote string, refs refs, creds Credentials) ([]string, error) {
	kind, host := classify(remote)
	switch kind {
	case remoteHTTP:
		if refs.token == "" {
			return nil, nil
		}
		t, _ := creds.Token(refs.token)
		if !t.mayReach(host) {
			return nil, fmt.Errorf("token %q may not be sent to %s: add the host to delivery.tokens.%s.hosts on the workers, or push elsewhere", refs.token, host, refs.token)
		}
		secret, err := t.secret()
		if err != nil {
			return nil, fmt.Errorf("token %q: %w", refs.token, err)
		}
		u, _ := url.Parse(remote)
		basic := base64.StdEncoding.EncodeToString([]byte(t.username() + ":" + secret))
		return []string{"GIT_CONFIG_COUNT=1",
			"GIT_CONFIG_KEY_0=http." + u.Scheme + "://" + u.Host + "/.extraHeader",
			"GIT_CONFIG_VALUE_0=Authorization: Basic " + basic}, nil
	case remoteSSH:
		ssh := []string{"ssh", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes"}
		if refs.sshKey != "" {
			k, _ := creds.SSHKey(refs.sshKey)
			if k.KeyFile != "" {
				ssh = append(ssh, "-i", shellQuote(k.KeyFile), "-o", "IdentitiesOnly=yes")
			}
			if k.KnownHostsFile != "" {
				ssh = append(ssh, "-o", "UserKnownHostsFile="+shellQuote(k.KnownHostsFile))
			}
		}
		return []string{"GIT_SSH_COMMAND=" + strings.Join(ssh, " ")}, nil
	}
	return nil, nil
}

// shellQuote quotes s for the shell git runs GIT_SSH_COMMAND with.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
