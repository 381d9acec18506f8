package egress

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
)

// Where the proxy appears inside a sandbox.
const (
	// ForwarderName is the name the forwarder is started under; a program
	// importing this package whose argv[0] has this base name runs the
	// forwarder instead of its main.
	ForwarderName = "agentfleet-egress-forwarder"
	// InnerForwarder is where the worker's executable is bound.
	InnerForwarder = "/run/agentfleet/" + ForwarderName
	// InnerSocket is where the proxy's unix socket is bound.
	InnerSocket = "/run/agentfleet/egress.sock"
	// ProxyAddr is where the forwarder listens, on the sandbox's loopback.
	ProxyAddr = "127.0.0.1:3128"
)

func init() {
	if filepath.Base(os.Args[0]) == ForwarderName {
		os.Exit(runForwarder(os.Args[1:]))
	}
}

// Executable is the program bound into sandboxes as the forwarder: this
// process's own executable.
func Executable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("egress: finding this program to run as the sandbox's forwarder: %w", err)
	}
	return exe, nil
}

// Wrap returns argv started through the forwarder inside a sandbox.
func Wrap(argv []string) []string {
	return append([]string{InnerForwarder, InnerSocket, ProxyAddr, "--"}, argv...)
}

// ProxyEnv is the environment that points a sandbox's programs at the
// forwarder; the sandbox's own loopback is reached directly.
func ProxyEnv() []string {
	url := "http://" + ProxyAddr
	return []string{"HTTP_PROXY=" + url, "HTTPS_PROXY=" + url, "http_proxy=" + url, "https_proxy=" + url,
		"NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1"}
}

// runForwarder is the forwarder's main: args are the socket, the listen
// address, "--" and the command. It returns the command's exit status
// (128 + the signal when a signal ended it).
func runForwarder(args []string) int {
	if len(args) < 4 || args[2] != "--" {
		fmt.Fprintf(os.Stderr, "%s: usage: %s SOCKET ADDR -- COMMAND...\n", ForwarderName, ForwarderName)
		return 125
	}
	socket, addr, argv := args[0], args[1], args[3:]
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", ForwarderName, err)
		return 125
	}
	go relay(ln, socket)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", ForwarderName, err)
		return 127
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		return 125
	}
	return 0
}

// relay connects every connection ln accepts to the proxy's socket.
func relay(ln net.Listener, socket string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer func() { _ = c.Close() }()
			up, err := net.Dial("unix", socket) //nolint:gosec,noctx // G704: the proxy's own unix socket, not a URL; the relay ends with the connection
			if err != nil {
				return
			}
			defer func() { _ = up.Close() }()
			go func() {
				_, _ = io.Copy(up, c)
				closeWrite(up)
			}()
			_, _ = io.Copy(c, up)
		}()
	}
}
