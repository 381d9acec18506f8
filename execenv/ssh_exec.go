package execenv

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"
)

// signalTimeout bounds the extra session that delivers a kill signal.
const signalTimeout = 15 * time.Second

// envNameRE is what a variable name set through ExecRequest.Env must look like remotely.
var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Exec runs req.Command on the remote host. A wrapper script applies the
// environment policy, starts `bash -c COMMAND` under setsid (its own
// session and process group), reports the group id as the first line of
// stdout (stripped), waits for it and kills what is left of the group. On
// timeout or cancellation, a second session sends SIGTERM to the group and
// SIGKILL after KillGrace. The exit code of a command ended by a signal we
// sent is -1; a remote command killed otherwise reports 128+signal.
func (s *SSH) Exec(ctx context.Context, req ExecRequest) (ExecResult, error) {
	if err := ctx.Err(); err != nil {
		return ExecResult{}, fmt.Errorf("execenv: command not started: %w", err)
	}
	if err := s.ensureInit(ctx); err != nil {
		return ExecResult{}, err
	}
	dir := s.resolve(req.Dir)
	if fi, err := s.Stat(ctx, dir); err != nil || !fi.IsDir {
		return ExecResult{}, fmt.Errorf("execenv: working directory %q for the command is not a directory: %v", dir, err)
	}
	script, err := s.execScript(req, dir, "</dev/null")
	if err != nil {
		return ExecResult{}, err
	}
	var run *sshRun
	err = s.withConn(ctx, func(c *sshConn) error {
		var err error
		run, err = s.startRemote(c, script, req.OnOutput)
		return err
	})
	if err != nil {
		return ExecResult{}, fmt.Errorf("execenv: start remote command: %w", err)
	}
	s.track(run, true)
	defer s.track(run, false)
	return s.finish(ctx, run, effectiveTimeout(req.Timeout, s.cfg.DefaultTimeout, s.cfg.MaxTimeout))
}

// sshRun is one remote command in flight.
type sshRun struct {
	conn           *sshConn
	sess           *ssh.Session
	started        time.Time
	stdout, stderr *headTail
	pgid           chan int     // receives the remote process group id once
	pgKnown        atomic.Int64 // the same id, for Cleanup; 0 until known
	waited         chan error   // receives the session's Wait result once
	readers        sync.WaitGroup
}

// startRemote opens a session and starts the wrapper script.
func (s *SSH) startRemote(c *sshConn, script string, onOutput func(OutputStream, []byte)) (*sshRun, error) {
	sess, err := c.client.NewSession()
	if err != nil {
		return nil, err
	}
	outPipe, err1 := sess.StdoutPipe()
	errPipe, err2 := sess.StderrPipe()
	if err := errors.Join(err1, err2); err != nil {
		_ = sess.Close()
		return nil, err
	}
	run := &sshRun{
		conn: c, sess: sess, stdout: newHeadTail(s.cfg.MaxOutputBytes), stderr: newHeadTail(s.cfg.MaxOutputBytes),
		pgid: make(chan int, 1), waited: make(chan error, 1),
	}
	run.started = time.Now()
	if err := sess.Start(script); err != nil {
		_ = sess.Close()
		return nil, err
	}
	sink := &outputSink{onOutput: onOutput}
	run.readers.Add(2)
	go func() {
		defer run.readers.Done()
		run.readStdout(sink.stream(Stdout, run.stdout), outPipe)
	}()
	go func() {
		defer run.readers.Done()
		_, _ = io.Copy(sink.stream(Stderr, run.stderr), errPipe)
	}()
	go func() { run.waited <- sess.Wait() }()
	return run, nil
}

// pgidMarker starts the line on which the wrapper reports the process
// group; output before it (a login shell's greeting) is dropped.
const pgidMarker = "agentfleet-pgid:"

// maxLoginNoise bounds what is dropped while looking for the marker; past
// it, everything is passed on as output.
const maxLoginNoise = 64 << 10

// readStdout takes the process group id from the marker line, then copies the rest.
func (r *sshRun) readStdout(w io.Writer, pipe io.Reader) {
	br := bufio.NewReaderSize(pipe, maxLoginNoise)
	var noise []byte
	for {
		line, err := br.ReadSlice('\n')
		if rest, ok := bytes.CutPrefix(line, []byte(pgidMarker)); ok {
			if pg, convErr := strconv.Atoi(strings.TrimSpace(string(rest))); convErr == nil {
				r.pgKnown.Store(int64(pg))
				r.pgid <- pg
			}
			break
		}
		noise = append(noise, line...)
		if (!errors.Is(err, nil) && !errors.Is(err, bufio.ErrBufferFull)) || len(noise) > maxLoginNoise {
			_, _ = w.Write(noise)
			break
		}
	}
	_, _ = io.Copy(w, br)
}

// finish waits for the command, enforcing the timeout and ctx, and builds the result.
func (s *SSH) finish(ctx context.Context, run *sshRun, timeout time.Duration) (ExecResult, error) {
	defer func() { _ = run.sess.Close() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var res ExecResult
	var waitErr error
	select {
	case waitErr = <-run.waited:
	case <-timer.C:
		res.TimedOut = true
	case <-ctx.Done():
		res.Canceled = true
	}
	if res.TimedOut || res.Canceled {
		waitErr = s.terminateRemote(context.WithoutCancel(ctx), run)
	}
	run.drain()
	res.Duration = time.Since(run.started)
	res.Stdout, res.Stderr = run.stdout.String(), run.stderr.String()
	res.OmittedBytes = run.stdout.omitted() + run.stderr.omitted()
	if res.TimedOut {
		res.Stderr = appendTimeoutMessage(res.Stderr, timeout)
	}
	code, err := remoteExitCode(waitErr, res.TimedOut || res.Canceled)
	res.ExitCode = code
	if err != nil {
		return res, fmt.Errorf("execenv: remote command on %s: %w", s.addr(), err)
	}
	return res, nil
}

// terminateRemote sends SIGTERM to the remote group, SIGKILL after
// KillGrace, and returns the session's Wait result (the session is closed
// if the wrapper does not report back).
func (s *SSH) terminateRemote(ctx context.Context, run *sshRun) error {
	var pgid int
	select {
	case pgid = <-run.pgid:
	case err := <-run.waited:
		return err
	case <-time.After(KillGrace):
		_ = run.sess.Close()
		return <-run.waited
	}
	s.signalGroup(ctx, run.conn, pgid, "TERM")
	grace := time.NewTimer(KillGrace)
	defer grace.Stop()
	select {
	case err := <-run.waited:
		s.signalGroup(ctx, run.conn, pgid, "KILL")
		return err
	case <-grace.C:
	}
	s.signalGroup(ctx, run.conn, pgid, "KILL")
	select {
	case err := <-run.waited:
		return err
	case <-time.After(drainTimeout):
		_ = run.sess.Close()
		return <-run.waited
	}
}

// track adds or removes a command in flight, for Cleanup.
func (s *SSH) track(run *sshRun, add bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if add {
		s.running[run] = struct{}{}
	} else {
		delete(s.running, run)
	}
}

// killRunning sends SIGKILL to the process groups of commands in flight.
func (s *SSH) killRunning(ctx context.Context) {
	s.mu.Lock()
	var runs []*sshRun
	for r := range s.running {
		runs = append(runs, r)
	}
	s.mu.Unlock()
	for _, r := range runs {
		if pg := r.pgKnown.Load(); pg > 0 && !r.conn.dead() {
			s.signalGroup(ctx, r.conn, int(pg), "KILL")
		}
	}
}

// signalGroup delivers a signal to a remote process group through a new session.
func (s *SSH) signalGroup(ctx context.Context, c *sshConn, pgid int, sig string) {
	ctx, cancel := context.WithTimeout(ctx, signalTimeout)
	defer cancel()
	if _, err := runSimple(ctx, c, fmt.Sprintf("kill -%s -- -%d 2>/dev/null; true", sig, pgid)); err != nil {
		s.cfg.Logger.Warn("execenv: could not signal remote process group", "host", s.addr(), "pgid", pgid, "signal", sig, "error", err)
	}
}

// drain waits for the output readers, closing the session if they linger.
func (r *sshRun) drain() { waitReaders(&r.readers, func() { _ = r.sess.Close() }) }

// remoteExitCode maps the session's end to an exit code.
func remoteExitCode(waitErr error, signaled bool) (int, error) {
	var ee *ssh.ExitError
	switch {
	case waitErr == nil:
		return 0, nil
	case errors.As(waitErr, &ee):
		if ee.Signal() != "" || (signaled && ee.ExitStatus() > 128) {
			return -1, nil
		}
		return ee.ExitStatus(), nil
	case signaled:
		return -1, nil
	}
	return -1, waitErr
}

// execScript builds the command line sent to the remote login shell;
// stdin is the redirection of the command's standard input ("</dev/null"
// for Exec; "<&0" keeps the session's, which bash would otherwise replace
// with /dev/null for a background job).
func (s *SSH) execScript(req ExecRequest, dir, stdin string) (string, error) {
	var b strings.Builder
	b.WriteString("__setsid=$(command -v setsid) || { echo 'agentfleet: setsid (util-linux) is not installed on the remote host' >&2; exit 127; }\n")
	b.WriteString(remoteEnvPrelude(s.cfg.EnvPolicy, s.cfg.KeepSecrets))
	for _, k := range sortedKeys(req.Env) {
		if !envNameRE.MatchString(k) {
			return "", fmt.Errorf("execenv: environment variable name %q is not valid for a remote shell (letters, digits and _ only)", k)
		}
		fmt.Fprintf(&b, "export %s=%s\n", k, shQuote(req.Env[k]))
	}
	fmt.Fprintf(&b, "cd -- %s || exit 1\n", shQuote(dir))
	// The child reports its own pid (= its process group after setsid)
	// before running the command, so the marker precedes its output.
	fmt.Fprintf(&b, "\"$__setsid\" \"$BASH\" -c 'printf \"%s%%s\\n\" \"$$\"; exec \"$BASH\" -c \"$1\"' agentfleet %s %s &\n", pgidMarker, shQuote(req.Command), stdin)
	b.WriteString("__pg=$!\nwait \"$__pg\"\n__rc=$?\nkill -KILL -- -\"$__pg\" 2>/dev/null\nexit \"$__rc\"\n")
	return "exec bash -c " + shQuote(b.String()), nil
}

// remoteEnvPrelude unsets the exported variables the policy does not let through.
func remoteEnvPrelude(policy EnvPolicy, keepSecrets bool) string {
	var keep string
	switch policy.orDefault() {
	case EnvNone:
		keep = "" // nothing kept
	case EnvCoreOnly:
		keep = strings.Join(coreEnvNames, "|") + "|" + strings.Join(corePrefixesGlob(), "|")
	default:
		if keepSecrets {
			return ""
		}
		return "for __n in $(compgen -e); do case \"${__n^^}\" in *_API_KEY|*_SECRET|*_TOKEN|*_PASSWORD|*_CREDENTIAL) unset \"$__n\" 2>/dev/null;; esac; done\n"
	}
	if keep == "" {
		return "for __n in $(compgen -e); do unset \"$__n\" 2>/dev/null; done\n"
	}
	return "for __n in $(compgen -e); do case \"$__n\" in " + keep + ") ;; *) unset \"$__n\" 2>/dev/null;; esac; done\n"
}

// corePrefixesGlob is corePrefixes as shell case patterns.
func corePrefixesGlob() []string {
	out := make([]string, len(corePrefixes))
	for i, p := range corePrefixes {
		out[i] = p + "*"
	}
	return out
}
