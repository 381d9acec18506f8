// Package subdir gives an execenv.Environment another working directory:
// Scope returns the parent environment seen from one of its
// subdirectories, as a subagent given a working_dir sees it.
//
// The contract is narrow. Only the default directory moves: relative paths
// of file operations, a command's directory and the roots of grep and glob
// start in the subdirectory, and WorkingDir and Describe report it. It is
// not a sandbox: absolute paths and "..", and any command, still reach
// everything the parent reaches (execenv.Scoped and execenv/sandbox
// confine); a link in sub is followed inside the parent's environment, so
// the scoped one reaches nothing the parent does not. (A fleet subagent's
// working_dir is a task of its own with its own sandbox: the worker
// resolves it with internal/beneath, links refused.) Initialize and
// Cleanup belong to the parent, which the scoped
// environment shares: on it they do nothing, so a child cannot set up or
// tear down what its parent owns. Everything else (Platform, Exec's
// policies, output bounds) is the parent's.
package subdir
