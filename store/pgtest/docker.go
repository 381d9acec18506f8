package pgtest

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/testcontainers/testcontainers-go"
	tcpostgres "github.com/testcontainers/testcontainers-go/modules/postgres"
)

// Image is the Postgres image started when a Docker engine answers.
const Image = "postgres:16-alpine"

// dockerAnswers pings the engine at DOCKER_HOST (unix or tcp) or the default
// socket within a second, without logging.
func dockerAnswers(ctx context.Context) bool {
	network, addr := "unix", "/var/run/docker.sock"
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		switch {
		case strings.HasPrefix(h, "unix://"):
			addr = strings.TrimPrefix(h, "unix://")
		case strings.HasPrefix(h, "tcp://"):
			network, addr = "tcp", strings.TrimPrefix(h, "tcp://")
		default:
			return false
		}
	}
	if network == "unix" {
		if _, err := os.Stat(addr); err != nil {
			return false
		}
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://docker/_ping", nil)
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode == http.StatusOK
}

// startContainer runs Postgres in a container and returns the DSN of its
// postgres database and a function that removes the container.
func startContainer(ctx context.Context) (string, func(), error) {
	c, err := tcpostgres.Run(ctx, Image,
		tcpostgres.WithDatabase("postgres"), tcpostgres.WithUsername("postgres"), tcpostgres.WithPassword("postgres"),
		tcpostgres.BasicWaitStrategies(),
		testcontainers.WithCmdArgs("-c", "fsync=off", "-c", "max_connections=300"),
	)
	if err != nil {
		if c != nil {
			_ = testcontainers.TerminateContainer(c)
		}
		return "", nil, err
	}
	dsn, err := c.ConnectionString(ctx, "sslmode=disable")
	if err != nil {
		_ = testcontainers.TerminateContainer(c)
		return "", nil, err
	}
	return dsn, func() { _ = testcontainers.TerminateContainer(c) }, nil
}
