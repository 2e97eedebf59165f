# Longhaul: `make run` builds and runs the app; `make test` runs every test.
# Both install what is missing first (see .ci/deps.sh).

GO      ?= go
TAGS    := desktop,production,webkit2_41
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
BIN     := build/bin/longhaul
# The same binary without the desktop tag: headless mode and CLI only, no GTK.
HEADLESS_BIN := build/bin/longhaul-headless

.PHONY: run build frontend deps deps-test test test-go test-frontend test-e2e test-desktop bench bindings check-bindings clean

## run: build the desktop app and start it (headless, serving the UI to a browser, when there is no display)
run: deps build
	./$(BIN) $(ARGS)

## build: the desktop binary in build/bin
build: frontend
	$(GO) build -tags $(TAGS) -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) .

frontend:
	cd frontend && npm run build

deps:
	bash .ci/deps.sh run

deps-test:
	bash .ci/deps.sh test

## test: every test, offline: generated bindings up to date, Go (race detector on), frontend unit,
## UI in Chromium, the openai / Anthropic / Google Gen AI SDKs against the real binary, a session
## of the real Claude Code CLI through it, the real window under Xvfb
test: deps-test check-bindings frontend test-go test-frontend test-e2e test-desktop

test-go:
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...
	# The memory bounds, which the race detector's shadow memory hides (it skips them).
	$(GO) test -count=1 -run 'PeakRSS' ./proxy/

test-frontend:
	cd frontend && npm test

## test-e2e: the UI, the SDKs, and the real Claude Code CLI (40 rounds against an upstream with a
## small window) against the real binary. The CLI has its own package.json in
## frontend/tests/claude-code: a ~400 MB native binary, installed once there, never by `make run`.
test-e2e:
	$(GO) build -trimpath -o $(HEADLESS_BIN) .
	$(GO) build -trimpath -o build/bin/scripted-upstream ./proxy/proxytest/cmd/scripted-upstream
	cd frontend && LONGHAUL_BIN=$(CURDIR)/$(HEADLESS_BIN) SCRIPTED_UPSTREAM=$(CURDIR)/build/bin/scripted-upstream npm run test:e2e
	cd frontend && LONGHAUL_BIN=$(CURDIR)/$(HEADLESS_BIN) SCRIPTED_UPSTREAM=$(CURDIR)/build/bin/scripted-upstream npm run test:sdk
	cd frontend/tests/claude-code && LONGHAUL_BIN=$(CURDIR)/$(HEADLESS_BIN) SCRIPTED_UPSTREAM=$(CURDIR)/build/bin/scripted-upstream npm test

test-desktop: build
	bash .ci/desktop-smoke.sh $(BIN) build/bin/desktop.png

## bench: Longhaul as shipped (`longhaul --headless`, history and bodies recorded) beside a bare
## httputil.ReverseProxy and the proxy without the recorder, each its own program and process
## (app/recorder/cmd/bench-target), with the targets table (app/recorder/cmd/shipped-bench); then the proxy-only benchmarks, direct vs
## httputil.ReverseProxy vs Longhaul, with their summary table; then 60 s at 500 requests/s with
## the history recorder on and off (median latency of each). BENCH_ROUNDS (5) sets the rounds of
## the first table; BENCH_PROFILE=DIR also writes pprof profiles of the recorder's wiring.
BENCH_ROUNDS ?= 5
bench:
	$(GO) build -trimpath -o $(HEADLESS_BIN) .
	$(GO) build -trimpath -o build/bin/bench-target ./app/recorder/cmd/bench-target
	$(GO) build -trimpath -o build/bin/shipped-bench ./app/recorder/cmd/shipped-bench
	./build/bin/shipped-bench -longhaul $(HEADLESS_BIN) -rounds $(BENCH_ROUNDS) $(if $(BENCH_PROFILE),-profile $(BENCH_PROFILE))
	$(GO) test -run '^$$' -bench . -benchtime 2s ./proxy/
	$(GO) test -run '^$$' -bench HistoryUnderLoad -benchtime 60x ./app/recorder/

## bindings: regenerate frontend/wailsjs (the window's bindings and models.ts, the UI's types)
## from the facades app.GenerateBindings binds. This is what `wails generate module` (v2.16.0)
## does, without the CLI: build with the tag "bindings", run the result in the project folder
## (it reads wails.json and writes frontend/wailsjs), with the TypeScript options of wails.json.
BINDINGS_BIN := build/bin/wailsbindings
bindings:
	$(GO) build -buildvcs=false -tags bindings -o $(BINDINGS_BIN) .
	tsprefix= tssuffix= tsoutputtype=$$(node -p "require('./wails.json').bindings.ts_generation.outputType") \
		./$(BINDINGS_BIN) > $(BINDINGS_BIN).log

## check-bindings: regenerate frontend/wailsjs and fail if that changed it (a Go type or facade
## changed without `make bindings`). Compares with git's index, so new files count too.
check-bindings: bindings
	@if ! git diff --quiet -- frontend/wailsjs || [ -n "$$(git ls-files --others --exclude-standard -- frontend/wailsjs)" ]; then \
		git --no-pager diff --stat -- frontend/wailsjs; \
		git ls-files --others --exclude-standard -- frontend/wailsjs | sed 's/^/ new file: /'; \
		git --no-pager diff -- frontend/wailsjs | head -n 60; \
		echo "check-bindings: frontend/wailsjs is out of date with the Go code: run \`make bindings\` and commit frontend/wailsjs" >&2; \
		exit 1; \
	fi
	@echo "check-bindings: frontend/wailsjs matches the Go code"

clean:
	rm -rf build/bin frontend/dist/assets frontend/dist/index.html
