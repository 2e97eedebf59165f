# Longhaul: `make run` builds and runs the app; `make test` runs every test.
# Both install what is missing first (see .ci/deps.sh).

GO      ?= go
TAGS    := desktop,production,webkit2_41
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
BIN     := build/bin/longhaul
# The same binary without the desktop tag: headless mode and CLI only, no GTK.
HEADLESS_BIN := build/bin/longhaul-headless

.PHONY: run build frontend deps deps-test test test-go test-frontend test-e2e test-desktop bench bindings clean

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

## test: every test, offline: Go (race detector on), frontend unit, UI in Chromium, the real window under Xvfb
test: deps-test frontend test-go test-frontend test-e2e test-desktop

test-go:
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

test-frontend:
	cd frontend && npm test

test-e2e:
	$(GO) build -trimpath -o $(HEADLESS_BIN) .
	$(GO) build -trimpath -o build/bin/scripted-upstream ./proxy/proxytest/cmd/scripted-upstream
	cd frontend && LONGHAUL_BIN=$(CURDIR)/$(HEADLESS_BIN) SCRIPTED_UPSTREAM=$(CURDIR)/build/bin/scripted-upstream npm run test:e2e

test-desktop: build
	bash .ci/desktop-smoke.sh $(BIN) build/bin/desktop.png

## bench: proxy benchmarks, direct vs httputil.ReverseProxy vs Longhaul, with a summary table
bench:
	$(GO) test -run '^$$' -bench . -benchtime 2s ./proxy/

## bindings: regenerate frontend/wailsjs (needs the wails CLI v2.16.0)
bindings:
	wails generate module

clean:
	rm -rf build/bin frontend/dist/assets frontend/dist/index.html
