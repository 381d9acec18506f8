//go:build !unix

package ociimage

import "os"

// lockDir opens dir; other systems do not lock it (workers run images on
// Linux only).
func lockDir(dir string) (*os.File, error) { return os.Open(dir) }
