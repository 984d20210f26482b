//go:build !unix

package e2e

import "os/exec"

// ownGroup: no process groups here; killGroup kills cmd alone.
func ownGroup(*exec.Cmd) {}

// killGroup kills cmd.
func killGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }
