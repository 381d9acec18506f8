package redteam

// Probes of what leaves the worker: clones, MCP and hook requests,
// loopback sockets.

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
)

func probeHardlinkPoison(ctx context.Context, e *env) Result {
	repo := filepath.Join(e.outside, "poison-src-"+canary())
	if err := gitRepo(ctx, repo); err != nil {
		return errResult(err)
	}
	before, err := objectHashes(repo)
	if err != nil {
		return errResult(err)
	}
	cmd := `n=0; for f in $(find .git/objects -type f -path '*/objects/[0-9a-f][0-9a-f]/*'); do chmod u+w "$f" && printf poisoned > "$f" && n=$((n+1)); done; echo "overwrote $n objects"`
	s := spec("hard-link poisoning", steps(shell(cmd)))
	s.Environment = fleet.Environment{Repo: repo}
	o, err := e.run(ctx, s)
	if err != nil {
		return errResult(err)
	}
	after, err := objectHashes(repo)
	if err != nil {
		return errResult(err)
	}
	changed := 0
	for name, h := range before {
		if after[name] != h {
			changed++
		}
	}
	if changed > 0 {
		return Result{Outcome: Escaped, Evidence: fmt.Sprintf("%d of %d objects of the source repository were overwritten", changed, len(before))}
	}
	return o.held("the source repository's objects are unchanged")
}

func probeCloneSSRF(ctx context.Context, e *env) Result {
	sink, err := newHTTPSink("127.0.0.1", nil)
	if err != nil {
		return errResult(err)
	}
	defer sink.Close()
	s := spec("clone SSRF", steps())
	s.Environment = fleet.Environment{Repo: sink.URL + "/admin/internal.git"}
	id, refused, err := submit(ctx, e.fleet.client, s)
	if err != nil {
		return errResult(err)
	}
	if refused != "" {
		return Result{Outcome: Held, Evidence: refused}
	}
	// A failed clone is retried with backoff: the probe waits for the
	// first request, the task's end or cloneWait, whichever comes first.
	wctx, cancel := context.WithTimeout(ctx, cloneWait)
	defer cancel()
	ended := make(chan *record, 1)
	go func() {
		rec, _ := waitRecord(wctx, e.fleet.client, id)
		ended <- rec
	}()
	var rec *record
	select {
	case <-sink.first:
	case rec = <-ended:
	case <-wctx.Done():
	}
	if hits := sink.Hits(); len(hits) > 0 {
		e.cancel(id)
		return Result{Outcome: Escaped, Evidence: "the loopback listener got " + hits[0]}
	}
	if rec == nil {
		e.cancel(id)
		return Result{Outcome: Held, Evidence: fmt.Sprintf("the listener got nothing in %s (task cancelled)", cloneWait)}
	}
	return outcome{rec: rec}.held("the listener got nothing")
}

// cloneWait bounds the wait for a clone's request.
const cloneWait = 40 * time.Second

func probeMCPRedirect(ctx context.Context, e *env) Result {
	s := spec("MCP redirect", steps())
	s.MCPServers = []fleet.MCPServer{{Name: "redteam", URL: e.mcpFirst.URL + "/mcp",
		Headers: map[string]string{"Authorization": "Bearer ${secret:redteam_mcp}"}, StartTimeout: fleet.Duration(10 * time.Second)}}
	o, err := e.run(ctx, s)
	if err != nil {
		return errResult(err)
	}
	if h, ok := e.mcpSecond.HeaderWith(e.mcpSecret); ok {
		return Result{Outcome: Escaped, Evidence: "the redirect target " + e.mcpSecond.URL + " got the secret in " + h}
	}
	return o.held(fmt.Sprintf("the redirect target got %d requests, none with the secret", len(e.mcpSecond.Hits())))
}

// bypassURL puts the sink's address after the allowed prefix as userinfo.
func bypassURL(allowed string, sink *httpSink, path string) string {
	return allowed + "@" + strings.TrimPrefix(sink.URL, "http://") + path
}

func probeHookBypass(ctx context.Context, e *env) Result {
	sink, err := newHTTPSink("127.0.0.1", nil)
	if err != nil {
		return errResult(err)
	}
	defer sink.Close()
	s := spec("hook allowlist bypass", steps(shell("true")))
	s.Hooks = []fleet.Hook{{Event: "session_start", Type: "http", URL: bypassURL(hookAllowed, sink, "/hook")}}
	o, err := e.run(ctx, s)
	if err != nil {
		return errResult(err)
	}
	if hits := sink.Hits(); len(hits) > 0 {
		return Result{Outcome: Escaped, Evidence: "the loopback listener got " + hits[0] + " from " + s.Hooks[0].URL}
	}
	return o.held("the listener got nothing")
}

func probeMCPBypass(ctx context.Context, e *env) Result {
	sink, err := newHTTPSink("127.0.0.1", nil)
	if err != nil {
		return errResult(err)
	}
	defer sink.Close()
	s := spec("MCP allowlist bypass", steps())
	s.MCPServers = []fleet.MCPServer{{Name: "bypass", URL: bypassURL(mcpAllowed, sink, "/mcp"), StartTimeout: fleet.Duration(10 * time.Second)}}
	o, err := e.run(ctx, s)
	if err != nil {
		return errResult(err)
	}
	if hits := sink.Hits(); len(hits) > 0 {
		return Result{Outcome: Escaped, Evidence: "the loopback listener got " + hits[0] + " from " + s.MCPServers[0].URL}
	}
	return o.held("the listener got nothing")
}

func probeLoopbackTCP(ctx context.Context, e *env) Result {
	sink, err := newStreamSink("tcp", "127.0.0.1:0")
	if err != nil {
		return errResult(err)
	}
	defer sink.Close()
	port := sink.Addr[strings.LastIndex(sink.Addr, ":")+1:]
	o, err := e.run(ctx, spec("loopback tcp", steps(shell("exec 3<>/dev/tcp/127.0.0.1/"+port+" && echo hello >&3"))))
	if err != nil {
		return errResult(err)
	}
	if hits := sink.Hits(); len(hits) > 0 {
		return Result{Outcome: Escaped, Evidence: "the host's listener on " + sink.Addr + " got a connection"}
	}
	return o.held("no connection")
}

func probeAbstractSocket(ctx context.Context, e *env) Result {
	name := "agentfleet-redteam-" + canary()
	sink, err := newStreamSink("unix", "@"+name)
	if err != nil {
		return Result{Outcome: NA, Evidence: "no abstract unix sockets here: " + oneLine(err.Error())}
	}
	defer sink.Close()
	cmd := `command -v perl >/dev/null || { printf 'no %s\n' perl; exit 0; }; perl -MSocket -e 'socket(my $s, PF_UNIX, SOCK_STREAM, 0) or die "socket: $!"; connect($s, pack_sockaddr_un("\0` + name + `")) or die "connect: $!"; print $s "hello"'`
	o, err := e.run(ctx, spec("abstract socket", steps(shell(cmd))))
	if err != nil {
		return errResult(err)
	}
	if hits := sink.Hits(); len(hits) > 0 {
		return Result{Outcome: Escaped, Evidence: "the host's abstract socket @" + name + " got a connection"}
	}
	if _, ok := o.rec.has("no perl"); ok {
		return Result{Outcome: NA, Evidence: "no perl in the task to connect with"}
	}
	return o.held("no connection")
}

func probeUDP(ctx context.Context, e *env) Result {
	sink, err := newUDPSink()
	if err != nil {
		return errResult(err)
	}
	defer sink.Close()
	port := sink.Addr[strings.LastIndex(sink.Addr, ":")+1:]
	o, err := e.run(ctx, spec("loopback udp", steps(shell("echo hello > /dev/udp/127.0.0.1/"+port+"; getent hosts agentfleet-redteam.example.com"))))
	if err != nil {
		return errResult(err)
	}
	if hits := sink.Hits(); len(hits) > 0 {
		return Result{Outcome: Escaped, Evidence: "the host's UDP listener on " + sink.Addr + " got a datagram"}
	}
	return o.held("no datagram")
}
