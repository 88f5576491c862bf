# nsrun - a daemonless, rootless container runtime for untrusted code.
# `make demo` sets everything up on a fresh Debian 12 machine; `make check` runs the tests.

PREFIX      ?= /usr/local
VERSION     := 0.1.0
BUILD       := build
CC          ?= cc
PKGS        := libseccomp libcap yajl nettle dbus-1 libmicrohttpd libarchive
PKG_CFLAGS   = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS     = $(shell pkg-config --libs $(PKGS) 2>/dev/null)

# AppArmor 4 (Ubuntu 23.10+) restricts unprivileged user namespaces to programs whose
# profile allows them: install and load apparmor/nsrun where AppArmor is present and has
# the 4.0 policy ABI (older AppArmor neither restricts them nor knows the `userns` rule)
APPARMOR     ?= $(shell { [ -d /sys/kernel/security/apparmor ] || command -v apparmor_parser >/dev/null; } && \
	[ -e /etc/apparmor.d/abi/4.0 ] && echo yes || echo no)
APPARMOR_DIR ?= /etc/apparmor.d

# the default and strict seccomp profiles are compiled into nsrun (runtime/seccomp_builtin.c);
# a profile NAME.json in the installed directory overrides them, NSRUN_SECCOMP_PROFILES both
PROFILES_DIR ?= $(PREFIX)/share/nsrun/seccomp-profiles

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 \
	-Wformat-nonliteral -Wimplicit-fallthrough -Wvla -Wcast-align -Wpointer-arith -Wundef \
	-Wnull-dereference -Werror=implicit-function-declaration -Werror=return-type \
	-Werror=incompatible-pointer-types -Wno-missing-field-initializers
ifeq ($(WERROR),1)
WARN += -Werror
endif
HARDEN := -D_FORTIFY_SOURCE=3 -fstack-protector-strong -fstack-clash-protection -fPIE
SAN    :=
CFLAGS ?= -O2 -g
ALL_CFLAGS = -std=gnu11 -D_GNU_SOURCE $(WARN) $(HARDEN) $(SAN) $(CFLAGS) $(PKG_CFLAGS) \
	-DNSRUN_VERSION='"$(VERSION)"' -DNSRUN_INSTALLED_PROFILES='"$(PROFILES_DIR)"' -iquote runtime -MMD -MP
LDFLAGS_ALL = -pie -Wl,-z,relro,-z,now,-z,noexecstack $(SAN) $(LDFLAGS)

# nsrun itself is linked static-pie: a run then pays no dynamic loading (each shared
# library costs the start of every container; bench/RESULTS.md has the numbers).
# NSRUN_LINK=dynamic links it like the tests; sanitizer builds are always dynamic.
NSRUN_LINK ?= $(if $(SAN),dynamic,static)
# libmicrohttpd.a without its HTTPS half (runtime/api_notls.c says why)
# libarchive.a (docker cp, runtime/copy_archive.c) with the filters it reads and
# without its xar writer (runtime/static/archive_shim.c says why)
STATIC_LIBS := -lseccomp -lcap -lyajl_s -larchive -lacl -lbz2 -llzma -lz -lnettle -ldbus-1 -lmicrohttpd -pthread
# libdbus-1.a wants two functions of libsystemd, which has no static library in Debian
# (runtime/static/sd_daemon_shim.c says why two stand-ins are right for a client)
STATIC_OBJS := $(BUILD)/obj/static/sd_daemon_shim.o $(BUILD)/obj/static/archive_shim.o $(BUILD)/obj/api_notls.o
LD_HARDEN := -Wl,-z,relro,-z,now,-z,noexecstack
NSRUN_LDFLAGS = $(if $(filter static,$(NSRUN_LINK)),-static-pie $(LD_HARDEN) $(LDFLAGS),$(LDFLAGS_ALL))
NSRUN_LIBS = $(if $(filter static,$(NSRUN_LINK)),$(STATIC_OBJS) $(STATIC_LIBS),$(PKG_LIBS) -pthread)

LIB_SRCS := $(filter-out runtime/main.c runtime/api_notls.c,$(wildcard runtime/*.c))
LIB_OBJS := $(LIB_SRCS:runtime/%.c=$(BUILD)/obj/%.o)
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=$(BUILD)/tests/%)

# the tests: image store, unprivileged user and the suites
TEST_IMAGES ?= /var/tmp/nsrun-check/images
TEST_USER   ?= nsrun-test
SUITES      := tests/integration/*.t tests/security/*.t
# nsrun inside rootless podman runs podman as $(TEST_USER) whoever starts it: the
# rootless suite runs it, the root suite need not repeat it.  CPython's test_socket
# in nsrun against bwrap (25-compat-socket, about 55 s) compares what a payload sees,
# which does not depend on who started nsrun: the rootless suite (the product) runs it
# The suites of the new front doors (the pool, the OCI runtime, the Docker API's
# streams and docker cp, service networks and health, more than one id) run as root under the
# sanitizers (check-asan, whose root run is the same code's) and rootless; the plain
# root run leaves them to those two.  Testcontainers (a Node client of the same API
# code) and the registry pulls of 17-image-pull run rootless; root's pulls run in
# 31-image-refs.  All of it keeps CI within its 30 minutes.
# ASAN_DONE=1 (CI, which has just run check-asan as root on the same checkout): the
# plain root run runs only the files the sanitizer run left out, so that every file
# runs as root once (under the sanitizers or not) and rootless once.
ASAN_DONE   ?=
ROOT_SUITES  = $(filter-out %check-podman.t %25-compat-socket.t %29-pool.t %30-oci-runtime.t %32-docker-io.t \
	%32-service-health.t %32-service-networks.t %33-multi-id.t %33-testcontainers.t %34-docker-cp.t %17-image-pull.t,\
	$(if $(ASAN_DONE),$(filter-out $(ASAN_SUITES),$(wildcard $(SUITES))),$(wildcard $(SUITES))))
PYTESTS     := bindings/python/tests examples/test_isolation.py
# Debian's interpreter, which has python3-pytest (another python3 may come first on PATH)
PYTHON      ?= /usr/bin/python3
# what `make demo` needs: building nsrun, building the python image (mmdebstrap, jq,
# python3; uidmap when not root) and running it
DEMO_PKGS   := build-essential pkg-config libseccomp-dev libcap-dev libyajl-dev nettle-dev libarchive-dev libacl1-dev zlib1g-dev libbz2-dev liblzma-dev \
	libmicrohttpd-dev libdbus-1-dev mmdebstrap uidmap python3 jq
# and what the tests need besides (`make deps`, which `make check` runs first)
DEB_PKGS    := $(DEMO_PKGS) curl iproute2 procps psmisc util-linux golang-github-containers-common golang-github-docker-docker-dev \
	shellcheck cppcheck valgrind clang libclang-rt-14-dev python3-pytest python3-setuptools \
	python3-jsonschema python3-docker systemd dbus-daemon time skopeo umoci docker-registry qemu-system-x86 cpio golang-go \
	bubblewrap libarchive-tools attr podman runc python3-redis python3-psycopg2 redis-server hyperfine crun fuse-overlayfs strace passt slirp4netns \
	help2man containerd nodejs
SUDO        := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: man bench all deps demo-deps image demo check docker-cli testcontainers-node runtime-tools oci-validation check-unit check-root check-rootless test-image service-image \
	service-image-store compat-image compat-image-store oci-test-images test-user \
	asan check-asan check-vm lint valgrind install check-install clean fuzz soak soak-pool

all: $(BUILD)/nsrun $(BUILD)/nsrun-probe $(BUILD)/agent-sandbox $(BUILD)/sandboxes/landlock-sandbox $(BUILD)/sandboxes/seccomp-bpf

# the man page, made from --help and --version (so it says what the binary does) and
# docs/nsrun.h2m (description, environment, exit status)
man: $(BUILD)/nsrun.1
$(BUILD)/nsrun.1: $(BUILD)/nsrun docs/nsrun.h2m
	@echo '  MAN     $@'
	@help2man --no-info --no-discard-stderr --include=docs/nsrun.h2m --name="run untrusted code in a rootless container" \
		--output=$@ $(BUILD)/nsrun

$(BUILD)/obj/%.o: runtime/%.c | $(BUILD)/obj
	@echo '  CC      $<'
	@$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/obj/static/%.o: runtime/static/%.c
	@mkdir -p $(@D)
	@echo '  CC      $<'
	@$(CC) $(ALL_CFLAGS) -c $< -o $@

# .incbin reads the profiles when this object is assembled: -MMD does not see them
$(BUILD)/obj/seccomp_builtin.o: seccomp-profiles/default.json seccomp-profiles/strict.json
$(BUILD)/obj/pool.o: runtime/pool_zygote.py

$(BUILD)/libnsrun.a: $(LIB_OBJS)
	@echo '  AR      $@'
	@$(AR) rcs $@ $^

$(BUILD)/nsrun: $(BUILD)/obj/main.o $(BUILD)/libnsrun.a $(if $(filter static,$(NSRUN_LINK)),$(STATIC_OBJS))
	@echo '  LINK    $@'
	@$(CC) $(NSRUN_LDFLAGS) -o $@ $(BUILD)/obj/main.o $(BUILD)/libnsrun.a $(NSRUN_LIBS)

# the probe is ours, static, bind-mounted into test runs: tests do not depend on the image
$(BUILD)/nsrun-probe: tests/probe/nsrun-probe.c | $(BUILD)/obj
	@echo '  CC      $@ (static)'
	@$(CC) -std=gnu11 -O2 -Wall -Wextra -static -o $@ $<

# the seccomp filters of agents' sandboxes, for integration/25-agent-sandboxes.t
# (static: the tests run it inside bwrap sandboxes and staged copies)
$(BUILD)/agent-sandbox: tests/sandboxes/agent-sandbox.c | $(BUILD)/obj
	@echo '  CC      $@ (static)'
	@$(CC) -std=gnu11 -O2 -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror) -static -o $@ $< -lseccomp

# the agent sandboxes of 26-agent-sandboxes-tiers.t: Codex's Landlock ruleset, and a
# profile compiler for bwrap --seccomp (nsrun's own profile code)
$(BUILD)/sandboxes/landlock-sandbox: tests/sandboxes/landlock-sandbox.c
	@mkdir -p $(@D)
	@echo '  CC      $@'
	@$(CC) -std=gnu11 -O2 -Wall -Wextra $(if $(WERROR),-Werror) -o $@ $<

$(BUILD)/sandboxes/seccomp-bpf: tests/sandboxes/seccomp-bpf.c $(BUILD)/libnsrun.a
	@mkdir -p $(@D)
	@echo '  CC      $@'
	@$(CC) $(ALL_CFLAGS) $(LDFLAGS_ALL) -o $@ $< $(BUILD)/libnsrun.a $(PKG_LIBS)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libnsrun.a $(BUILD)/obj/cli-only.o | $(BUILD)/tests
	@echo '  CC      $@'
	@$(CC) $(ALL_CFLAGS) $(LDFLAGS_ALL) -o $@ $< $(BUILD)/obj/cli-only.o $(BUILD)/libnsrun.a $(PKG_LIBS) -pthread

# the command line parser of main.c alone (no main): for the fuzzer and the unit tests
$(BUILD)/obj/cli-only.o: runtime/main.c | $(BUILD)/obj
	@echo '  CC      $@ (parser only)'
	@$(CC) $(ALL_CFLAGS) -DNSRUN_CLI_ONLY -Wno-unused-function -Wno-unused-const-variable -c $< -o $@

$(BUILD)/tests/fuzz_%: tests/fuzz/fuzz_%.c $(BUILD)/libnsrun.a $(BUILD)/obj/cli-only.o | $(BUILD)/tests
	@echo '  CC      $@'
	@$(CC) $(ALL_CFLAGS) $(LDFLAGS_ALL) -o $@ $< $(BUILD)/obj/cli-only.o $(BUILD)/libnsrun.a $(PKG_LIBS) -pthread

$(BUILD)/obj $(BUILD)/tests:
	mkdir -p $@

-include $(wildcard $(BUILD)/obj/*.d)

# ---- set-up ----

# deps: every package of DEB_PKGS (the tests'); demo-deps: DEMO_PKGS alone
deps demo-deps:
	@missing=$$(dpkg-query -W -f='$${db:Status-Status} $${Package}\n' 2>/dev/null | \
		awk -v want='$(if $(filter deps,$@),$(DEB_PKGS),$(DEMO_PKGS))' '$$1 == "installed" { have[$$2] = 1 } \
			END { n = split(want, w, " "); for (i = 1; i <= n; i++) if (!(w[i] in have)) print w[i] }'); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		$(SUDO) apt-get update -q && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q --no-install-recommends $$missing; \
	fi

# the default image, `python` (Debian 12 with python3), built once and reused (after
# nsrun: nsrun-image has it check the image before it lands)
image: demo-deps all
	@if [ -f "$${NSRUN_IMAGES:-$${XDG_DATA_HOME:-$$HOME/.local/share}/nsrun/images}/python/image.json" ]; then \
		echo "image python: already built"; \
	else rootfs-tools/nsrun-image build python --include python3; fi

demo: demo-deps all image
	@echo "+ $(BUILD)/nsrun --image python examples/hello.py"
	@$(BUILD)/nsrun --image python examples/hello.py

# ---- tests ----

check-unit: $(UNIT_BINS) $(FUZZ_BINS)
	@echo "== unit tests"
	prove $(UNIT_BINS)
	@echo "== fuzz corpus replay"
	@for f in $(FUZZ_BINS); do n=$${f##*/fuzz_}; \
		[ -d tests/fuzz/corpus/$$n ] || { echo "no corpus tests/fuzz/corpus/$$n for $$f"; exit 1; }; \
		$$f tests/fuzz/corpus/$$n/* >/dev/null || exit 1; \
		echo "replayed $$(ls tests/fuzz/corpus/$$n | wc -l) inputs through $${f##*/}"; done

# the tests' store must be readable by the unprivileged user: reuse `make image`'s image if there is one
USER_STORE = $${NSRUN_IMAGES:-$${XDG_DATA_HOME:-$$HOME/.local/share}/nsrun/images}
test-image: all
	@if [ ! -f $(TEST_IMAGES)/python/image.json ]; then \
		mkdir -p $(TEST_IMAGES) && chmod 755 $(TEST_IMAGES) $$(dirname $(TEST_IMAGES)) && \
		if [ -f "$(USER_STORE)/python/image.json" ] && [ "$(USER_STORE)" != "$(TEST_IMAGES)" ]; then \
			echo "test image: copying $(USER_STORE)/python"; \
			cp -a "$(USER_STORE)/python" $(TEST_IMAGES)/.python.copy && \
			mv $(TEST_IMAGES)/.python.copy $(TEST_IMAGES)/python; \
		else rootfs-tools/nsrun-image build python --include python3 --store $(TEST_IMAGES); fi; fi

# the services' tests (Redis, PostgreSQL): one image holding both, built once (one
# mmdebstrap run is much cheaper than two); the README builds them apart as redis and postgres
service-image: all service-image-store

# the image alone, without building nsrun (CI builds it beside the other steps)
service-image-store:
	@if [ ! -f $(TEST_IMAGES)/services/image.json ]; then \
		mkdir -p $(TEST_IMAGES) && chmod 755 $(TEST_IMAGES) $$(dirname $(TEST_IMAGES)) && \
		rootfs-tools/nsrun-image build services --include redis-server,postgresql --store $(TEST_IMAGES) --quiet; fi

# the Docker clients' test images redis:7 and postgres:16 (OCI image layouts, made
# from the services image's files by tests/images/build-oci-test-images.sh; pushed to a
# loopback registry by the tests that use them), beside the store; made again when
# the script, an entrypoint or the services image changes
OCI_TEST_IMAGES ?= $(patsubst %/,%,$(dir $(TEST_IMAGES)))/oci-images
oci-test-images: service-image-store
	@want=$$(cat tests/images/* $(TEST_IMAGES)/services/image.json | sha256sum | cut -d' ' -f1); \
	if [ "$$(cat $(OCI_TEST_IMAGES)/.inputs 2>/dev/null)" != "$$want" ]; then \
		tests/images/build-oci-test-images.sh $(TEST_IMAGES)/services/rootfs $(OCI_TEST_IMAGES) >/dev/null && \
		echo "$$want" >$(OCI_TEST_IMAGES)/.inputs && chmod 755 $(OCI_TEST_IMAGES) && \
		echo "  OCI     $(OCI_TEST_IMAGES): redis:7, postgres:16"; fi

# programs as users run them, for the compatibility tests (one image, built once):
# python3 with CPython's own test suite, Node.js and netbase (issue 24); a JVM, a Go
# program (fzf) and numpy on threaded OpenBLAS under the memory limit (issue 22)
COMPAT_PKGS := python3,libpython3.11-testsuite,nodejs,netbase,openjdk-17-jre-headless,fzf,python3-numpy,libopenblas0-pthread
compat-image: all compat-image-store

# built again (--force) when COMPAT_PKGS is not what the image was built with
compat-image-store:
	@f=$(TEST_IMAGES)/compat/image.json; want=$$(printf '%s' '$(COMPAT_PKGS)' | jq -Rc 'split(",")'); \
	if [ ! -f $$f ] || [ "$$(jq -c .source.include $$f 2>/dev/null)" != "$$want" ]; then \
		mkdir -p $(TEST_IMAGES) && chmod 755 $(TEST_IMAGES) $$(dirname $(TEST_IMAGES)) && \
		rootfs-tools/nsrun-image build compat --include $(COMPAT_PKGS) --store $(TEST_IMAGES) --quiet \
			$$([ -f $$f ] && echo --force); fi

# the docker CLI for tests/integration/27-docker-api.t, taken out of Debian's docker.io
# package without installing it (its daemon is never wanted here)
DOCKER_CLI := $(BUILD)/tools/docker
docker-cli: $(DOCKER_CLI)
$(DOCKER_CLI):
	@mkdir -p $(BUILD)/tools && d=$$(mktemp -d) && chmod 755 $$d && \
	(cd $$d && apt-get download -q docker.io >/dev/null 2>&1 || \
		{ echo "nsrun: make docker-cli: apt-get download docker.io failed (run apt-get update?)" >&2; exit 1; }) && \
	dpkg-deb -x $$d/docker.io_*.deb $$d/x && cp $$d/x/usr/bin/docker $@ && rm -rf $$d && echo "  GET     $@ (from Debian's docker.io)"

# opencontainers/runtime-tools' validation suite (docs/oci-runtime.md, "Conformance"):
# (in build/runtime-tools, not build/tools: 290 MB that check-rootless need not copy)
# runtimetest, the suite's rootfs and one TAP program a validation/NAME directory,
# built offline with Debian's Go from a runtime-tools source tree and its vendor/
# directory.  Debian's golang-github-opencontainers-runtime-tools-dev (the commit
# below) ships the library but not validation/ (its mndrix/tap-go is not packaged
# in Debian), so the tree is a checkout of that commit: RUNTIME_TOOLS_SRC=DIR
RUNTIME_TOOLS_SRC    ?= $(BUILD)/runtime-tools-src
RUNTIME_TOOLS_COMMIT := 0105384f68e16803891d0a17d9067b1def6a2778
RUNTIME_TOOLS        := $(BUILD)/runtime-tools
runtime-tools: $(RUNTIME_TOOLS)/runtimetest
$(RUNTIME_TOOLS)/runtimetest:
	@s=$(RUNTIME_TOOLS_SRC); [ -d $$s/validation ] && [ -d $$s/vendor ] || { \
		echo "nsrun: make runtime-tools: no runtime-tools source tree with validation/ and vendor/ at $$s" >&2; \
		echo "  hint: git clone https://github.com/opencontainers/runtime-tools $$s && git -C $$s checkout $(RUNTIME_TOOLS_COMMIT)" >&2; exit 1; }
	@mkdir -p $(RUNTIME_TOOLS)/validation && o=$(CURDIR)/$(RUNTIME_TOOLS) && g=$(CURDIR)/$(BUILD)/go-runtime-tools && \
	cd $(RUNTIME_TOOLS_SRC) && export GOFLAGS=-mod=vendor GOPROXY=off GOPATH=$$g/path GOCACHE=$$g/cache CGO_ENABLED=0 && \
	for d in validation/*/; do n=$$(basename $$d); [ $$n = util ] && continue; \
		go build -o $$o/validation/$$n.t ./$$d || exit 1; done && \
	cp rootfs-*.tar.gz $$o/ && go build -tags "netgo osusergo" -o $$o/runtimetest ./cmd/runtimetest && \
	echo "  GO      $(RUNTIME_TOOLS) (runtime-tools $$(git describe --always 2>/dev/null || echo '?'))"

# the whole suite as root and as $(TEST_USER); not in CI: it takes minutes, and the
# source tree cannot be had offline (30-oci-runtime.t tests what the suite found)
oci-validation: all runtime-tools test-user
	@tests/oci-validation.sh
	@if [ "$$(id -u)" = 0 ]; then tests/oci-validation.sh --user $(TEST_USER); fi

# Testcontainers for Node.js (tests/testcontainers: the versions pinned by its
# package-lock.json) for 33-testcontainers.t, from the npm registry; next to nsrun
# so the rootless suite's staged copy has it too
TESTCONTAINERS := $(BUILD)/tools/testcontainers
testcontainers-node: $(TESTCONTAINERS)/node_modules/.package-lock.json
$(TESTCONTAINERS)/node_modules/.package-lock.json: tests/testcontainers/package.json tests/testcontainers/package-lock.json
	@command -v npm >/dev/null || { echo "nsrun: make testcontainers-node: no npm (apt-get install npm)" >&2; exit 1; }
	@mkdir -p $(TESTCONTAINERS) && cp tests/testcontainers/package.json tests/testcontainers/package-lock.json $(TESTCONTAINERS)/ && \
	cd $(TESTCONTAINERS) && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null && \
	echo "  NPM     $(TESTCONTAINERS) (Testcontainers for Node.js)"

test-user:
	@if [ "$$(id -u)" = 0 ] && ! id -u $(TEST_USER) >/dev/null 2>&1; then \
		useradd --create-home --shell /bin/bash $(TEST_USER) && echo "created user $(TEST_USER)"; fi

TEST_ENV = NSRUN_IMAGES=$(TEST_IMAGES) NSRUN_TESTS_MUST_WORK=$${NSRUN_TESTS_MUST_WORK:-0}

check-root: deps all test-image service-image compat-image oci-test-images docker-cli testcontainers-node
	@if [ "$$(id -u)" != 0 ]; then echo "== root suite: SKIPPED (not root; run make check as root for both suites)"; exit 0; fi; \
	echo "== integration and security suites as root"; \
	$(TEST_ENV) NSRUN=$(CURDIR)/$(BUILD)/nsrun NSRUN_PROBE=$(CURDIR)/$(BUILD)/nsrun-probe \
		NSRUN_SECCOMP_PROFILES=$(CURDIR)/seccomp-profiles prove --timer --exec bash $(ROOT_SUITES) && \
	echo "== Python client tests as root" && \
	$(TEST_ENV) NSRUN=$(CURDIR)/$(BUILD)/nsrun NSRUN_SECCOMP_PROFILES=$(CURDIR)/seccomp-profiles \
		PYTHONPATH=$(CURDIR)/bindings/python $(PYTHON) -m pytest -q -p no:cacheprovider $(PYTESTS)

# as root: a staged copy run as $(TEST_USER) (the checkout may not be readable by it);
# as a user: the suites run as that user
check-rootless: deps all test-image service-image compat-image oci-test-images test-user docker-cli testcontainers-node
	@if [ "$$(id -u)" != 0 ]; then \
		echo "== integration and security suites as $$(id -un) (rootless)"; \
		$(TEST_ENV) NSRUN=$(CURDIR)/$(BUILD)/nsrun NSRUN_PROBE=$(CURDIR)/$(BUILD)/nsrun-probe \
			NSRUN_SECCOMP_PROFILES=$(CURDIR)/seccomp-profiles prove --timer --exec bash $(SUITES) || exit 1; \
		echo "== Python client tests as $$(id -un) (rootless)"; \
		$(TEST_ENV) NSRUN=$(CURDIR)/$(BUILD)/nsrun NSRUN_SECCOMP_PROFILES=$(CURDIR)/seccomp-profiles \
			PYTHONPATH=$(CURDIR)/bindings/python $(PYTHON) -m pytest -q -p no:cacheprovider $(PYTESTS); \
		exit $$?; fi; \
	stage=$$(mktemp -d /tmp/nsrun-check.XXXXXX) && trap 'rm -rf "$$stage"' EXIT && \
	mkdir -p $$stage/build && cp $(BUILD)/nsrun $(BUILD)/nsrun-probe $(BUILD)/agent-sandbox $$stage/build/ && cp -r $(BUILD)/sandboxes $(BUILD)/tools $$stage/build/ && \
	cp -r tests seccomp-profiles examples rootfs-tools bindings docs $$stage/ && chmod -R a+rX $$stage && \
	echo "== integration and security suites as $(TEST_USER) (rootless)" && \
	cd $$stage && runuser -u $(TEST_USER) -- env -i PATH=/usr/local/bin:/usr/bin:/bin \
		HOME=$$(getent passwd $(TEST_USER) | cut -d: -f6) LANG=C.UTF-8 $(TEST_ENV) \
		NSRUN=$$stage/build/nsrun NSRUN_PROBE=$$stage/build/nsrun-probe \
		NSRUN_SECCOMP_PROFILES=$$stage/seccomp-profiles prove --timer --exec bash $(SUITES) && \
	echo "== Python client tests as $(TEST_USER) (rootless)" && \
	runuser -u $(TEST_USER) -- env -i PATH=/usr/local/bin:/usr/bin:/bin \
		HOME=$$(getent passwd $(TEST_USER) | cut -d: -f6) LANG=C.UTF-8 $(TEST_ENV) \
		NSRUN=$$stage/build/nsrun NSRUN_SECCOMP_PROFILES=$$stage/seccomp-profiles \
		PYTHONPATH=$$stage/bindings/python $(PYTHON) -m pytest -q -p no:cacheprovider $(PYTESTS)

check: deps check-unit check-install check-root check-rootless

# the soak (tests/soak/soak.py): SOAK_SEQUENTIAL runs in a row, SOAK_CONCURRENT runs
# SOAK_PARALLEL at a time, SOAK_FAULTS runs SIGKILLed at a random moment, as the
# unprivileged user (from a staged copy when started as root); one summary line per
# phase.  integration/22-soak.t is its short version in `make check`.
SOAK_SEQUENTIAL ?= 10000
SOAK_CONCURRENT ?= 1000
SOAK_PARALLEL   ?= $(shell echo $$((4 * $$(nproc))))
SOAK_FAULTS     ?= 500
SOAK_ARGS = --sequential $(SOAK_SEQUENTIAL) --concurrent $(SOAK_CONCURRENT) --parallel $(SOAK_PARALLEL) \
	--faults $(SOAK_FAULTS) --progress 1000
soak: all test-image test-user
	@if [ "$$(id -u)" != 0 ]; then \
		NSRUN_IMAGES=$(TEST_IMAGES) NSRUN_SECCOMP_PROFILES=$(CURDIR)/seccomp-profiles $(PYTHON) tests/soak/soak.py \
			--nsrun $(BUILD)/nsrun --probe $(BUILD)/nsrun-probe $(SOAK_ARGS); exit $$?; fi; \
	stage=$$(mktemp -d /tmp/nsrun-check.XXXXXX) && trap 'rm -rf "$$stage"' EXIT && \
	mkdir -p $$stage/build $$stage/tests && cp $(BUILD)/nsrun $(BUILD)/nsrun-probe $$stage/build/ && \
	cp -r tests/soak $$stage/tests/ && cp -r seccomp-profiles $$stage/ && chmod -R a+rX $$stage && \
	cd $$stage && runuser -u $(TEST_USER) -- env -i PATH=/usr/local/bin:/usr/bin:/bin \
		HOME=$$(getent passwd $(TEST_USER) | cut -d: -f6) LANG=C.UTF-8 NSRUN_IMAGES=$(TEST_IMAGES) \
		NSRUN_SECCOMP_PROFILES=$$stage/seccomp-profiles $(PYTHON) tests/soak/soak.py \
		--nsrun build/nsrun --probe build/nsrun-probe $(SOAK_ARGS)

# the pool's soak (tests/soak/pool-soak.py, issue 20): POOL_SOAK_REQUESTS mixed
# requests (good, failing, timing out, hostile) through one pool, as the user who
# runs make; every answer checked, the zygote's PSS flat, nothing left.  Not in CI;
# integration/29-pool.t runs a short one.
POOL_SOAK_REQUESTS ?= 10000
soak-pool: all test-image
	NSRUN=$(CURDIR)/$(BUILD)/nsrun NSRUN_IMAGES=$(TEST_IMAGES) NSRUN_SECCOMP_PROFILES=$(CURDIR)/seccomp-profiles \
		$(PYTHON) tests/soak/pool-soak.py --requests $(POOL_SOAK_REQUESTS) --progress

# ---- analysis ----

asan:
	$(MAKE) BUILD=build-asan SAN="-fsanitize=address,undefined -fno-omit-frame-pointer" \
		HARDEN="" CFLAGS="-O1 -g" all

# the integration and security suites against the ASan/UBSan build (as the caller),
# less those of the image tool (shell, not C: nothing for the sanitizers to see) and
# the 100-run leak check (the plain build runs it twice), podman's (the probes of
# nsrun check run under ASan in 20-check and 22-check-sandboxes), and the two that spend
# their time waiting on timeouts and many short runs, whose code paths the others
# cover under the sanitizers (07-timeout: 16-json's timeouts; 22-soak: every outcome
# has its own test), and CPython's test_socket against bwrap (25-compat-socket: 75 s
# of the payload's own time; nsrun's side of it is 25-etc-hosts'): they keep CI within its budget.
# Also left out: the image import's security tests (40-42: nsrun-image is shell; the
# deep image.json they feed nsrun is in the fuzz corpus, replayed by check-unit), and
# the agents' sandboxes at lower tiers (26-agent-sandboxes-tiers: the minimal tier
# limits memory with RLIMIT_DATA, under which ASan's own allocator cannot map its
# shadow; the tiers' code runs under ASan in 25-tiers), and Testcontainers for Node
# (33-testcontainers: its time is node's and PostgreSQL's; the API paths it drives, the
# reaper and exec start without an upgrade, run under ASan in 32-docker-io)
# Left out too, for CI's 30 minutes: suites whose time is spent waiting on what is not
# nsrun's C (21-stdio's sleeps, 09-signals' signals, pasta, the agents' sandboxes'
# batteries, the registry of 31-image-refs), whose code paths run under the
# sanitizers in 03-command-mode, 16-json, 22-nesting, 25-tiers and 27-tier-fallback.
ASAN_SUITES = $(filter-out %image-tool.t %image-pull.t %image-layers.t %no-leaks.t %check-podman.t \
	%07-timeout.t %22-soak.t %25-compat-socket.t %40-image-import-hostile.t %41-image-import-bounds.t \
	%42-image-import-race.t %26-agent-sandboxes-tiers.t %33-testcontainers.t %21-stdio.t %24-network-pasta.t \
	%25-agent-sandboxes.t %09-signals.t %31-image-refs.t,$(wildcard $(SUITES)))
check-asan: deps asan test-image service-image compat-image-store docker-cli testcontainers-node
	@echo "== integration and security suites with AddressSanitizer and UBSan"
	$(TEST_ENV) NSRUN=$(CURDIR)/build-asan/nsrun NSRUN_PROBE=$(CURDIR)/$(BUILD)/nsrun-probe \
		NSRUN_SECCOMP_PROFILES=$(CURDIR)/seccomp-profiles UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 NSRUN_TEST_SANITIZER=1 \
		NSRUN_DOCKER_CLI=$(CURDIR)/$(DOCKER_CLI) NSRUN_TESTCONTAINERS=$(CURDIR)/$(TESTCONTAINERS) \
		prove --timer --exec bash $(ASAN_SUITES)

# cgroup v2 limits in a QEMU guest with a pure cgroup v2 hierarchy (tests/vm), whatever
# the host has: the kernel is Debian's, fetched with apt-get download
VM_TIMEOUT ?= 600
check-vm: deps all
	@echo "== cgroup v2 suite in a QEMU guest (tests/vm)"
	@tests/vm/check-vm.sh -q -b $(BUILD) -t $(VM_TIMEOUT) -- --all

# start-up against the kernel floor, bwrap, crun and podman (bench/bench.sh; slow and
# noisy, so not part of check or CI): BENCH_QUICK=1 or BENCH_RUNS=N for fewer runs
bench: all test-image test-user
	TEST_IMAGES=$(TEST_IMAGES) TEST_USER=$(TEST_USER) BUILD=$(BUILD) bench/bench.sh

# cppcheck does not know the cleanup attribute (cleanup.h): its leak checks are
# false positives here; ASan and valgrind check leaks instead
lint: deps
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability --inline-suppr \
		--suppress=missingIncludeSystem --suppress=memleak --suppress=resourceLeak \
		--suppress=leakReturnValNotUsed -D_GNU_SOURCE -DSCMP_VER_MAJOR=2 runtime/*.c
	shellcheck -x rootfs-tools/nsrun-image rootfs-tools/lib/*.sh .ci/run tests/vm/*.sh bench/*.sh tests/images/*.sh
	@! grep -nE '\b(sprintf|strcpy|strcat|system|popen)\(' runtime/*.c || \
		{ echo "banned function (use snprintf, bounded copies, no shell)"; exit 1; }

# a dynamic build: memcheck replaces malloc only in a dynamically linked program
valgrind: deps test-image
	$(MAKE) BUILD=build-dyn NSRUN_LINK=dynamic build-dyn/nsrun
	NSRUN_IMAGES=$(TEST_IMAGES) valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite \
		--trace-children=no build-dyn/nsrun --image python -- python3 -c 'print("valgrind ok")'

# libFuzzer (clang) with ASan and UBSan over every fuzz target, FUZZ_SECONDS each;
# new inputs that grow coverage go to build-fuzz/corpus, the committed corpus stays
# as it is.  The runtime (and main.c's parser alone) is built once with clang.
FUZZ_SECONDS ?= 60
FUZZ_CFLAGS = -std=gnu11 -D_GNU_SOURCE -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-DNSRUN_LIBFUZZER -DNSRUN_INSTALLED_PROFILES='"$(PROFILES_DIR)"' -iquote runtime $(PKG_CFLAGS)
fuzz: deps
	@mkdir -p build-fuzz/obj
	@echo "== runtime with clang, ASan, UBSan and fuzzer coverage"
	@for src in $(LIB_SRCS); do o=build-fuzz/obj/$$(basename $$src .c).o; \
		clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $$src -o $$o || exit 1; done; \
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -DNSRUN_CLI_ONLY -Wno-unused-function -Wno-unused-const-variable \
		-c runtime/main.c -o build-fuzz/obj/cli-only.o || exit 1
	@for src in $(FUZZ_SRCS); do name=$$(basename $$src .c); n=$${name#fuzz_}; \
		echo "== $$name for $(FUZZ_SECONDS)s"; \
		clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -o build-fuzz/$$name $$src build-fuzz/obj/*.o $(PKG_LIBS) -pthread || exit 1; \
		mkdir -p build-fuzz/corpus/$$n; \
		build-fuzz/$$name -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
			-artifact_prefix=build-fuzz/$$n- build-fuzz/corpus/$$n tests/fuzz/corpus/$$n || exit 1; \
	done

install: all man
	install -D -m 0755 $(BUILD)/nsrun $(DESTDIR)$(PREFIX)/bin/nsrun
	install -D -m 0644 $(BUILD)/nsrun.1 $(DESTDIR)$(PREFIX)/share/man/man1/nsrun.1
	install -D -m 0755 rootfs-tools/nsrun-image $(DESTDIR)$(PREFIX)/bin/nsrun-image
	for f in rootfs-tools/lib/nsrun-image-*.sh; do \
		install -D -m 0644 $$f $(DESTDIR)$(PREFIX)/lib/nsrun/$${f##*/} || exit 1; done
	@if [ "$(APPARMOR)" = yes ]; then \
		echo "install the AppArmor profile $(DESTDIR)$(APPARMOR_DIR)/nsrun for $(PREFIX)/bin/nsrun"; \
		install -d $(DESTDIR)$(APPARMOR_DIR) && \
		sed 's|@NSRUN_BIN@|$(PREFIX)/bin/nsrun|' apparmor/nsrun >$(DESTDIR)$(APPARMOR_DIR)/nsrun && \
		chmod 0644 $(DESTDIR)$(APPARMOR_DIR)/nsrun || exit 1; \
		if [ -z "$(DESTDIR)" ] && [ -d /sys/kernel/security/apparmor ]; then \
			echo "apparmor_parser -r $(APPARMOR_DIR)/nsrun"; apparmor_parser -r $(APPARMOR_DIR)/nsrun || exit 1; fi; \
	fi

# make install into a staging directory: the binaries and the AppArmor profile with
# the installed path put in (this host need not have AppArmor); then the installed
# nsrun copied alone into an empty directory runs with its built-in seccomp profile
check-install: all test-image
	@echo "== make install DESTDIR=... (with and without the AppArmor profile)"
	@d=$$(mktemp -d) && trap 'rm -rf "$$d"' EXIT && \
	$(MAKE) -s install DESTDIR=$$d/aa PREFIX=/opt/nsrun APPARMOR=yes >/dev/null && \
	$(MAKE) -s install DESTDIR=$$d/no PREFIX=/opt/nsrun APPARMOR=no >/dev/null && \
	p=$$d/aa$(APPARMOR_DIR)/nsrun && test -x $$d/aa/opt/nsrun/bin/nsrun && \
	grep -qx 'profile nsrun /opt/nsrun/bin/nsrun flags=(unconfined) {' $$p && grep -qx '  userns,' $$p && \
	grep -qx 'abi <abi/4.0>,' $$p && ! grep -q '@NSRUN_BIN@' $$p && \
	test "$$(stat -c %a $$p)" = 644 && test ! -e $$d/no$(APPARMOR_DIR)/nsrun && \
	m=$$d/no/opt/nsrun/share/man/man1/nsrun.1 && grep -q 'memory' $$m && grep -qx '.SH "EXIT STATUS"' $$m && \
	echo "ok: the AppArmor profile names /opt/nsrun/bin/nsrun; none without AppArmor; the man page is installed" || \
	{ echo "not ok: make install's AppArmor profile"; exit 1; }; \
	$$d/no/opt/nsrun/bin/nsrun-image --help >/dev/null && \
	echo "ok: the installed nsrun-image finds its sandbox library" || \
	{ echo "not ok: the installed nsrun-image (lib/nsrun/nsrun-image-confine.sh)"; exit 1; }; \
	mkdir $$d/alone && cp $$d/no/opt/nsrun/bin/nsrun $$d/alone/ && chmod -R a+rX $$d && cd $$d/alone && \
	env -i PATH=/usr/bin:/bin NSRUN_IMAGES=$(TEST_IMAGES) XDG_CACHE_HOME=$$d/cache ./nsrun --debug \
		--image python -- python3 -c 'print("alone ok")' >$$d/out 2>$$d/err && grep -qx 'alone ok' $$d/out && \
	grep -q '^nsrun: debug: seccomp profile built-in default (compiled into nsrun)$$' $$d/err && \
	env -i PATH=/usr/bin:/bin ./nsrun check >$$d/check && grep -q '^seccomp profile: ok (built-in default' $$d/check && \
	echo "ok: the installed nsrun copied alone, no source tree nor NSRUN_SECCOMP_PROFILES: runs, check ok" || \
	{ echo "not ok: the installed nsrun alone:"; cat $$d/err $$d/check; exit 1; }

clean:
	rm -rf build build-asan build-fuzz build-dyn
