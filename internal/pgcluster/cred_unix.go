//go:build unix

package pgcluster

import (
	"errors"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// credential is the user the server's processes run as.
type credential = syscall.Credential

func procAttr(c *credential) *syscall.SysProcAttr { return &syscall.SysProcAttr{Credential: c} }

// chownTo gives dir to c's user, when there is one.
func chownTo(dir string, c *credential) error {
	if c == nil {
		return nil
	}
	return os.Chown(dir, int(c.Uid), int(c.Gid))
}

// unprivilegedCredential returns nil unless we are root, whom initdb and
// postgres refuse; then the postgres system user, else nobody.
func unprivilegedCredential() (*credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		return &credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
	}
	return nil, errors.New("pgcluster: running as root and found neither a postgres nor a nobody user to run the server as")
}
