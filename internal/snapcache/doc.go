// Package snapcache keeps snapshots of directories by key, bounded in
// size with least-recently-used eviction: the workspaces a task's
// environment.setup left behind (fleet/worker, setup.go), so that later
// tasks on the same key start from them.
//
// # Layout and contract
//
// A cache owns its directory (Config.Dir), locked while it is open
// (internal/dirlock): give each worker its own. Snapshot k lives in
// <dir>/snap/<k>, written to <dir>/tmp first and renamed into place whole,
// so a snapshot is either complete or absent; what a process that died
// left in tmp is removed at New. A snapshot's last use is its directory's
// modification time, read at New, so the order survives a restart.
//
// Put copies with `cp -a --reflink=auto`: on a file system with
// copy-on-write extents (btrfs, xfs with reflink, bcachefs) the copy
// shares its data with the source and costs metadata only; elsewhere it
// is a plain copy. Sizes are apparent sizes (the sum of the regular
// files' lengths), so the bound is conservative where reflinks share.
//
// A snapshot is held (Get) while a caller copies out of it; eviction
// skips held snapshots, so the cache may exceed its bound while every
// snapshot over it is held. Keys are hex strings (a hash the caller
// computes); anything else is refused.
//
// Lock serialises the work that makes one key's snapshot: a second task
// on a key being set up waits and then finds the snapshot, rather than
// running the setup again.
//
// All methods are safe for concurrent use.
package snapcache
