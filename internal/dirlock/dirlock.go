// Package dirlock holds a directory for one process at a time: an
// exclusive, non-blocking flock on the directory itself, held while the
// returned file is open and dropped by the kernel when the process dies.
// A holder's directory is therefore "in use", and a crashed holder's
// leftover is not (the sandbox's stale-directory sweep and the image
// cache's one-cache-per-directory rule both rest on that).
package dirlock
