package redteam

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// git runs git in dir with a fixed identity.
func git(ctx context.Context, dir string, args ...string) error {
	_, err := gitOutput(ctx, dir, args...)
	return err
}

func gitOutput(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "user.name=redteam", "-c", "user.email=redteam@agentfleet.invalid",
		"-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, oneLine(string(out)))
	}
	return string(out), nil
}

// gitRepo makes a repository at dir with one commit of a README.
func gitRepo(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# redteam fixture\n"), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "README.md"}, {"commit", "-q", "-m", "fixture"}} {
		if err := git(ctx, dir, args...); err != nil {
			return err
		}
	}
	return nil
}

// objectHashes maps each loose object file of a repository to the
// SHA-256 of its bytes.
func objectHashes(repo string) (map[string]string, error) {
	out := map[string]string{}
	root := filepath.Join(repo, ".git", "objects")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || len(filepath.Base(filepath.Dir(path))) != 2 {
			return err
		}
		sum, err := sha256File(path)
		out[path] = sum
		return err
	})
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("no loose objects in %s", repo)
	}
	return out, err
}

func sha256File(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:]), nil
}

// deliveredFiles lists the branches of a bare repository and the files of
// each.
func deliveredFiles(ctx context.Context, bare string) (files, branches []string, err error) {
	out, err := gitOutput(ctx, bare, "for-each-ref", "--format=%(refname:short)", "refs/heads")
	if err != nil {
		return nil, nil, err
	}
	branches = strings.Fields(out)
	for _, b := range branches {
		ls, err := gitOutput(ctx, bare, "ls-tree", "-r", "--name-only", b)
		if err != nil {
			return nil, nil, err
		}
		files = append(files, strings.Fields(ls)...)
	}
	return files, branches, nil
}
