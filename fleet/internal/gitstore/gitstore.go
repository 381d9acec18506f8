// Package gitstore is the fleet git store's wire: the tree tokens the
// dispatcher mints and checks, the names of what the store keeps, and the
// client a worker reaches the store with.
//
// The store (fleet/dispatcher gitstore.go) keeps one bare repository per
// task tree (the root task's id). What it holds, by ref:
//
//   - refs/agentfleet/base/KEY: the parent's files a traveling subagent
//     starts from (KEY: the spawn's worktree key);
//   - refs/agentfleet/state/TASK: the last files of task TASK pushed (a
//     parent at each spawn, park and merge; a subagent at its end: its
//     result).
//
// Every commit is a snapshot: the task's files as `git add --all` sees
// them, on top of the commit its workspace started from.
//
// Transfers are git bundles over plain HTTP (the choice is explained in
// docs/architecture.md, "Fleet git store"): a worker pushes a bundle of a
// ref, made in the task's sandbox, and fetches a bundle of a commit,
// optionally thin against one the workspace has. Every request carries a
// tree token: HMAC-SHA256 of the tree and an expiry under the
// dispatcher's key, which the dispatcher mints for a worker that shows
// the workers' credential and names a task of that tree. A token opens
// one tree's repository and nothing else, expires (DefaultTokenTTL), and
// lives only in the worker's memory: never in a spec, event, turn or log,
// and never in a sandbox.
package gitstore

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// DefaultTokenTTL is how long a tree token is good for.
const DefaultTokenTTL = 15 * time.Minute

// tokenVersion prefixes every tree token.
const tokenVersion = "agt1"

// Mint returns a token that opens tree's repository until now+ttl.
func Mint(key []byte, tree uuid.UUID, now time.Time, ttl time.Duration) string {
	exp := strconv.FormatInt(now.Add(ttl).Unix(), 10)
	return tokenVersion + "." + exp + "." + sign(key, tree, exp)
}

// ErrToken is the error of a token that does not open a tree.
var ErrToken = errors.New("the tree token is not valid for this tree or has expired; ask the dispatcher for a new one")

// Verify checks that token opens tree's repository at now.
func Verify(key []byte, tree uuid.UUID, token string, now time.Time) error {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || parts[0] != tokenVersion {
		return ErrToken
	}
	exp, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || now.Unix() > exp {
		return ErrToken
	}
	if !hmac.Equal([]byte(parts[2]), []byte(sign(key, tree, parts[1]))) {
		return ErrToken
	}
	return nil
}

func sign(key []byte, tree uuid.UUID, exp string) string {
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "agentfleet-gitstore\x00%s\x00%s", tree, exp)
	return hex.EncodeToString(m.Sum(nil))
}

// BaseRef is the store's ref of the tree a traveling subagent starts
// from; key is its spawn's worktree key.
func BaseRef(key string) string { return "base/" + key }

// StateRef is the store's ref of task's last pushed files.
func StateRef(task uuid.UUID) string { return "state/" + task.String() }

var refName = regexp.MustCompile(`^(base|state)/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// CheckRef says whether name is a ref the store keeps (BaseRef, StateRef).
func CheckRef(name string) error {
	if !refName.MatchString(name) {
		return fmt.Errorf("ref %q is not one the fleet git store keeps (base/<key> or state/<task id>)", name)
	}
	return nil
}

// IsCommitID reports whether s is a full git object id in lower-case hex.
func IsCommitID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
