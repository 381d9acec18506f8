package worker_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/execenv/sandbox"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/internal/ociimage/ociimagetest"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/store"
)

// A task whose spec names an image from a registry (in process, serving
// an image built from a static busybox) runs its shell in that image, not
// on the worker's system, while its file tools and grep keep working; a
// second task on the same image pulls nothing; an image outside the
// worker's policy.images is refused; a task naming none runs in the
// worker's default image.
func TestTaskRunsInItsEnvironmentImage(t *testing.T) {
	if err := sandbox.Available(); err != nil {
		testenv.SkipOrFatal(t, err.Error())
	}
	reg := ociimagetest.NewRegistry(t)
	byTag, byDigest := reg.Push(t, "tools/busybox:1", ociimagetest.Busybox(t, "marker from the image"))
	cacheDir := filepath.Join(testenv.SearchableTempDir(t), "images")
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Worker: func(_ int, c *worker.Config) {
		c.Sandbox = worker.SandboxOn
		c.Policy.Images = fleet.ImagePolicy{Allow: []string{reg.Host + "/tools"}, Default: byDigest}
		c.OutboundAllowPrivate = []string{"127.0.0.0/8"}
		c.ImageCache.Dir = cacheDir
	}})
	script := `cat /etc/marker; echo; busybox --help | head -1 | cut -c1-7; ` +
		`if test -e /usr/bin/git; then echo HOST-GIT; else echo no-git; fi; echo found-by-grep > notes.txt`
	spec := func(image string) fleet.TaskSpec {
		s := fleettest.Spec("in an image",
			fleettest.Step{Calls: []fleettest.Call{fleettest.Shell(script)}},
			fleettest.Step{Calls: []fleettest.Call{{Name: "read_file", Args: map[string]any{"file_path": "notes.txt"}},
				{Name: "grep", Args: map[string]any{"pattern": "found-by"}}}},
			fleettest.Step{Text: "report: {{results}}"})
		s.Environment.Image = image
		return s
	}
	res := succeeded(t, f.WaitDone(f.Submit(spec(byTag))))
	if want := "bwrap, network none, image " + byDigest; res.Sandbox != want {
		t.Errorf("result.sandbox %q, want %q", res.Sandbox, want)
	}
	for _, want := range []string{"marker from the image", "BusyBox", "no-git"} {
		if !strings.Contains(res.FinalText, want) {
			t.Errorf("the task's report lacks %q:\n%s", want, res.FinalText)
		}
	}
	if strings.Contains(res.FinalText, "HOST-GIT") {
		t.Errorf("the task saw the worker's /usr/bin/git:\n%s", res.FinalText)
	}
	if !strings.Contains(res.FinalText, "1 | found-by-grep") || !strings.Contains(res.FinalText, "\nnotes.txt") {
		t.Errorf("read_file and grep (files with matches) should both see the command's file:\n%s", res.FinalText)
	}
	blobs := reg.BlobGETs()
	if blobs == 0 {
		t.Fatal("the registry served no blob: the image was not pulled from it")
	}

	res = succeeded(t, f.WaitDone(f.Submit(spec(byDigest))))
	if !strings.Contains(res.FinalText, "marker from the image") {
		t.Errorf("the second task did not run in the image:\n%s", res.FinalText)
	}
	if got := reg.BlobGETs(); got != blobs {
		t.Errorf("the second task on the same image fetched %d more blobs, want none (the cache)", got-blobs)
	}

	outside := f.WaitDone(f.Submit(spec(reg.Host + "/other/app:1")))
	if r := fleettest.Result(t, outside); outside.State != store.TaskFailed || outside.Error != fleet.ReasonNotAllowed ||
		!strings.Contains(r.Error, "environment.image") {
		t.Errorf("an image outside policy.images: state %s, reason %s, error %q; want not_allowed naming environment.image",
			outside.State, outside.Error, r.Error)
	}

	res = succeeded(t, f.WaitDone(f.Submit(spec(""))))
	if !strings.Contains(res.FinalText, "marker from the image") || strings.Contains(res.FinalText, "HOST-GIT") {
		t.Errorf("a task naming no image should run in policy.images.default:\n%s", res.FinalText)
	}
}

// A task in an image with a Go toolchain runs the image's go command, at
// a path the worker's system does not have.
func TestTaskRunsGoFromItsImage(t *testing.T) {
	if err := sandbox.Available(); err != nil {
		testenv.SkipOrFatal(t, err.Error())
	}
	reg := ociimagetest.NewRegistry(t)
	bb, err := ociimagetest.Busybox(t, "go image").Layers()
	if err != nil {
		t.Fatal(err)
	}
	_, ref := reg.Push(t, "tools/go:1", ociimagetest.Image(t, []string{"PATH=/opt/go/bin:/bin"}, bb[0], ociimagetest.GoLayer(t)))
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Worker: func(_ int, c *worker.Config) {
		c.Sandbox = worker.SandboxOn
		c.Policy.Images = fleet.ImagePolicy{Allow: []string{reg.Host}}
		c.OutboundAllowPrivate = []string{"127.0.0.0/8"}
		c.ImageCache.Dir = filepath.Join(testenv.SearchableTempDir(t), "images")
	}})
	s := fleettest.Spec("go in an image", fleettest.Step{Calls: []fleettest.Call{fleettest.Shell(`command -v go; go version; test -e /usr/local/go || echo no-host-go`)}},
		fleettest.Step{Text: "report: {{results}}"})
	s.Environment.Image = ref
	res := succeeded(t, f.WaitDone(f.Submit(s)))
	for _, want := range []string{"/opt/go/bin/go\n", "go version go1.", "no-host-go"} {
		if !strings.Contains(res.FinalText, want) {
			t.Errorf("the report lacks %q:\n%s", want, res.FinalText)
		}
	}
}

// A task on a repository, in a Debian-shaped image with git (built in the
// test from this host's git and its libraries), runs the image's git, and
// its diff artifact, made by git in the image, holds its change.
func TestTaskInAnImageWithGitStoresItsDiff(t *testing.T) {
	if err := sandbox.Available(); err != nil {
		testenv.SkipOrFatal(t, err.Error())
	}
	repo := gitRepo(t)
	reg := ociimagetest.NewRegistry(t)
	_, ref := reg.Push(t, "debian/git:1", ociimagetest.DebianGit(t, "debian-shaped"))
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Worker: func(_ int, c *worker.Config) {
		c.Sandbox = worker.SandboxOn
		c.Policy.Images = fleet.ImagePolicy{Allow: []string{reg.Host}}
		c.OutboundAllowPrivate = []string{"127.0.0.0/8"}
		c.ImageCache.Dir = filepath.Join(testenv.SearchableTempDir(t), "images")
	}})
	s := fleettest.Spec("git in an image", fleettest.Step{Calls: []fleettest.Call{fleettest.Shell(
		`cat /etc/marker; echo; ls -l /bin | cut -c1; git --version; echo changed > README`)}},
		fleettest.Step{Text: "report: {{results}}"})
	s.Environment = fleet.Environment{Repo: repo, Ref: "v1", Image: ref}
	id := f.Submit(s)
	res := succeeded(t, f.WaitDone(id))
	for _, want := range []string{"debian-shaped", "\nl\n", "git version"} {
		if !strings.Contains(res.FinalText, want) {
			t.Errorf("the report lacks %q (the marker, /bin a link, git):\n%s", want, res.FinalText)
		}
	}
	diff, err := f.Store.GetArtifact(waitCtx(t), store.GetArtifactParams{TaskID: id, Kind: "diff"})
	if err != nil {
		t.Fatalf("no diff artifact of a task whose image has git: %v", err)
	}
	if !strings.Contains(string(diff.Content), "+changed") {
		t.Errorf("the diff lacks the change:\n%s", diff.Content)
	}
}
