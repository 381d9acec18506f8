//go:build !unix

package embedded

import "os"

// lockDir does not lock on platforms without flock; two servers on one data dir are then the
// operator's mistake to avoid.
func lockDir(string) (*os.File, error) { return nil, nil }

func unlockDir(*os.File) error { return nil }
