# agentfleet build targets. `make help` lists them.
SHELL := /bin/bash
GO ?= go
PKGS := ./...
BIN := bin
GOLANGCI_LINT_VERSION ?= v2.15.0
TEST_TIMEOUT ?= 40m

.DEFAULT_GOAL := help

.PHONY: help
help: ## List the targets with what they do
	@grep -hE '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  %-14s %s\n", $$1, $$2}'

.PHONY: build
build: ## Build every binary (dispatcher, worker, agentfleet-dev, simllm, ...) into bin/
	$(GO) build -o $(BIN)/ ./cmd/... ./llm/sim/cmd/simllm

.PHONY: nats-server
nats-server: ## Build nats-server, at the version go.mod names, into bin/ (no Docker, no download site)
	$(GO) build -o $(BIN)/nats-server github.com/nats-io/nats-server/v2

.PHONY: prod-try
prod-try: ## Bring up docs/operations.md's one-machine fleet on loopback, run 50 tasks, tear it down (CI runs it)
	bash deploy/linux/prod-try.sh

.PHONY: test
test: ## Run every test, integration included (set AGENTFLEET_REQUIRE_INTEGRATION=1 to fail on missing services)
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) $(PKGS)

# RACE_PKGS are the packages whose tests CI also runs under the race
# detector: all of them (about 6 minutes on two cores with a warm cache).
RACE_PKGS ?= ./...

.PHONY: test-race
test-race: ## Run the tests of RACE_PKGS (default all) under the race detector; CI runs it
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) $(RACE_PKGS)

.PHONY: lint
lint: ## gofmt check, go vet and golangci-lint (.golangci.yml: staticcheck, unused, depguard, ...)
	@files=$$(git ls-files '*.go') && [ -n "$$files" ] || { echo "lint: git ls-files listed no Go files"; exit 1; }; \
	out=$$(gofmt -l $$files); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION) run $(PKGS)

CROSS_TARGETS ?= darwin/amd64 darwin/arm64 windows/amd64

.PHONY: cross
cross: ## Cross-compile every binary for macOS and Windows (CI runs it)
	@for t in $(CROSS_TARGETS); do \
		echo "cross: $$t"; \
		GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) build -o /dev/null ./cmd/... || exit 1; \
	done

.PHONY: vet-cross
vet-cross: ## go vet every package, tests included, as macOS and Windows build them (CI runs it)
	GOOS=darwin $(GO) vet $(PKGS)
	GOOS=windows $(GO) vet $(PKGS)

.PHONY: bench
bench: ## Run the Go benchmarks (figures, not pass/fail)
	$(GO) test -run '^$$' -bench . -benchmem -timeout 60m $(PKGS)

.PHONY: smoke-live
smoke-live: ## Seed 000's end-to-end run against each real provider whose key is set (docs/operations.md); never in CI
	$(GO) test -tags smokelive -count=1 -v -timeout 30m -run 'TestSmokeLive$$' ./llm/smokelive/

.PHONY: fmt
fmt: ## Format the code
	gofmt -w $$(git ls-files '*.go')

.PHONY: deploy-check
deploy-check: ## Validate deploy/: manifests (kubeconform), alert rules (promtool), compose, dashboard, Dockerfiles
	GO=$(GO) bash deploy/check.sh

.PHONY: chaos
chaos: ## Break a production-shaped fleet (3 NATS nodes, Postgres, 3 workers) in 14 ways, 300 tasks each; fails on lost work
	$(GO) run ./cmd/chaos

.PHONY: chaos-short
chaos-short: ## The chaos run with 45 tasks per scenario (CI runs it)
	$(GO) run ./cmd/chaos -short

REDTEAM_RUN ?=

.PHONY: redteam
redteam: ## Attack a real fleet from inside its tasks (docs/redteam.md); fails if a probe escapes (REDTEAM_RUN=regexp selects)
	$(GO) build -o $(BIN)/redteam ./cmd/redteam
	$(BIN)/redteam $(if $(REDTEAM_RUN),-run '$(REDTEAM_RUN)')

FUZZTIME ?= 20s

.PHONY: fuzz
fuzz: ## Run every fuzzer for FUZZTIME each (CI runs it)
	FUZZTIME=$(FUZZTIME) bash .ci/fuzz.sh

DEMO_ADDR ?= 127.0.0.1:8080

.PHONY: demo
demo: ## Run a whole fleet in one process on a sample backlog; dashboard on DEMO_ADDR (DEMO_EXIT_WHEN_DONE=1: exit when done)
	$(GO) build -o $(BIN)/ ./cmd/agentfleet-dev
	@data=$$(mktemp -d -t agentfleet-demo-XXXXXX) && trap 'rm -rf "$$data"' EXIT && \
	$(BIN)/agentfleet-dev dev --demo examples/demo --data-dir "$$data" --nats-port -1 --addr $(DEMO_ADDR) \
		$(if $(filter 1 true yes,$(DEMO_EXIT_WHEN_DONE)),--exit-when-done) \
		$(if $(filter 1 true yes,$(DEMO_SIMULATED)),--simulated)
