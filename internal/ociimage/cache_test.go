package ociimage_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/internal/ociimage"
	"github.com/agentfleet/agentfleet/internal/ociimage/ociimagetest"
	"github.com/agentfleet/agentfleet/internal/outbound"
)

func newCache(t *testing.T, max int64) *ociimage.Cache {
	t.Helper()
	c, err := ociimage.New(ociimage.Config{Dir: filepath.Join(t.TempDir(), "images"), MaxBytes: max, AllowPrivate: ociimagetest.Loopback})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestAcquireUnpacksOnceAndServesFromTheCache(t *testing.T) {
	reg := ociimagetest.NewRegistry(t)
	byTag, byDigest := reg.Push(t, "tools/busybox:1", ociimagetest.Busybox(t, "from the image"))
	c := newCache(t, 0)
	ctx := context.Background()

	im, err := c.Acquire(ctx, byTag, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer im.Release()
	if b, err := os.ReadFile(filepath.Join(im.Root, "etc/marker")); err != nil || string(b) != "from the image" {
		t.Fatalf("etc/marker: %q, %v", b, err)
	}
	if target, err := os.Readlink(filepath.Join(im.Root, "bin/sh")); err != nil || target != "busybox" {
		t.Errorf("bin/sh is %q, %v; want a link to busybox", target, err)
	}
	if len(im.Env) != 1 || im.Env[0] != "PATH=/bin" {
		t.Errorf("Env %q, want the image's PATH=/bin", im.Env)
	}
	if want := strings.SplitN(byDigest, "@", 2)[1]; im.Digest != want {
		t.Errorf("Digest %s, want %s", im.Digest, want)
	}
	blobs := reg.BlobGETs()
	if blobs != 2 { // the layer and the configuration
		t.Errorf("the first pull fetched %d blobs, want 2", blobs)
	}

	again, err := c.Acquire(ctx, byTag, nil) // a tag: the manifest is asked for again, no blob
	if err != nil {
		t.Fatal(err)
	}
	again.Release()
	if got := reg.BlobGETs(); got != blobs {
		t.Errorf("a second Acquire by tag fetched %d more blobs, want none", got-blobs)
	}
	requests := reg.Requests()
	byDig, err := c.Acquire(ctx, byDigest, nil) // a digest that is cached: nothing asked
	if err != nil {
		t.Fatal(err)
	}
	byDig.Release()
	if got := reg.Requests(); got != requests || byDig.Root != im.Root {
		t.Errorf("Acquire by cached digest made %d requests and gave %s; want none and %s", got-requests, byDig.Root, im.Root)
	}

	// The directory is the first Cache's while it is open; a new Cache on
	// it then finds the image on disk.
	dir := filepath.Dir(filepath.Dir(filepath.Dir(im.Root)))
	if _, err := ociimage.New(ociimage.Config{Dir: dir}); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("a second Cache on an open cache's directory: %v, want it refused", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c2, err := ociimage.New(ociimage.Config{Dir: dir, AllowPrivate: ociimagetest.Loopback})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c2.Close() }()
	if !c2.Cached(im.Digest) {
		t.Error("a cache reopened on the same directory lost the image")
	}
}

func TestConcurrentAcquiresPullOnce(t *testing.T) {
	reg := ociimagetest.NewRegistry(t)
	byTag, _ := reg.Push(t, "tools/busybox:1", ociimagetest.Busybox(t, "x"))
	c := newCache(t, 0)
	var wg sync.WaitGroup
	roots := make([]string, 4)
	errs := make([]error, 4)
	for i := range roots {
		wg.Go(func() {
			im, err := c.Acquire(context.Background(), byTag, nil)
			if err == nil {
				roots[i] = im.Root
				im.Release()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for _, r := range roots[1:] {
		if r != roots[0] {
			t.Errorf("roots differ: %q", roots)
		}
	}
	if got := reg.BlobGETs(); got != 2 {
		t.Errorf("four concurrent Acquires fetched %d blobs, want 2 (one pull)", got)
	}
}

func TestTheLeastRecentlyUsedIdleImageIsEvicted(t *testing.T) {
	reg := ociimagetest.NewRegistry(t)
	body := strings.Repeat("x", 100<<10)
	var refs []string
	for _, n := range []string{"a", "b", "c"} {
		_, ref := reg.Push(t, "img/"+n+":1", ociimagetest.Image(t, nil, ociimagetest.Layer(t, ociimagetest.File{Name: n, Body: body + n})))
		refs = append(refs, ref)
	}
	now := time.Unix(1e9, 0)
	c, err := ociimage.New(ociimage.Config{Dir: t.TempDir(), MaxBytes: 250 << 10, AllowPrivate: ociimagetest.Loopback,
		Now: func() time.Time { now = now.Add(time.Second); return now }})
	if err != nil {
		t.Fatal(err)
	}
	acquire := func(ref string) *ociimage.Image {
		t.Helper()
		im, err := c.Acquire(context.Background(), ref, nil)
		if err != nil {
			t.Fatal(err)
		}
		return im
	}
	a := acquire(refs[0])
	b := acquire(refs[1])
	b.Release()
	a.Release()
	acquire(refs[0]).Release() // a is now more recent than b
	held := acquire(refs[0])
	defer held.Release()
	cIm := acquire(refs[2])
	defer cIm.Release()
	if c.Cached(b.Digest) {
		t.Error("b, the least recently used idle image, is still cached")
	}
	if !c.Cached(a.Digest) || !c.Cached(cIm.Digest) {
		t.Error("a (held) or c (just pulled) was evicted")
	}
	if _, err := os.Stat(b.Root); !os.IsNotExist(err) {
		t.Errorf("b's root is still on disk: %v", err)
	}
	if size := c.Size(); size > 250<<10 {
		t.Errorf("the cache holds %d bytes, over its bound", size)
	}
}

func TestATamperedBlobIsRefusedAndNotKept(t *testing.T) {
	reg := ociimagetest.NewRegistry(t)
	img := ociimagetest.Busybox(t, "x")
	_, ref := reg.Push(t, "tools/busybox:1", img)
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	d, err := layers[0].Digest()
	if err != nil {
		t.Fatal(err)
	}
	reg.CorruptBlob(d.String())
	c := newCache(t, 0)
	if _, err := c.Acquire(context.Background(), ref, nil); err == nil || !strings.Contains(err.Error(), "checksum") || !strings.Contains(err.Error(), "layer 1") {
		t.Fatalf("an image whose blobs do not match their digests: err %v, want a digest mismatch", err)
	}
	if c.Size() != 0 {
		t.Errorf("the cache kept %d bytes of a tampered image", c.Size())
	}
}

func TestAnImageLargerThanTheBoundIsRefused(t *testing.T) {
	reg := ociimagetest.NewRegistry(t)
	_, ref := reg.Push(t, "big:1", ociimagetest.Image(t, nil, ociimagetest.Layer(t, ociimagetest.File{Name: "f", Body: strings.Repeat("y", 64<<10)})))
	c := newCache(t, 16<<10)
	if _, err := c.Acquire(context.Background(), ref, nil); err == nil || !strings.Contains(err.Error(), "bound") {
		t.Fatalf("err %v, want the image refused as larger than the bound", err)
	}
}

func TestRegistriesOnInternalAddressesAreRefusedUnlessAllowed(t *testing.T) {
	reg := ociimagetest.NewRegistry(t)
	byTag, _ := reg.Push(t, "tools/busybox:1", ociimagetest.Busybox(t, "x"))
	c, err := ociimage.New(ociimage.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Acquire(context.Background(), byTag, nil)
	if _, ok := errors.AsType[*outbound.RefusedError](err); !ok {
		t.Fatalf("err %v, want the outbound guard's refusal of a loopback registry", err)
	}
}

func TestBadReferencesSayWhatToWrite(t *testing.T) {
	c := newCache(t, 0)
	for _, ref := range []string{"", "UPPER/case", "a@sha256:123"} {
		if _, err := c.Acquire(context.Background(), ref, nil); err == nil || !strings.Contains(err.Error(), "registry/name:tag") {
			t.Errorf("%q: err %v, want one saying how to write a reference", ref, err)
		}
	}
}
