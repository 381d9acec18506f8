package natsauth_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/natsauth"
	"github.com/agentfleet/agentfleet/queue/natstest"
)

func TestMain(m *testing.M) { testenv.VerifyTestMain(m) }

const waitTimeout = 30 * time.Second

// operatorSetup is a decentralized-auth server: an operator, a system
// account and the AGENTFLEET account (JetStream enabled) in a memory
// resolver, and creds files for the fleet's users.
type operatorSetup struct {
	srv   *natstest.Server
	creds map[string]string // user name -> creds file
}

// testUsers are the users of the test account, by name.
var testUsers = map[string]struct {
	role    queue.Role
	tenants []string
}{
	"dispatcher": {queue.RoleDispatcher, nil},
	"worker":     {queue.RoleWorker, nil},
	"worker-a":   {queue.RoleWorker, []string{"team-a"}}, // a pool of team-a
	"observer-a": {queue.RoleObserver, []string{"team-a"}},
}

func mustKey(t *testing.T, create func() (nkeys.KeyPair, error)) (nkeys.KeyPair, string) {
	t.Helper()
	kp, err := create()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	return kp, pub
}

func startOperator(t *testing.T) *operatorSetup {
	t.Helper()
	opKP, opPub := mustKey(t, nkeys.CreateOperator)
	op := jwt.NewOperatorClaims(opPub)
	op.Name = "agentfleet-test"
	_, sysPub := mustKey(t, nkeys.CreateAccount)
	op.SystemAccount = sysPub
	opJWT, err := op.Encode(opKP)
	if err != nil {
		t.Fatal(err)
	}
	opClaims, err := jwt.DecodeOperatorClaims(opJWT)
	if err != nil {
		t.Fatal(err)
	}
	resolver := &server.MemAccResolver{}
	sys := jwt.NewAccountClaims(sysPub)
	sys.Name = "SYS"
	sysJWT, err := sys.Encode(opKP)
	if err != nil {
		t.Fatal(err)
	}
	_, accPub := mustKey(t, nkeys.CreateAccount)
	acc := jwt.NewAccountClaims(accPub)
	acc.Name = "AGENTFLEET"
	acc.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
	// One scoped signing key per role: the account JWT holds the permissions.
	signers := map[string]nkeys.KeyPair{}
	for name, role := range testUsers {
		kp, pub := mustKey(t, nkeys.CreateAccount)
		p, err := queue.PermissionsFor(queue.Config{}, role.role, role.tenants...)
		if err != nil {
			t.Fatal(err)
		}
		acc.SigningKeys.AddScopedSigner(natsauth.Scope(name, pub, p))
		signers[name] = kp
	}
	accJWT, err := acc.Encode(opKP)
	if err != nil {
		t.Fatal(err)
	}
	for pub, token := range map[string]string{sysPub: sysJWT, accPub: accJWT} {
		if err := resolver.Store(pub, token); err != nil {
			t.Fatal(err)
		}
	}
	opts := natstest.Options(t.TempDir())
	opts.TrustedOperators = []*jwt.OperatorClaims{opClaims}
	opts.AccountResolver = resolver
	opts.SystemAccount = sysPub
	s := &operatorSetup{srv: natstest.StartWithOptions(t, opts), creds: map[string]string{}}
	dir := t.TempDir()
	for name, signer := range signers {
		creds, err := natsauth.UserCreds(signer, accPub, name, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name+".creds")
		if err := os.WriteFile(path, creds, 0o600); err != nil {
			t.Fatal(err)
		}
		s.creds[name] = path
	}
	return s
}

// connect connects with queue.Connect and a creds file, recording
// permission violations.
func (s *operatorSetup) connect(t *testing.T, user string) (*nats.Conn, <-chan error) {
	t.Helper()
	violations := make(chan error, 16)
	nc, err := queue.Connect(queue.ConnectOptions{URL: s.srv.URL, Name: user, CredsFile: s.creds[user], StartupWait: -1},
		nats.PermissionErrOnSubscribe(true),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			if errors.Is(err, nats.ErrPermissionViolation) {
				select {
				case violations <- err:
				default:
				}
			}
		}))
	if err != nil {
		t.Fatalf("connecting as %s with its creds file: %v", user, err)
	}
	t.Cleanup(nc.Close)
	return nc, violations
}

func waitViolation(t *testing.T, violations <-chan error, subject string) {
	t.Helper()
	select {
	case err := <-violations:
		if !strings.Contains(err.Error(), subject) {
			t.Fatalf("violation %q, want one for %s", err, subject)
		}
	case <-time.After(waitTimeout):
		t.Fatalf("no permission violation for %s", subject)
	}
}

// TestDecentralizedAuthCredsFiles: an operator, an account and user JWTs
// made with the jwt and nkeys libraries (as nsc does) carry the fleet's
// permissions. The dispatcher and the worker connect with creds files,
// open the streams and pass a task and its event; the worker cannot
// publish an approval; the observer reads its tenant's events and is
// refused another's; a client without credentials is refused.
func TestDecentralizedAuthCredsFiles(t *testing.T) {
	s := startOperator(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*waitTimeout)
	defer cancel()
	if nc, err := nats.Connect(s.srv.URL, nats.MaxReconnects(0)); err == nil {
		nc.Close()
		t.Fatal("the server accepted a client without credentials")
	}
	dispNC, dispViolations := s.connect(t, "dispatcher")
	disp, err := queue.Open(ctx, dispNC, queue.Config{})
	if err != nil {
		t.Fatalf("Open as the dispatcher: %v", err)
	}
	workerNC, workerViolations := s.connect(t, "worker")
	worker, err := queue.Open(ctx, workerNC, queue.Config{})
	if err != nil {
		t.Fatalf("Open as the worker: %v", err)
	}
	obsNC, obsViolations := s.connect(t, "observer-a")
	mine, err := obsNC.SubscribeSync("agentfleet.events.team-a.>")
	if err != nil {
		t.Fatal(err)
	}
	other, err := obsNC.SubscribeSync("agentfleet.events.team-b.>")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.NextMsg(waitTimeout); !errors.Is(err, nats.ErrPermissionViolation) {
		t.Fatalf("observer subscribing to team-b: %v, want a permission violation", err)
	}
	waitViolation(t, obsViolations, "agentfleet.events.team-b.>")

	puller, err := worker.NewPuller(ctx, queue.PullerConfig{Queues: []string{"default"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := disp.Enqueue(ctx, "default", queue.TaskMessage{Type: queue.MsgStart, TaskID: "t-1"}, ""); err != nil {
		t.Fatal(err)
	}
	d, err := puller.Pull(ctx)
	if err != nil || d.Message.TaskID != "t-1" {
		t.Fatalf("worker pull: %+v, %v", d, err)
	}
	pub, err := worker.NewEventPublisher()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pub.Close(ctx) }()
	ev := queue.Event{ID: "t-1-1", Kind: "SESSION_END", Tenant: "team-a", SessionID: "t-1", TaskID: "t-1", Seq: 1}
	if err := pub.PublishConfirmed(ctx, ev); err != nil {
		t.Fatal(err)
	}
	if err := d.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	msg, err := mine.NextMsg(waitTimeout)
	if err != nil || msg.Subject != "agentfleet.events.team-a.t-1.t-1.SESSION_END" {
		t.Fatalf("observer's event: %v, %v", msg, err)
	}

	var heard int
	stop, err := disp.ServeApprovals(func(context.Context, queue.ControlRequest) queue.ControlReply {
		heard++
		return queue.ControlReply{OK: true}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stop() }()
	short, cancelShort := context.WithTimeout(ctx, time.Second)
	defer cancelShort()
	if _, err := worker.AnswerApproval(short, queue.ControlRequest{Op: queue.OpApprove, TaskID: "t", CallID: "c"}); err == nil {
		t.Fatal("a worker's approval was answered")
	}
	waitViolation(t, workerViolations, "agentfleet.control.approvals")
	if heard != 0 {
		t.Fatalf("the approvals handler heard %d requests from the worker", heard)
	}
	select {
	case err := <-dispViolations:
		t.Fatalf("the dispatcher was refused: %v", err)
	default:
	}
}
