package redteam

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"

	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/embedded"
)

// probeWorkerNATSControl attacks with a compromised worker of tenant A's
// pool: its NATS user (the one an operator makes for a pool serving A,
// queue.PermissionsFor(worker, A)) subscribes to tenant B's control
// subjects, one session's, all of B's and everything under the control
// prefix (the layout before tenants were in the subject included), while
// the dispatcher steers a session of B served by B's pool. The steer's
// message is a canary: Escaped when A's connection receives it, Held when
// the server refused the subscriptions and B's session alone got it.
// The NATS server is an embedded one with the fleet's users, as `worker
// run` and the dispatcher connect to it.
func probeWorkerNATSControl(ctx context.Context, e *env) Result {
	const tenantA, tenantB = "rt-team-a", "rt-team-b"
	srv, users, err := poolNATS(e, tenantA, tenantB)
	if err != nil {
		return errResult(err)
	}
	defer func() { _ = srv.Shutdown() }()
	refusals := make(chan string, 8)
	attacker, err := nats.Connect(srv.ClientURL(), nats.UserInfo(users[tenantA].Name, users[tenantA].Password),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			select {
			case refusals <- oneLine(err.Error()):
			default:
			}
		}))
	if err != nil {
		return errResult(fmt.Errorf("connecting as pool %s's worker: %w", tenantA, err))
	}
	defer attacker.Close()
	prefix := queue.Config{}.WithDefaults().Prefix
	session := uuid.NewString()
	read := make(chan *nats.Msg, 8)
	for _, subject := range []string{prefix + ".control." + tenantB + "." + session, prefix + ".control." + tenantB + ".*",
		prefix + ".control.>", prefix + ".control.*"} {
		if _, err := attacker.ChanSubscribe(subject, read); err != nil {
			return errResult(err)
		}
	}
	_ = attacker.Flush()

	heard, stop, err := servePoolSession(ctx, srv, users[tenantB], tenantB, session)
	if err != nil {
		return errResult(err)
	}
	defer stop()
	mark := "rt-steer-" + canary()
	if err := steerAsDispatcher(ctx, srv, users["dispatcher"], tenantB, session, mark); err != nil {
		return errResult(fmt.Errorf("the dispatcher's steer of %s's session (the control path itself is broken): %w", tenantB, err))
	}
	who := fmt.Sprintf("pool %s's worker NATS user", tenantA)
	wait := time.NewTimer(2 * time.Second) // the steer was answered: anything A could read has been delivered by now
	defer wait.Stop()
	for {
		select {
		case m := <-read:
			if strings.Contains(string(m.Data), mark) {
				return Result{Outcome: Escaped, Evidence: fmt.Sprintf("%s read the steer of %s's session on %s", who, tenantB, m.Subject)}
			}
		case <-wait.C:
			why := "nothing arrived"
			select {
			case r := <-refusals:
				why = "NATS said: " + r
			default:
			}
			return Result{Outcome: Held, Evidence: fmt.Sprintf("%s subscribed to %s's control subjects and read nothing (%s); %s's session got the steer: %v",
				who, tenantB, why, tenantB, <-heard == mark)}
		case <-ctx.Done():
			return errResult(ctx.Err())
		}
	}
}

// poolNATS starts an embedded NATS server whose users are the dispatcher
// and one worker pool per tenant, each with queue.PermissionsFor's
// permissions and a random password; users are keyed by tenant and
// "dispatcher".
func poolNATS(e *env, tenants ...string) (*embedded.Server, map[string]embedded.User, error) {
	users := map[string]embedded.User{}
	add := func(key string, role queue.Role, tenants ...string) error {
		p, err := queue.PermissionsFor(queue.Config{}, role, tenants...)
		if err != nil {
			return err
		}
		users[key] = embedded.User{Name: key, Password: canary(), Permissions: p}
		return nil
	}
	if err := add("dispatcher", queue.RoleDispatcher); err != nil {
		return nil, nil, err
	}
	for _, t := range tenants {
		if err := add(t, queue.RoleWorker, t); err != nil {
			return nil, nil, fmt.Errorf("the NATS permissions of a worker pool of %s: %w", t, err)
		}
	}
	var list []embedded.User
	for _, u := range users {
		list = append(list, u)
	}
	srv, err := embedded.Start(embedded.Config{Port: embedded.RandomPort, DataDir: e.dir + "/pool-nats-" + canary(), Users: list})
	return srv, users, err
}

// servePoolSession serves session of tenant as u's worker does while it
// runs the session; heard gets the message of the first steer.
func servePoolSession(ctx context.Context, srv *embedded.Server, u embedded.User, tenant, session string) (heard <-chan string, stop func(), err error) {
	nc, err := nats.Connect(srv.ClientURL(), nats.UserInfo(u.Name, u.Password))
	if err != nil {
		return nil, nil, err
	}
	q, err := queue.Open(ctx, nc, queue.Config{})
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	got := make(chan string, 1)
	stopServe, err := q.ServeControl(tenant, session, func(_ context.Context, req queue.ControlRequest) queue.ControlReply {
		select {
		case got <- req.Message:
		default:
		}
		return queue.ControlReply{OK: true}
	})
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return got, func() { _ = stopServe(); nc.Close() }, nil
}

// steerAsDispatcher sends a steer with message to session of tenant as
// the dispatcher's user.
func steerAsDispatcher(ctx context.Context, srv *embedded.Server, u embedded.User, tenant, session, message string) error {
	nc, err := nats.Connect(srv.ClientURL(), nats.UserInfo(u.Name, u.Password))
	if err != nil {
		return err
	}
	defer nc.Close()
	q, err := queue.Open(ctx, nc, queue.Config{})
	if err != nil {
		return err
	}
	_, err = q.Control(ctx, tenant, session, queue.ControlRequest{Op: queue.OpSteer, Message: message})
	return err
}
