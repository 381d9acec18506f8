package execenv

import "os/exec"

func ownGroup(*exec.Cmd) error { return ErrNoLocalCommands }

func terminateGroup(int, <-chan struct{}) {}

func killGroup(int) {}

func waitExited(int) {}
