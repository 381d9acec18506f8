// Package pathmatch is the path matching of execenv's searches: gitignore
// files (ParseIgnoreFile, a stack of them as a walk descends, and the
// override globs a search passes) and the glob patterns of glob and grep
// (CompileGlob, with ** across directories). It reads no files: callers
// hand it the bytes and the paths, so the local and the SSH environments
// match alike.
package pathmatch
