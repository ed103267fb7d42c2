# Ferry — the two set-up commands for a fresh Debian machine are `make demo` and `make test`.
# Both install what is missing first.

SWIFT      ?= swift
CONFIG     ?= debug
APT_PACKAGES := pkg-config libdbus-1-dev dbus-daemon dbus-bin libglib2.0-dev libglib2.0-bin \
                shared-mime-info python3-dbus python3-gi libsqlite3-dev sqlite3 \
                xvfb xclip

.PHONY: all deps build test demo bench clean

all: build

# Install the Debian packages the build, the tests and the demo need (only those missing).
deps:
	@missing=""; \
	for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO="sudo"; \
	  $$SUDO apt-get update -q && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	fi

build: deps
	$(SWIFT) build -c $(CONFIG)

# Every test: unit tests, private-bus integration tests, interop with independent peers, CLI goldens.
# One test at a time (about a minute): every suite shares one process whose Swift thread pool has
# one thread per core, and tests that start and stop daemons block a thread while they wait, so
# on 2 cores parallel suites starve each other and time-bounded expectations fail at random.
test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --no-parallel

# The main job: a private bus if there is no session bus, then the story told by scripts/demo.sh.
demo: deps
	$(SWIFT) build
	bash scripts/demo.sh

# Every benchmark of the project, side by side with its anchor, as one table.
bench: deps
	$(SWIFT) build -c release
	bash scripts/bench.sh
	BIN=$(CURDIR)/.build/release bash scripts/bridge-bench.sh

clean:
	rm -rf .build
