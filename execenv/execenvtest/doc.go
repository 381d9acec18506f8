// Package execenvtest is the conformance suite every execenv.Environment
// passes: Exercise runs the same cases (files, commands, timeouts and
// process-group kills, environment filtering, streaming, grep, glob,
// lifecycle) against an implementation built by the caller.
//
// The base environment the implementation starts from (the process
// environment for Local, the login environment for SSH) must contain the
// variables of ProbeEnv, so that filtering can be observed; the suite fails
// with an explanation when they are missing.
package execenvtest
