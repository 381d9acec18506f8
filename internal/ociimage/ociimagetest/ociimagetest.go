// Package ociimagetest runs a real OCI registry in process (go-containerregistry's
// pkg/registry on a loopback HTTP server) and builds images for it in the test:
// from files given in the test, or from the static busybox of Debian's
// busybox-static package. No Docker daemon is involved.
package ociimagetest

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"log"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/agentfleet/agentfleet/internal/testenv"
)

// BusyboxPath is where Debian's busybox-static puts its binary.
const BusyboxPath = "/bin/busybox"

// Loopback is the private prefix a cache must allow to reach Registry.
var Loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// Registry is a registry serving on loopback for one test.
type Registry struct {
	// Host is "127.0.0.1:port", the registry part of references.
	Host     string
	blobGETs atomic.Int64
	requests atomic.Int64
	corrupt  atomic.Value // string: the digest of the blob served corrupted
}

// CorruptBlob makes the registry serve the blob of digest ("sha256:...")
// from now on with its last byte changed, as a tampering mirror would.
func (r *Registry) CorruptBlob(digest string) { r.corrupt.Store(digest) }

// NewRegistry starts a registry that lives as long as t.
func NewRegistry(t testing.TB) *Registry {
	t.Helper()
	r := &Registry{}
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.requests.Add(1)
		if req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/blobs/") {
			r.blobGETs.Add(1)
			if d, _ := r.corrupt.Load().(string); d != "" && strings.HasSuffix(req.URL.Path, "/"+d) {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				body := rec.Body.Bytes()
				if len(body) > 0 {
					body[len(body)-1] ^= 0xff
				}
				maps.Copy(w.Header(), rec.Header())
				w.WriteHeader(rec.Code)
				_, _ = w.Write(body)
				return
			}
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.Host = strings.TrimPrefix(srv.URL, "http://")
	return r
}

// BlobGETs counts the blobs fetched so far (layers and configurations).
func (r *Registry) BlobGETs() int64 { return r.blobGETs.Load() }

// Requests counts every request so far.
func (r *Registry) Requests() int64 { return r.requests.Load() }

// Push stores img as repo:tag ("name:tag", without the host) and returns
// the reference by tag and the one by digest.
func (r *Registry) Push(t testing.TB, repoTag string, img v1.Image) (byTag, byDigest string) {
	t.Helper()
	ref, err := name.ParseReference(r.Host + "/" + repoTag)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return ref.Name(), ref.Context().Name() + "@" + d.String()
}

// File is one entry of a layer built by Layer.
type File struct {
	Name string
	Body string
	Mode int64 // 0: 0644 (0755 for directories)
	// Type is a tar type flag (tar.TypeReg when 0); Link is a link's target.
	Type byte
	Link string
}

// Layer is a gzip-compressed layer of files, in order.
func Layer(t testing.TB, files ...File) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f.Name, Mode: f.Mode, Typeflag: f.Type, Linkname: f.Link, Size: int64(len(f.Body))}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		if h.Mode == 0 {
			h.Mode = 0o644
			if h.Typeflag == tar.TypeDir {
				h.Mode = 0o755
			}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			if _, err := io.WriteString(tw, f.Body); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Image is an image of layers (bottom first) with env as its environment.
func Image(t testing.TB, env []string, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Config.Env = env
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	return img
}

// BusyboxApplets are the commands Busybox links to busybox.
var BusyboxApplets = []string{"sh", "ls", "cat", "echo", "id", "touch", "mkdir", "rm", "grep", "pwd", "env", "test", "stat", "true", "false"}

// Busybox is an image with the host's static busybox as /bin/busybox,
// links to it for BusyboxApplets, /etc/marker holding marker, and
// PATH=/bin. A machine without a static busybox skips the test (fails it
// under AGENTFLEET_REQUIRE_INTEGRATION=1).
func Busybox(t testing.TB, marker string) v1.Image {
	t.Helper()
	bin := StaticBusybox(t)
	files := []File{{Name: "bin/", Type: tar.TypeDir}, {Name: "bin/busybox", Body: string(bin), Mode: 0o755},
		{Name: "etc/", Type: tar.TypeDir}, {Name: "etc/marker", Body: marker}, {Name: "tmp/", Type: tar.TypeDir, Mode: 0o1777}}
	for _, a := range BusyboxApplets {
		files = append(files, File{Name: "bin/" + a, Type: tar.TypeSymlink, Link: "busybox"})
	}
	return Image(t, []string{"PATH=/bin"}, Layer(t, files...))
}

// GoLayer is a layer with the go command of the Go toolchain running the
// test, statically linked as Go's releases are, at /opt/go/bin/go (with
// the empty /opt/go/pkg/tool by which it finds its GOROOT): enough for
// `go version` and `go env` in an image. A test without it skips (fails
// under AGENTFLEET_REQUIRE_INTEGRATION=1).
func GoLayer(t testing.TB) v1.Layer {
	t.Helper()
	path, err := exec.LookPath("go")
	if err == nil {
		path, err = filepath.EvalSymlinks(path)
	}
	if err != nil {
		testenv.SkipOrFatal(t, "no go command on PATH to put in a test image")
	}
	return Layer(t, File{Name: "opt/go/bin/go", Body: string(staticELF(t, path, "the go command")), Mode: 0o755},
		File{Name: "opt/go/pkg/tool/", Type: tar.TypeDir})
}

// DebianGit is a Debian-shaped image built from this host's files: a
// merged /usr (/bin, /lib and /lib64 are links into it), the static
// busybox with its applets, and the host's git with the shared libraries
// and loader ldd names for it, so that a task's git (the diff artifact,
// worktrees) runs in the image. A host without git, ldd or a static
// busybox skips the test (fails it under AGENTFLEET_REQUIRE_INTEGRATION=1).
func DebianGit(t testing.TB, marker string) v1.Image {
	t.Helper()
	git, err := exec.LookPath("git")
	if err == nil {
		git, err = filepath.EvalSymlinks(git)
	}
	if err != nil {
		testenv.SkipOrFatal(t, "no git on this host to put in a test image")
	}
	out, err := exec.Command("ldd", git).Output()
	if err != nil {
		testenv.SkipOrFatal(t, fmt.Sprintf("ldd %s: %v (a Debian host has it in libc-bin)", git, err))
	}
	files := []File{{Name: "usr/", Type: tar.TypeDir}, {Name: "usr/bin/", Type: tar.TypeDir}, {Name: "usr/lib/", Type: tar.TypeDir},
		{Name: "usr/lib64/", Type: tar.TypeDir}, {Name: "bin", Type: tar.TypeSymlink, Link: "usr/bin"},
		{Name: "lib", Type: tar.TypeSymlink, Link: "usr/lib"}, {Name: "lib64", Type: tar.TypeSymlink, Link: "usr/lib64"},
		{Name: "etc/", Type: tar.TypeDir}, {Name: "etc/marker", Body: marker}, {Name: "tmp/", Type: tar.TypeDir, Mode: 0o1777},
		{Name: "usr/bin/busybox", Body: string(StaticBusybox(t)), Mode: 0o755}, {Name: "usr/bin/git", Body: string(readFile(t, git)), Mode: 0o755}}
	for _, a := range BusyboxApplets {
		files = append(files, File{Name: "usr/bin/" + a, Type: tar.TypeSymlink, Link: "busybox"})
	}
	seen := map[string]bool{}
	for line := range strings.SplitSeq(string(out), "\n") {
		// "libz.so.1 => /lib/x86_64-linux-gnu/libz.so.1 (0x...)" or "/lib64/ld-linux-x86-64.so.2 (0x...)"
		fields := strings.Fields(line)
		var lib string
		switch {
		case len(fields) >= 3 && fields[1] == "=>":
			lib = fields[2]
		case len(fields) >= 1 && strings.HasPrefix(fields[0], "/"):
			lib = fields[0]
		}
		if !strings.HasPrefix(lib, "/") || seen[lib] {
			continue
		}
		seen[lib] = true
		name := strings.TrimPrefix(lib, "/")
		if !strings.HasPrefix(name, "usr/") {
			name = "usr/" + name // merged /usr: /lib/x is /usr/lib/x
		}
		files = append(files, File{Name: name, Body: string(readFile(t, lib)), Mode: 0o755})
	}
	return Image(t, []string{"PATH=/usr/local/bin:/usr/bin:/bin"}, Layer(t, files...))
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// StaticBusybox is the content of the host's statically linked busybox.
func StaticBusybox(t testing.TB) []byte {
	t.Helper()
	return staticELF(t, BusyboxPath, "no static busybox at "+BusyboxPath+": install Debian's busybox-static (apt-get install busybox-static)")
}

// staticELF is the content of the statically linked executable at path;
// missing says what to do when it is not one.
func staticELF(t testing.TB, path, missing string) []byte {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		testenv.SkipOrFatal(t, missing+": "+err.Error())
		return nil
	}
	defer func() { _ = f.Close() }()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			testenv.SkipOrFatal(t, path+" is linked dynamically: "+missing)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
