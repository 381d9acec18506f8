//go:build !linux

package redteam

import "errors"

type devNum struct{ major, minor uint64 }

// errNoDevices: the raw-disk probe reads Linux device numbers and
// /proc/self/mountinfo, and the sandbox it attacks is bubblewrap's.
var errNoDevices = errors.New("reading the disk: n/a, the probe needs Linux (device numbers, /proc/self/mountinfo, bubblewrap)")

func blockDeviceOf(string) (devNum, string, error) { return devNum{}, "", errNoDevices }

func hostOpensDevice(string, devNum) error { return errNoDevices }
