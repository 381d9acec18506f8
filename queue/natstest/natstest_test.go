package natstest_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/queue/natstest"
)

func TestMain(m *testing.M) { testenv.VerifyTestMain(m) }

func TestStartServesJetStream(t *testing.T) {
	s := natstest.Start(t)
	nc := s.Connect(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}}); err != nil {
		t.Fatalf("create stream: %v", err)
	}
	ack, err := js.Publish(ctx, "t.x", []byte("hi"))
	if err != nil || ack.Sequence != 1 {
		t.Fatalf("publish: ack %+v, err %v", ack, err)
	}
}

func TestStartClusterReplicatesStreams(t *testing.T) {
	testenv.SkipIfShort(t, "cluster start is slow")
	c := natstest.StartCluster(t, 3)
	nc := c.Connect(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "R", Subjects: []string{"r.>"}, Replicas: 3})
	if err != nil {
		t.Fatalf("create replicated stream: %v", err)
	}
	if got := st.CachedInfo().Config.Replicas; got != 3 {
		t.Fatalf("replicas = %d, want 3", got)
	}
	if _, err := js.Publish(ctx, "r.x", []byte("hi")); err != nil {
		t.Fatalf("publish: %v", err)
	}
}
