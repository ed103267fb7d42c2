# Ferry — the two set-up commands for a fresh Debian machine are `make demo` and `make test`.
# Both install what is missing first.

SWIFT      ?= swift
CONFIG     ?= debug
APT_PACKAGES := pkg-config libdbus-1-dev dbus-daemon dbus-bin libglib2.0-dev libglib2.0-bin \
                shared-mime-info python3-dbus python3-gi libsqlite3-dev sqlite3 \
                xvfb xclip xsel tk8.6 gir1.2-gtk-3.0 python3-xlib \
                libxcb1-dev libxcb-xfixes0-dev libwayland-dev sway wl-clipboard \
                xdg-desktop-portal fuse3 systemd desktop-file-utils binutils zlib1g-dev \
                nats-server libnats-dev openssl

.PHONY: all deps build test test-serial demo bench clean release programs install uninstall deb lint

# --- Installing (README, "Install") ------------------------------------------------------------
# The executables `make install` and `make deb` install, release builds each linked with the Swift
# runtime inside (Package.swift, staticSwiftRuntime). Everything else installed follows from this
# list and the files in services/: man pages and completions for each program with
# ArgumentParser help, every services/*.service and *.desktop with its paths, the interface XML.
PROGRAMS := ferry ferry-cli ferryd ferry-bridge

PREFIX         ?= /usr/local
DESTDIR        ?=
BINDIR         ?= $(PREFIX)/bin
DATADIR        ?= $(PREFIX)/share
MANDIR         ?= $(DATADIR)/man
DBUSSERVICEDIR ?= $(DATADIR)/dbus-1/services
USERUNITDIR    ?= $(PREFIX)/lib/systemd/user
AUTOSTARTDIR   ?= /etc/xdg/autostart
# What install wrote, for uninstall (the Debian package has none: dpkg keeps the list).
MANIFEST       ?= $(DATADIR)/ferry/install-manifest
# Where `make deb` leaves ferry_VERSION_ARCH.deb.
DEBDIR         ?= .build/deb

RELEASE_BIN    := .build/release
INSTALL_ENV = PROGRAMS="$(PROGRAMS)" BIN="$(RELEASE_BIN)" GENERATED=.build/install \
              MANUALS=.build/plugins/GenerateManual/outputs DESTDIR="$(DESTDIR)" PREFIX="$(PREFIX)" \
              BINDIR="$(BINDIR)" DATADIR="$(DATADIR)" MANDIR="$(MANDIR)" DBUSSERVICEDIR="$(DBUSSERVICEDIR)" \
              USERUNITDIR="$(USERUNITDIR)" AUTOSTARTDIR="$(AUTOSTARTDIR)" MANIFEST="$(MANIFEST)"

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

# Every test: unit tests, private-bus integration tests, interop with independent peers, CLI
# goldens, the desktop bridge on headless sway and Xvfb, continuity on a real nats-server. Each
# top-level suite runs in a process of its own, TEST_JOBS processes at a time, its tests one at a
# time (scripts/test-parallel.sh says why processes and not `swift test --parallel`): about 3
# minutes on 2 cores, against 8 for `make test-serial`, which runs them all in one process, one
# at a time. The install tests (Tests/InstallTests) install the release build: it is built first.
TEST_JOBS ?= 4
test: deps
	$(SWIFT) build --build-tests
	$(MAKE) --no-print-directory release
	FERRY_REQUIRE_RELEASE=1 FERRY_TEST_JOBS=$(TEST_JOBS) SWIFT=$(SWIFT) bash scripts/test-parallel.sh

test-serial: deps
	$(SWIFT) build --build-tests
	$(MAKE) --no-print-directory release
	FERRY_REQUIRE_RELEASE=1 $(SWIFT) test --skip-build --no-parallel

# The swift-format rules that .swift-format turns on, over every Swift file (scripts/lint.sh says
# which rules and why the formatter's layout findings are left out). CI runs it before the tests.
lint:
	SWIFT=$(SWIFT) bash scripts/lint.sh

# The main job: a private bus if there is no session bus, then the story told by scripts/demo.sh.
demo: deps
	$(SWIFT) build
	bash scripts/demo.sh

# Every benchmark of the project, side by side with its anchor, as one table. The benchmarks are
# a package of their own (Benchmarks/), so that `swift build` and CI here never build them; they
# start ferryd and ferry from this package's release folder (FERRY_BENCH_BIN).
bench: deps
	$(SWIFT) build -c release
	$(SWIFT) build -c release --package-path Benchmarks
	bash scripts/bench.sh
	BIN=$(CURDIR)/.build/release bash scripts/bridge-bench.sh
	FERRY_BENCH_BIN=$(CURDIR)/.build/release $(CURDIR)/Benchmarks/.build/release/continuity-bench | python3 scripts/bench-table.py

# The release build, and from its executables' own help the man pages (swift-argument-parser's
# generate-manual plugin, dated by the last commit) and the completion scripts, in .build/install.
release: deps
	$(SWIFT) build -c release
	rm -rf .build/plugins/GenerateManual/outputs    # the plugin adds pages, never removes old ones
	$(SWIFT) package generate-manual --multi-page \
	  --date "$$(git log -1 --format=%cs 2>/dev/null || date -u +%Y-%m-%d)"
	$(INSTALL_ENV) bash scripts/install.sh generate

# The programs installed, one word each (for tests and scripts).
programs:
	@echo $(PROGRAMS)

# Run `make` (or `make release`) as yourself first, then `sudo make install`.
install: release
	$(INSTALL_ENV) bash scripts/install.sh install

# Removes exactly what install recorded in $(MANIFEST) (same PREFIX and DESTDIR as install).
uninstall:
	$(INSTALL_ENV) bash scripts/install.sh uninstall

# A Debian package of the same files for /usr, built with dpkg-deb (scripts/deb.sh).
deb: release
	$(INSTALL_ENV) PREFIX=/usr BINDIR=/usr/bin DATADIR=/usr/share MANDIR=/usr/share/man \
	  DBUSSERVICEDIR=/usr/share/dbus-1/services USERUNITDIR=/usr/lib/systemd/user \
	  AUTOSTARTDIR=/etc/xdg/autostart MANIFEST= DEBDIR="$(DEBDIR)" bash scripts/deb.sh

clean:
	rm -rf .build
