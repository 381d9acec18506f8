package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/cmd/internal/cli"
	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/natstest"
	"github.com/agentfleet/agentfleet/store/sqlite"
)

// TestServeRefusesPlaintextOffLoopback: off loopback the API needs its own
// certificate or behind_tls_proxy, and the error says what to set.
func TestServeRefusesPlaintextOffLoopback(t *testing.T) {
	base := ServeConfig{Token: "tk", DatabaseURL: "x.db"}
	for _, c := range []struct {
		name string
		edit func(*ServeConfig)
		want string // "" = valid
	}{
		{"default listen", func(*ServeConfig) {}, ""},
		{"loopback", func(c *ServeConfig) { c.Listen = "127.0.0.2:9000" }, ""},
		{"localhost", func(c *ServeConfig) { c.Listen = "localhost:9000" }, ""},
		{"ipv6 loopback", func(c *ServeConfig) { c.Listen = "[::1]:9000" }, ""},
		{"every interface", func(c *ServeConfig) { c.Listen = ":8080" }, "tls_cert_file and tls_key_file"},
		{"wildcard", func(c *ServeConfig) { c.Listen = "0.0.0.0:8080" }, "behind_tls_proxy: true (AGENTFLEET_BEHIND_TLS_PROXY, --behind-tls-proxy)"},
		{"public address", func(c *ServeConfig) { c.Listen = "10.0.0.5:8080" }, "is not a loopback address"},
		{"behind a proxy", func(c *ServeConfig) { c.Listen = ":8080"; c.BehindTLSProxy = true }, ""},
		{"own certificate", func(c *ServeConfig) { c.Listen = ":8080"; c.TLSCertFile, c.TLSKeyFile = "c.pem", "k.pem" }, ""},
		{"certificate without key", func(c *ServeConfig) { c.TLSCertFile = "c.pem" }, "must be set together"},
		{"both", func(c *ServeConfig) { c.TLSCertFile, c.TLSKeyFile, c.BehindTLSProxy = "c.pem", "k.pem", true }, "choose one"},
	} {
		cfg := base
		c.edit(&cfg)
		err := cfg.WithDefaults().Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
}

// TestNATSRefusesPlaintextOffLoopback: a nats:// server off loopback needs
// TLS (tls:// or a TLS file) or nats.allow_plaintext; the error names the
// keys and never the URL's credentials.
func TestNATSRefusesPlaintextOffLoopback(t *testing.T) {
	ca, _ := selfSigned(t)
	for _, c := range []struct {
		n    cli.NATSConfig
		want string
	}{
		{cli.NATSConfig{}, ""},
		{cli.NATSConfig{URL: "nats://localhost:4222,nats://[::1]:4223"}, ""},
		{cli.NATSConfig{URL: "nats://user:hunter2@nats-1:4222"}, "nats.allow_plaintext: true"},
		{cli.NATSConfig{URL: "nats://127.0.0.1:4222, nats-2:4222"}, "tls://nats-2:4222"},
		{cli.NATSConfig{URL: "tls://nats-1:4222,tls://nats-2:4222"}, ""},
		{cli.NATSConfig{URL: "nats://nats-1:4222", TLSCAFile: ca}, ""},
		{cli.NATSConfig{URL: "nats://nats-1:4222", AllowPlaintext: true}, ""},
	} {
		err := c.n.WithDefaults().Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.n.URL, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one saying %q", c.n.URL, err, c.want)
		case err != nil && strings.Contains(err.Error(), "hunter2"):
			t.Errorf("the error shows the password: %v", err)
		}
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key, PEM.
func selfSigned(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "agentfleet test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestServeTLS: with tls_cert_file and tls_key_file the API is served over
// HTTPS (a client trusting the certificate gets through; plain HTTP does
// not), and a key that does not load is named before anything listens.
func TestServeTLS(t *testing.T) {
	certFile, keyFile := selfSigned(t)
	ns := natstest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, err := queue.Open(ctx, ns.Connect(t), queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "d.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	d, err := dispatcher.New(st, q, dispatcher.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := ServeConfig{Listen: "127.0.0.1:0", Token: "tk", DatabaseURL: "x", TLSCertFile: certFile, TLSKeyFile: keyFile}.WithDefaults()
	ln, err := listenAPI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	log := slog.New(slog.DiscardHandler)
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serveOn(runCtx, ln, cfg, d, d.Handler(dispatcher.APIOptions{Token: "tk", ListenAddr: addr}), log)
	}()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("runServer: %v", err)
		}
	})

	pool := x509.NewCertPool()
	pemCert, _ := os.ReadFile(certFile)
	pool.AppendCertsFromPEM(pemCert)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 5 * time.Second}
	resp, err := hc.Get("https://" + addr + "/healthz") // the listener is open: the request waits for Serve
	if err != nil {
		t.Fatalf("HTTPS GET /healthz: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.TLS == nil {
		t.Fatalf("HTTPS /healthz: %d, TLS %v", resp.StatusCode, resp.TLS != nil)
	}
	if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("plain HTTP was served beside HTTPS")
		}
	}

	bad := cfg
	bad.TLSKeyFile = certFile
	if _, err := listenAPI(bad); err == nil || !strings.Contains(err.Error(), "tls_key_file") {
		t.Fatalf("a key that is not one: %v, want an error naming tls_key_file", err)
	}
}
