// Package ociimage gives a task's sandbox an OCI image as its root file
// system: Cache.Acquire resolves a reference (registry/name:tag or
// registry/name@sha256:...) to the digest of the image's manifest for
// this machine's platform, pulls what is missing, verifies it and
// unpacks it once into a content-addressed cache under a worker
// directory; the Image it returns is a read-only directory tree that
// every task of that digest shares until its Release.
//
// # Pulling
//
// Requests go through the one outbound guard (internal/outbound): its
// dialer refuses internal addresses but those the operator allows
// (Config.AllowPrivate), and every redirect hop is checked there too (a
// registry that sends blobs to a CDN keeps working; the Authorization
// header never leaves the registry's origin). Credentials (Auth) are the
// worker's, named by the spec, never in it. A manifest fetched by digest
// is checked against that digest; every layer and the configuration are
// checked against the digests the manifest names while they are read, and
// a layer is kept only once it was read whole and matched.
//
// A tag is resolved at each Acquire (one manifest request, no blob); a
// digest whose image is in the cache is not asked for at all. Concurrent
// Acquires of one image pull it once: the others wait for it.
//
// # The cache
//
// Under Config.Dir: blobs/ holds the compressed layers by digest (a layer
// shared by two images is fetched and kept once), images/<hex>/ one
// unpacked image (rootfs/ and image.json, its configuration and layers),
// tmp/ what is being pulled or unpacked (removed at New). The cache is
// bounded by Config.MaxBytes (blobs and root file systems together): when
// it is over, the blobs go first (they only save downloads; none while a
// pull is under way), then the least recently acquired images no task
// holds, until it fits. An image larger than the bound on its own is
// refused.
//
// # Unpacking
//
// Layers are applied in order beneath the root through an os.Root: a
// name that is absolute or has a ".." component fails the pull, and so
// does one whose parent is a symbolic link (links are written as they
// are, and never followed while unpacking). Hard links must name a
// regular file of the root. Device nodes and FIFOs are skipped; the
// setuid and setgid bits are cleared; extended attributes (file
// capabilities among them) and owners are not kept: every file is the
// worker's, directories are writable by it only (the root is bound
// read-only into sandboxes). Whiteouts (".wh.name") remove a lower
// layer's file; an opaque whiteout (".wh..wh..opq") empties a directory
// of what lower layers put there.
//
// A cache directory belongs to one Cache (one worker): New locks it, and
// a second New on it fails, saying so, rather than evict the images of
// the first from under its tasks.
//
// Decisions where the issue is silent: a reference without a registry is
// Docker Hub's (name.ParseReference's default), without a tag "latest";
// an index resolves to the image of this machine's OS and architecture.
package ociimage
