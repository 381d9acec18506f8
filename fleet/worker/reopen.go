package worker

// A task that succeeded or failed may be reopened with a new input (a
// follow-up of an ended task through the dispatcher, taskops.Reopen; a
// parent's send_input to an ended child): it is queued again and any run
// after its first resumes its session from the stored turns, delivers the
// stored inputs (inputs.go) as a new round, re-runs its checks and
// delivers again. Its workspace, gone with its success or left on another
// worker, is restored from the branch it delivered: restoreBranch.

// restoreBranch is the branch a run after the task's first clones its
// fresh workspace at, when the remote has it: the task's delivery branch,
// when it delivers to the repository it clones, so a reopened task goes on
// from what it delivered and its next delivery adds a commit on top of it
// (the same branch and pull request, package delivery). "" for a first
// run or a task that delivers elsewhere (its clone starts at its ref).
func (r *run) restoreBranch() string {
	d := r.spec.Delivery
	if d == nil || r.task.Attempts <= 1 || (d.Remote != "" && d.Remote != r.spec.Environment.Repo) {
		return ""
	}
	return d.BranchName(r.task.ID)
}
