package sandbox

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentfleet/agentfleet/execenv/sandbox/egress"
)

// An image's root file system (Policy.Image, Settings.Image: a directory
// such as internal/ociimage unpacks) takes the place of the host's
// system directories and /etc files: the sandbox sees the image's /usr,
// /bin, /lib, /etc... read-only, and nothing of the host's but what the
// policy binds (the workspace, the operator's read-only and writable
// paths, the egress forwarder). Everything else is as without an image:
// the same uid, capabilities, seccomp filter, namespaces and limits, a
// private /tmp and home, its own /proc and a minimal /dev. The image's
// own /proc, /dev, /tmp and /home are hidden under the sandbox's.
//
// bwrap makes every mount point it needs, and cannot make one inside a
// read-only bind. So the image is not bound at / as a whole: each entry
// of its root is bound in its place, and a directory on the way to a
// path the policy binds (a workspace under /var, say) is made on the
// sandbox's own root instead, its entries bound one by one the same way.
//
// Commands start with /bin/bash (execenv.Local); an image without bash
// (busybox, alpine) runs them with its /bin/sh instead.

// imageReserved are the directories of the root the sandbox mounts
// itself, never the image's.
var imageReserved = []string{"proc", "dev", "tmp", "home"}

// imageArgs binds the image's root file system as the sandbox's root.
func (p Policy) imageArgs() []string {
	keep := append([]string{p.Workspace, egress.InnerForwarder, egress.InnerSocket}, p.ReadOnly...)
	keep = append(keep, p.Writable...)
	for _, b := range p.ReadOnlyFDs { // opened directories (a repository mirror) are mount points too
		keep = append(keep, b.At)
	}
	return imageDirArgs(p.Image, p.source(p.Image), "/", keep)
}

// imageDirArgs binds the entries of the image's directory dir (listed
// from list, bound from src) at dest, making the directories on the way
// to a path of keep instead of binding them.
func imageDirArgs(list, src, dest string, keep []string) []string {
	entries, err := os.ReadDir(list)
	if err != nil {
		return nil // unreadable: bwrap shows nothing there
	}
	var args []string
	for _, e := range entries {
		name := e.Name()
		if dest == "/" && slices.Contains(imageReserved, name) {
			continue
		}
		inner := path.Join(dest, name)
		from, at := filepath.Join(src, name), filepath.Join(list, name)
		switch spine(inner, keep) {
		case keepExact: // the policy binds something here itself
		case keepBelow:
			if e.IsDir() { // not a link: a link in the way gives way to a directory
				args = append(args, "--dir", inner)
				args = append(args, imageDirArgs(at, from, inner, keep)...)
			}
		default:
			args = append(args, imageEntryArgs(e, at, from, inner)...)
		}
	}
	return args
}

// imageEntryArgs binds one entry: a link stays a link, a directory or
// file is bound read-only, anything else is left out.
func imageEntryArgs(e os.DirEntry, at, from, inner string) []string {
	switch t := e.Type(); {
	case t&os.ModeSymlink != 0:
		if target, err := os.Readlink(at); err == nil {
			return []string{"--symlink", target, inner}
		}
	case t.IsDir(), t.IsRegular():
		return []string{"--ro-bind", from, inner}
	}
	return nil
}

const (
	keepNone = iota
	keepExact
	keepBelow
)

// spine says whether a path of keep is dir itself or lies below it.
func spine(dir string, keep []string) int {
	out := keepNone
	for _, k := range keep {
		switch {
		case k == "":
		case strings.HasPrefix(k, dir+"/"):
			return keepBelow
		case k == dir:
			out = keepExact
		}
	}
	return out
}

// imageShell runs argv (a /bin/bash command) with the image's /bin/sh
// when the image has no bash.
func imageShell(image string, argv []string) []string {
	if len(argv) == 0 || argv[0] != "/bin/bash" {
		return argv
	}
	if hasFile(image, "bin/bash") || !hasFile(image, "bin/sh") {
		return argv
	}
	return append([]string{"/bin/sh"}, argv[1:]...)
}

// hasFile reports whether rel exists in the image, following a link only
// within it (a merged /usr's /bin is a link to usr/bin).
func hasFile(image, rel string) bool {
	root, err := os.OpenRoot(image)
	if err != nil {
		return false
	}
	defer func() { _ = root.Close() }()
	_, err = root.Stat(rel)
	return err == nil
}
