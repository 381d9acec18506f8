package ociimage_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentfleet/agentfleet/internal/ociimage"
	"github.com/agentfleet/agentfleet/internal/ociimage/ociimagetest"
	"github.com/agentfleet/agentfleet/internal/outbound"
)

// blobCounter wraps the outbound guard's transport and counts the blob
// GETs the cache makes, by the digest the path names.
type blobCounter struct {
	next http.RoundTripper
	mu   sync.Mutex
	gets map[string]int
}

func (b *blobCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	if i := strings.LastIndex(req.URL.Path, "/blobs/"); req.Method == http.MethodGet && i >= 0 {
		b.mu.Lock()
		b.gets[req.URL.Path[i+len("/blobs/"):]]++
		b.mu.Unlock()
	}
	return b.next.RoundTrip(req)
}

func (b *blobCounter) count(digest string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.gets[digest]
}

// TestALayerSharedByTwoImagesIsFetchedAndKeptOnce proves the doc's "a
// layer shared by two images is fetched and kept once": two images on one
// busybox base layer, each with a layer of its own, pulled one after the
// other into one cache.
func TestALayerSharedByTwoImagesIsFetchedAndKeptOnce(t *testing.T) {
	baseLayers, err := ociimagetest.Busybox(t, "from the base").Layers()
	if err != nil {
		t.Fatal(err)
	}
	base := baseLayers[0]
	d, err := base.Digest()
	if err != nil {
		t.Fatal(err)
	}
	shared := d.String()
	reg := ociimagetest.NewRegistry(t)
	var refs []string
	for _, n := range []string{"a", "b"} {
		top := ociimagetest.Layer(t, ociimagetest.File{Name: "etc/" + n, Body: "only in " + n})
		_, ref := reg.Push(t, "img/"+n+":1", ociimagetest.Image(t, []string{"PATH=/bin"}, base, top))
		refs = append(refs, ref)
	}

	counter := &blobCounter{gets: map[string]int{},
		next: outbound.Transport(outbound.Policy{Allow: outbound.AnyURL(), AllowPrivate: ociimagetest.Loopback})}
	dir := filepath.Join(t.TempDir(), "images")
	c, err := ociimage.New(ociimage.Config{Dir: dir, AllowPrivate: ociimagetest.Loopback, Transport: counter})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	var ims []*ociimage.Image
	for i, ref := range refs {
		im, err := c.Acquire(context.Background(), ref, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer im.Release()
		ims = append(ims, im)
		n := []string{"a", "b"}[i]
		if b, err := os.ReadFile(filepath.Join(im.Root, "etc/marker")); err != nil || string(b) != "from the base" {
			t.Errorf("image %s: etc/marker %q, %v; want the base layer's", n, b, err)
		}
		if b, err := os.ReadFile(filepath.Join(im.Root, "etc", n)); err != nil || string(b) != "only in "+n {
			t.Errorf("image %s: etc/%s %q, %v; want its own layer's", n, n, b, err)
		}
		if layers := entryLayers(t, im); len(layers) != 2 || layers[0] != shared {
			t.Errorf("image %s lists layers %q, want the shared %s first", n, layers, shared)
		}
	}
	if ims[0].Digest == ims[1].Digest {
		t.Fatalf("both images have digest %s: the test needs two images", ims[0].Digest)
	}

	if got := counter.count(shared); got != 1 {
		t.Errorf("the shared layer %s was fetched %d times from the registry, want once", shared, got)
	}
	hex := strings.TrimPrefix(shared, "sha256:")
	var stored []string
	err = filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.Contains(e.Name(), hex) {
			stored = append(stored, strings.TrimPrefix(path, dir))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/blobs/" + hex}; !slices.Equal(stored, want) {
		t.Errorf("the cache holds %q for the shared layer, want it once: %q", stored, want)
	}
}

// entryLayers is the layers image.json lists for im (beside its root).
func entryLayers(t *testing.T, im *ociimage.Image) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(filepath.Dir(im.Root), "image.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		Layers []string `json:"layers"`
	}
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	return e.Layers
}
