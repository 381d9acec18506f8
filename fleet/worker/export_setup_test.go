package worker

// SetupRuns is how many environment.setup commands w ran (setup.go).
func SetupRuns(w *Worker) int64 { return w.repos.setupRuns.Load() }

// RepoCacheDir is w's repo_cache.dir, its default applied.
func RepoCacheDir(w *Worker) string { return w.cfg.repoCacheDir() }
