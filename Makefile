# tollgate — build, run and test on Debian 12.
#
#   make run    deps + build + the desktop window (or `serve` when there is no display)
#   make test   deps + every test: Go (race), frontend unit, browser end-to-end, window smoke
#
# Every system and npm package the project needs is installed here, never by hand.

SHELL := /bin/bash
GO    ?= go
TAGS  := desktop,production,webkit2_41
# Two binaries (ARCHITECTURE.md, "Two binaries"): BIN is the command line,
# built without tags so hooks and imports do not load GTK; WINDOW_BIN is
# the window (GTK, WebKitGTK), which `tollgate` with no verb execs.
BIN   := build/bin/tollgate
WINDOW_BIN := build/bin/tollgate-window
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

# Debian packages: build (cgo: sqlite3, GTK, WebKitGTK) and tests (a real
# browser, a real X server for the window, screenshots, clicks).
APT_BUILD := build-essential pkg-config libgtk-3-dev libwebkit2gtk-4.1-dev
APT_TEST  := xvfb xauth x11-apps imagemagick chromium fonts-dejavu-core xdotool dbus-x11 zstd prometheus
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# The binary also embeds the OpenCode plugin (integrations/opencode/embed.go).
GO_SOURCES := $(shell find . -name '*.go' -not -path './frontend/node_modules/*' 2>/dev/null) go.mod go.sum \
  $(wildcard integrations/opencode/index.js integrations/opencode/lib/*.js)
FRONTEND_SOURCES := $(shell find frontend/src frontend/index.html frontend/vite.config.ts frontend/tsconfig.json frontend/package.json -type f 2>/dev/null)

.PHONY: all deps deps-apt deps-npm frontend build run test test-go test-frontend test-e2e test-window test-harness vet bench bench-import bench-start fuzz clean

all: build

deps: deps-apt deps-npm

# Installs only what is missing, so a second run is quick and needs no network.
deps-apt:
	@missing=""; for p in $(APT_BUILD) $(APT_TEST); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "apt: installing$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

deps-npm: frontend/node_modules/.package-lock.json

frontend/node_modules/.package-lock.json: frontend/package.json frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund
	@touch $@

# The UI is embedded with go:embed; dist/.gitkeep keeps the embed compiling
# before the first build, and vite's emptyOutDir removes it, so it is restored.
frontend/dist/index.html: $(FRONTEND_SOURCES) frontend/node_modules/.package-lock.json
	cd frontend && npm run build
	@touch frontend/dist/.gitkeep

frontend: frontend/dist/index.html

$(BIN): $(GO_SOURCES) frontend/dist/index.html
	@mkdir -p $(dir $@)
	CGO_ENABLED=1 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $@ .

$(WINDOW_BIN): $(GO_SOURCES) frontend/dist/index.html
	@mkdir -p $(dir $@)
	CGO_ENABLED=1 $(GO) build -tags $(TAGS) -trimpath -ldflags "$(LDFLAGS)" -o $@ .

build: deps $(BIN) $(WINDOW_BIN)

# Opens the window where there is a display; elsewhere runs the headless
# server and prints the login URL, so `make run` works on any machine.
run: build
	@if [ -n "$$DISPLAY" ] || [ -n "$$WAYLAND_DISPLAY" ]; then \
	  exec ./$(BIN) $(ARGS); \
	else \
	  echo "no display: starting 'tollgate serve' (open the login URL below in a browser)"; \
	  exec ./$(BIN) serve $(ARGS); \
	fi

vet:
	$(GO) vet ./...
	@bad=$$(gofmt -l $$(git ls-files '*.go') 2>/dev/null); if [ -n "$$bad" ]; then echo "gofmt needed:"; echo "$$bad"; exit 1; fi

test: deps vet test-go test-frontend build test-e2e test-window test-harness test-package

test-go:
	$(GO) test -race -count=1 ./...

test-frontend: deps-npm
	cd frontend && npx tsc --noEmit && npx vitest run

test-e2e: $(BIN)
	cd frontend && TOLLGATE_BIN=$(CURDIR)/$(BIN) node --test --test-concurrency=1 e2e/

test-window: $(BIN) $(WINDOW_BIN)
	./test/window-smoke.sh $(BIN)

# The integrations end to end: the real Claude Code, Reasonix and OpenCode binaries
# (pinned in test/harness/package.json, installed here with npm ci; their
# native binaries ship inside the npm packages, so no install script runs)
# against a fake model provider and `tollgate serve`; then the dsh plugin's
# tests (node's test runner) against a real `tollgate serve`, and the OpenCode
# plugin's unit tests.
HARNESS_MODULES := test/harness/node_modules/.package-lock.json

$(HARNESS_MODULES): test/harness/package.json test/harness/package-lock.json
	cd test/harness && npm ci --no-audit --no-fund --ignore-scripts
	@touch $@

test-harness: $(BIN) $(HARNESS_MODULES)
	TOLLGATE_BIN=$(CURDIR)/$(BIN) TOLLGATE_HARNESS_MODULES=$(CURDIR)/test/harness/node_modules \
	  $(GO) test -count=1 -timeout 10m -v ./test/harness/
	TOLLGATE_BIN=$(CURDIR)/$(BIN) node --test --test-concurrency=1 integrations/dsh/test/
	node --test --test-concurrency=1 integrations/opencode/test/

# Benchmarks: medians over 6 runs; compare with benchstat.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./pricing/ ./guard/... ./storage/... ./app/... | tee build/bench.txt

# Import throughput against ccusage 20.0.24 (test/bench/package.json) on a
# corpus built from ../shared/data's Claude Code transcripts with fresh ids:
# 3 alternating runs each, medians, the ratio, the totals of both, a second
# import of the unchanged corpus. BENCH_SCALE=10 also imports a 10× corpus;
# BENCH_COMPARE=path/to/another/tollgate checks it stores the same rows.
BENCH_SCALE ?= 1
BENCH_COMPARE ?=
BENCH_MODULES := test/bench/node_modules/.package-lock.json

$(BENCH_MODULES): test/bench/package.json test/bench/package-lock.json
	cd test/bench && npm ci --no-audit --no-fund --ignore-scripts
	@# what ccusage's launcher does before it spawns the binary (scripts are off)
	chmod +x test/bench/node_modules/@ccusage/ccusage-linux-x64/bin/ccusage
	@touch $@

bench-import: $(BIN) $(BENCH_MODULES)
	$(GO) run ./test/bench/importbench -tollgate $(BIN) -data ../shared/data -scale $(BENCH_SCALE) -compare "$(BENCH_COMPARE)"

# What exec costs, the window binary (GTK and WebKit linked, every verb
# in it) against the command-line one, on version, a
# fail-open hook and a second import of bench-import's unchanged corpus:
# 7 alternating runs, medians of wall time and peak RSS.
# BENCH_OLD=path/to/another/tollgate compares that one instead.
BENCH_OLD ?= $(WINDOW_BIN)
bench-start: $(BIN) $(WINDOW_BIN)
	test/bench/startbench.sh $(BENCH_OLD) $(BIN) build/bench-import/corpus-1x/.claude/projects 7

# A short fuzz pass over every decoder (the seed corpora live in testdata/fuzz).
FUZZTIME ?= 20s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

clean:
	rm -rf build/bin frontend/dist/assets frontend/dist/index.html frontend/test-output test-output

# ---- Debian package (build/debian, build/desktop) -----------------------------
#   make package        build/bin/tollgate_<version>_<arch>.deb (dpkg-deb, no network)
#   make test-package   its control fields and files, then dpkg -i, run, purge (root)
APT_PACKAGE := dpkg-dev desktop-file-utils

.PHONY: package test-package deps-package

deps-package:
	@missing=""; for p in $(APT_PACKAGE); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "apt: installing$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

package: build deps-package
	build/debian/package.sh $(BIN) $(WINDOW_BIN) build/bin

test-package: package
	test/package-test.sh $(BIN) $(WINDOW_BIN) build/bin

# The binaries embed the entry and icons too (tollgate install --user).
$(BIN) $(WINDOW_BIN): $(wildcard build/desktop/tollgate.desktop build/desktop/icons/hicolor/*/apps/*)

# Both binaries carry the version (git describe) and the package refuses a
# pair that differ, so a commit that changes no Go file still rebuilds both:
# build/version changes only when the version does.
VERSION_STAMP := build/version
$(VERSION_STAMP): FORCE
	@mkdir -p $(dir $@)
	@echo '$(VERSION)' | cmp -s - $@ || echo '$(VERSION)' > $@
$(BIN) $(WINDOW_BIN): $(VERSION_STAMP)
.PHONY: FORCE
FORCE:
