//go:build !unix

package pgcluster

import "syscall"

// credential stands in for a Unix credential, which this system lacks.
type credential struct{}

func procAttr(*credential) *syscall.SysProcAttr { return nil }

func chownTo(string, *credential) error { return nil }

// unprivilegedCredential refuses: StartCluster cannot run here.
func unprivilegedCredential() (*credential, error) { return nil, ErrUnsupported }
