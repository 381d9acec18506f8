package sandbox

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"sync"
	"syscall"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
)

// refused are the system calls no coding task needs and that reach the
// kernel's attack surface or could undo the sandbox: mounts and new
// mount APIs, keyrings, BPF, perf, module and kexec loading, handle-based
// opens (which walk around bind mounts), userfaultfd, namespace changes,
// swap, reboot, I/O ports, accounting and quotas. They fail with EPERM.
// Names the running architecture does not have are skipped.
var refused = []string{
	"mount", "umount", "umount2", "pivot_root", "chroot",
	"move_mount", "fsopen", "fsmount", "fsconfig", "fspick", "open_tree", "mount_setattr",
	"keyctl", "add_key", "request_key",
	"bpf", "perf_event_open",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"open_by_handle_at", "name_to_handle_at",
	"userfaultfd",
	"unshare", "setns",
	"swapon", "swapoff", "reboot",
	"iopl", "ioperm",
	"acct", "quotactl", "quotactl_fd",
	"lookup_dcookie", "nfsservctl", "vhangup", "syslog",
	"settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
	"sethostname", "setdomainname",
}

// namespaceFlags are clone's flags that make a namespace; clone with any
// of them fails with EPERM.
const namespaceFlags = syscall.CLONE_NEWNS | syscall.CLONE_NEWCGROUP | syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC |
	syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET | 0x80 /* CLONE_NEWTIME */

// Seccomp is the sandbox's seccomp filter as bubblewrap's --seccomp reads
// it (struct sock_filter, native byte order), built once per process.
// Besides the calls above: clone3 fails with ENOSYS, since its flags are
// in memory where a filter cannot read them (libc then falls back to
// clone, whose flags are checked); and a system call of another
// architecture than the worker's (i386 on x86_64, arm32 on arm64) fails
// with ENOSYS, since the numbers above are the native ones: 32-bit
// programs do not run in the sandbox.
var Seccomp = sync.OnceValues(func() ([]byte, error) { return buildSeccomp("") })

// buildSeccomp assembles the filter for an architecture ("" is the
// running one; "x86_64", "aarch64"...).
func buildSeccomp(archName string) ([]byte, error) {
	info, err := arch.GetInfo(archName)
	if err != nil {
		return nil, fmt.Errorf("sandbox: seccomp: %w", err)
	}
	var names []string
	for _, n := range refused {
		if _, ok := info.SyscallNames[n]; ok {
			names = append(names, n)
		}
	}
	policy := seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: []seccomp.SyscallGroup{
		{Action: seccomp.ActionErrno | seccomp.Action(syscall.EPERM), Names: names,
			NamesWithCondtions: []seccomp.NameWithConditions{{Name: "clone", Conditions: seccomp.ArgumentConditions{
				{Argument: 0, Operation: seccomp.BitsSet, Value: namespaceFlags}}}}},
		{Action: seccomp.ActionErrno | seccomp.Action(syscall.ENOSYS), Names: []string{"clone3"}},
	}}
	prog, err := policy.Assemble()
	if err != nil {
		return nil, fmt.Errorf("sandbox: seccomp: %w", err)
	}
	// The library lets other architectures' calls through (its arch check
	// jumps to the default action): refuse them first.
	foreign := []bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(info.ID), SkipTrue: 1},
		bpf.RetConstant{Val: uint32(seccomp.ActionErrno) | uint32(syscall.ENOSYS)},
	}
	raw, err := bpf.Assemble(append(foreign, prog...))
	if err != nil {
		return nil, fmt.Errorf("sandbox: seccomp: %w", err)
	}
	var buf bytes.Buffer
	for _, ins := range raw {
		_ = binary.Write(&buf, binary.NativeEndian, struct {
			Op     uint16
			Jt, Jf uint8
			K      uint32
		}{ins.Op, ins.Jt, ins.Jf, ins.K})
	}
	return buf.Bytes(), nil
}

// seccompFile is a pipe whose read end holds the filter, for one
// bubblewrap (which reads it to the end).
func seccompFile() (*os.File, error) {
	prog, err := Seccomp()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	_, err = w.Write(prog) // a few hundred bytes: within the pipe's buffer
	_ = w.Close()
	if err != nil {
		_ = r.Close()
		return nil, err
	}
	return r, nil
}
