//go:build !linux

package tiedproc

import "syscall"

// Tied reports whether Start ties a child to this process: only Linux has a
// parent-death signal, so here a child outlives a killed parent.
const Tied = false

func setDeathSignal(*syscall.SysProcAttr, syscall.Signal) {}
