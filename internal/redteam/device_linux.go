package redteam

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

type devNum struct{ major, minor uint64 }

// blockDeviceOf returns the block device holding path and path's name
// inside that file system.
func blockDeviceOf(path string) (devNum, string, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return devNum{}, "", err
	}
	dev := st.Dev
	d := devNum{major: (dev >> 8) & 0xfff, minor: (dev & 0xff) | ((dev >> 12) & 0xfff00)}
	if d.major == 0 {
		return d, "", fmt.Errorf("the run directory is not on a block device (%d:%d, e.g. tmpfs or overlay): set TMPDIR to a disk", d.major, d.minor)
	}
	mountPoint, root, err := mountOf(d, path)
	if err != nil {
		return d, "", err
	}
	rel, err := filepath.Rel(mountPoint, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return d, "", fmt.Errorf("%s is not under its mount point %s", path, mountPoint)
	}
	return d, strings.TrimPrefix(filepath.Join(root, rel), "/"), nil
}

// mountOf finds the mount of device d whose mount point is the longest
// prefix of path: /proc/self/mountinfo's mount point and root.
func mountOf(d devNum, path string) (mountPoint, root string, err error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", "", err
	}
	defer func() { _ = f.Close() }()
	want := fmt.Sprintf("%d:%d", d.major, d.minor)
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 5 || fields[2] != want {
			continue
		}
		mp := fields[4]
		under := mp == "/" || path == mp || strings.HasPrefix(path, mp+"/")
		if under && (mountPoint == "" || len(mp) > len(mountPoint)) {
			mountPoint, root = fields[4], fields[3]
		}
	}
	if mountPoint == "" {
		return "", "", fmt.Errorf("device %s is not in /proc/self/mountinfo", want)
	}
	return mountPoint, root, nil
}

// hostOpensDevice checks, as root, that a node of dev made with mknod can
// be opened outside any sandbox: a container's device cgroup may refuse
// it to everyone, and then the probe proves nothing. Not root, it says
// nothing (the task cannot do more than the runner).
func hostOpensDevice(dir string, d devNum) error {
	if os.Getuid() != 0 {
		return nil
	}
	node := filepath.Join(dir, "rt-device-check")
	defer func() { _ = os.Remove(node) }()
	if err := syscall.Mknod(node, syscall.S_IFBLK|0o600, int(d.major<<8|d.minor&0xff|(d.minor&^0xff)<<12)); err != nil {
		return fmt.Errorf("reading the disk: n/a, root cannot mknod %d:%d here: %v", d.major, d.minor, err)
	}
	f, err := os.Open(node)
	if err != nil {
		return fmt.Errorf("reading the disk: n/a, root cannot open a node of %d:%d here either (device cgroup): %v", d.major, d.minor, errors.Unwrap(err))
	}
	return f.Close()
}
