# topoadvisor — see README.md.  `make` builds ./topoadvisor; `make check`
# installs what is missing, builds and runs every test suite.

VERSION := 0.1.0
PREFIX ?= /usr/local
BUILD ?= build

# json-c: the guest agent answers in JSON (guest-exec, guest-exec-status);
# util/json.h only writes, and a real parser beats scanning for keys.
# libpcre2-8: the `command` benchmark's parse regex (Perl syntax, match limits).
PKGS := libvirt libvirt-qemu libtracefs libtraceevent libtracecmd sqlite3 libpcre2-8 \
	yaml-0.1 libxml-2.0 glib-2.0 libzstd json-c

CC ?= cc
CFLAGS ?= -O2 -g
PKG_CONFIG ?= pkg-config
WARN := -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-unused-parameter
PKG_CFLAGS = $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
ALL_CFLAGS = $(WARN) $(CFLAGS) $(PKG_CFLAGS) -DTA_VERSION='"$(VERSION)"' \
	-I. -MMD -MP
LDLIBS = $(PKG_LIBS) -lm

ifeq ($(SAN),1)
# A separate build directory, so sanitized and plain objects never mix.
BUILD := build-san
ALL_CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined -O1
LDFLAGS += -fsanitize=address,undefined
endif

# Every .c file of the four stages and util/ is part of the tool; the two
# main()s alone are left out of the library the tests link against.
SRCS := $(wildcard util/*.c model/*.c schema/*.c decide/*.c experiments/*.c collectors/*.c advisor/*.c)
LIB_SRCS := $(filter-out advisor/main.c advisor/front.c,$(SRCS))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
MAIN_OBJ := $(BUILD)/advisor/main.o
FRONT_OBJ := $(BUILD)/advisor/front.o

UNIT_SRCS := $(wildcard tests/unit/test-*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)

# `make bench-advisor`: every driver in tests/bench/ (simulated sweeps through
# the real ranking code), each printing its rates next to their targets, then
# tests/bench/advisor-cli.py: sweeps of known truth through the real command
# line (truth-bench as the benchmark; BENCH_CASES, BENCH_SWEEPS: see the script).
BENCH_SRCS := $(wildcard tests/bench/*.c)
BENCH_BINS := $(BENCH_SRCS:tests/bench/%.c=$(BUILD)/tests/bench/%)

# C drivers the integration scripts run (found by them in $TA_BUILD/tests/helpers).
HELPER_SRCS := $(filter-out tests/helpers/fakehv.c tests/helpers/tcread.c \
	tests/helpers/kvmx86.c tests/helpers/truth-bench.c,$(wildcard tests/helpers/*.c))
HELPER_BINS := $(HELPER_SRCS:tests/helpers/%.c=$(BUILD)/tests/helpers/%)


# Two programs (README, "Start-up"): topoadvisor, the one users run, runs
# `exits` itself and links only libzstd besides libc; every other command
# it hands to topoadvisor-core, which links everything.  The linker takes
# from the library only the objects `exits` reaches: one that needed libvirt
# & co. would fail this link, so the split cannot rot.  FRONT=0 builds one
# program named topoadvisor instead (make cross-ppc64el: test images ship
# a single file).  The front is linked static (PIE, so still randomized):
# no loader, no relocations, no mapping of libc and libzstd, which was a
# fifth of `exits` on a small recording (README, "Start-up: two programs");
# it uses nothing of libc that needs NSS or dlopen.  `make FRONT_STATIC=`
# links it dynamically; SAN=1 does (the sanitizers' runtimes are shared).
BIN := topoadvisor
CORE := topoadvisor-core
FRONT ?= 1
FRONT_STATIC ?= -static-pie
FRONT_LIBS = $(shell $(PKG_CONFIG) --libs libzstd 2>/dev/null) -lm

# The front's C library: musl (musl-tools) where its compiler is found,
# else glibc.  A static glibc program asks the CPU about its features and
# caches before main, ~100 CPUID instructions, and on a VM each is a trap to
# the hypervisor (~9 us on this machine's kind): 0.6-0.8 ms, a third of
# `exits` on a 78 k-event recording, while musl's start-up asks nothing
# (README, "Start-up").  The musl front is compiled from FRONT_SRCS, what
# `exits` reaches (the glibc front gets the same from libtopoadvisor.a; a
# file missing from the list fails the musl link), and takes libzstd's
# decompressor from the system's libzstd.a (plain C calling only memory
# functions of libc).  FRONT_LIBC=glibc links it against glibc; SAN=1 and
# FRONT_STATIC= always do.
MUSL_CC ?= musl-gcc
MUSL_LIBDIR ?= /usr/lib/$(shell $(CC) -dumpmachine 2>/dev/null | sed 's/-gnu$$/-musl/')
FRONT_LIBC ?= $(if $(and $(shell command -v $(MUSL_CC) 2>/dev/null),$(wildcard $(MUSL_LIBDIR)/rcrt1.o)),musl,glibc)
ifneq ($(filter 1,$(SAN))$(if $(FRONT_STATIC),,x),)
override FRONT_LIBC := glibc
endif
FRONT_SRCS := advisor/front.c advisor/cli.c advisor/cmd.c advisor/cmd-exits.c \
	collectors/decode.c collectors/evfmt.c collectors/exitsum.c collectors/gang.c \
	collectors/htab.c collectors/offline.c collectors/perfdata.c collectors/tdat.c \
	collectors/traps.c collectors/tsmerge.c util/bcur.c util/err.c util/json.c \
	util/opts.c util/strbuf.c util/warn.c
MUSL_BUILD := $(BUILD)/musl
FRONT_MUSL_OBJS := $(FRONT_SRCS:%.c=$(MUSL_BUILD)/%.o)
ZSTD_INCDIR = $(shell $(PKG_CONFIG) --variable=includedir libzstd 2>/dev/null)
ZSTD_STATIC = $(shell $(CC) -print-file-name=libzstd.a)

# `make V=1` shows the full commands.
ifeq ($(V),1)
Q :=
else
Q := @
endif

.PHONY: all deps check check-power8-smt unit integration bench bench-advisor demo install clean guest-image \
	cross-ppc64el fuzz fuzzer mutate print-cflags

all: $(BIN)

$(BIN): $(BUILD)/$(BIN) $(BUILD)/$(CORE)
	cp $(BUILD)/$(CORE) $(CORE)
	cp $< $@

$(BUILD)/$(CORE): $(MAIN_OBJ) $(BUILD)/libtopoadvisor.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The front's C library as of the last link: a new choice relinks it.
FRONT_STAMP := $(BUILD)/.front-libc-$(FRONT_LIBC)
$(FRONT_STAMP):
	@mkdir -p $(dir $@)
	@rm -f $(BUILD)/.front-libc-*
	@touch $@

ifeq ($(FRONT)$(FRONT_LIBC),1musl)
# Linked by hand: musl-gcc's specs make -static-pie a dynamic program.
$(BUILD)/$(BIN): $(FRONT_MUSL_OBJS) $(FRONT_STAMP)
	$(CC) $(LDFLAGS) -static-pie -nostdlib -o $@ $(MUSL_LIBDIR)/rcrt1.o $(MUSL_LIBDIR)/crti.o \
		$(shell $(CC) -print-file-name=crtbeginS.o) $(FRONT_MUSL_OBJS) $(ZSTD_STATIC) \
		$(MUSL_LIBDIR)/libc.a $(shell $(CC) -print-libgcc-file-name) \
		$(shell $(CC) -print-file-name=crtendS.o) $(MUSL_LIBDIR)/crtn.o
else ifeq ($(FRONT),1)
$(BUILD)/$(BIN): $(FRONT_OBJ) $(BUILD)/libtopoadvisor.a $(FRONT_STAMP)
	$(CC) $(LDFLAGS) $(if $(filter 1,$(SAN)),,$(FRONT_STATIC)) -o $@ $(FRONT_OBJ) \
		$(BUILD)/libtopoadvisor.a $(FRONT_LIBS)
else
$(BUILD)/$(BIN): $(MAIN_OBJ) $(BUILD)/libtopoadvisor.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
endif

$(BUILD)/libtopoadvisor.a: $(LIB_OBJS)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

# The musl front's objects, with musl's headers and libzstd's two.
$(MUSL_BUILD)/include/zstd.h:
	@mkdir -p $(dir $@)
	ln -sf $(ZSTD_INCDIR)/zstd.h $(ZSTD_INCDIR)/zstd_errors.h $(dir $@)

$(MUSL_BUILD)/%.o: %.c | $(MUSL_BUILD)/include/zstd.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC musl $<")
	$(Q)$(MUSL_CC) $(WARN) $(CFLAGS) -DTA_VERSION='"$(VERSION)"' -I. -I$(MUSL_BUILD)/include \
		-MMD -MP -c -o $@ $<

# The schema is embedded with .incbin; rebuild its object when it changes.
$(BUILD)/schema/db.o: schema/schema.sql

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libtopoadvisor.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  TEST    $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libtopoadvisor.a \
		$(LDLIBS) $(shell pkg-config --libs cmocka 2>/dev/null)

# The POWER KVM HV emulator the collector tests put uprobes on: a test
# helper, built without sanitizers (it must fire events fast, and libtracefs's
# own leaks are not ours to report).
FAKEHV := $(BUILD)/tests/fakehv
$(FAKEHV): tests/helpers/fakehv.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -O2 -g $(shell pkg-config --cflags libtracefs) -o $@ $< \
		$(shell pkg-config --libs libtracefs) -lpthread

# The benchmark of known truth the command-line bench runs (bench-advisor,
# tests/integration/bench-cli.sh): standalone, sharing no code with what it measures.
TRUTH_BENCH := $(BUILD)/tests/helpers/truth-bench
$(TRUTH_BENCH): tests/helpers/truth-bench.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  HELPER  $@")
	$(Q)$(CC) $(WARN) -O2 -g -o $@ $< -lm

$(BUILD)/tests/bench/%: tests/bench/%.c tests/bench/sim.h $(BUILD)/libtopoadvisor.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  BENCH   $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libtopoadvisor.a $(LDLIBS)

$(BUILD)/tests/helpers/%: tests/helpers/%.c $(BUILD)/libtopoadvisor.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  HELPER  $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libtopoadvisor.a $(LDLIBS)

# The cost of reading a file at all (`make bench` times it next to `exits`
# --algorithm seed): static, with the front's C library, so that starting it
# costs what starting the front does.
$(BUILD)/tests/helpers/readfloor: tests/helpers/readfloor.c $(FRONT_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  HELPER  $@")
	$(Q)$(if $(filter musl,$(FRONT_LIBC)),$(MUSL_CC),$(CC)) $(WARN) -O2 -static -o $@ $<

# The ebizzy stand-in the guest image carries (scripts/guest-image.sh builds
# its own static copy); built here too so the parser tests run it on the host.
EBIZZY := $(BUILD)/guest-tools/ebizzy
$(EBIZZY): experiments/guest-tools/ebizzy.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -O2 -g -pthread -o $@ $<

# The x86 KVM guest program run inside the nested-SVM test host: static (that
# host has only the libraries the tool needs), without sanitizers, and built
# on x86_64 only (its guest is x86 real-mode code, its registers x86's).
ifeq ($(shell uname -m),x86_64)
KVMX86 := $(BUILD)/tests/kvmx86
endif
$(BUILD)/tests/kvmx86: tests/helpers/kvmx86.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -O2 -static -o $@ $<

# libtracecmd's own reader, timed next to ours by `make bench`.
TCREAD := $(BUILD)/tests/tcread
$(TCREAD): tests/helpers/tcread.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -O2 -g $(shell pkg-config --cflags libtracecmd) -o $@ $< \
		$(shell pkg-config --libs libtracecmd)

# libFuzzer harness of both offline readers (Debian's clang): every library
# source rebuilt in build-fuzz with coverage and ASan/UBSan.  `make check`
# builds it and replays the committed regression corpus through it once
# (tests/integration/fuzz-readers.sh: no exploration, the same result every
# time); `make fuzz` explores for FUZZ_TIME seconds from a corpus kept in
# build-fuzz/corpus, keeps every finding in build-fuzz/findings and lists
# them at the end (scripts/fuzz.sh).
FUZZ_BUILD := build-fuzz
FUZZ_CC ?= clang
FUZZ_TIME ?= 600
FUZZ_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -g -O1
FUZZ_OBJS := $(patsubst %.c,$(FUZZ_BUILD)/%.o,$(wildcard util/*.c model/*.c collectors/*.c))
FUZZER := $(FUZZ_BUILD)/fuzz-exits

$(FUZZ_BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZCC  $<")
	$(Q)$(FUZZ_CC) $(WARN) -Wno-unknown-warning-option $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link \
		$(PKG_CFLAGS) -DTA_VERSION='"$(VERSION)"' -I. -MMD -MP -c -o $@ $<

$(FUZZ_BUILD)/libfuzzed.a: $(FUZZ_OBJS)
	rm -f $@
	ar rcs $@ $^

$(FUZZER): tests/fuzz/fuzz-exits.c $(FUZZ_BUILD)/libfuzzed.a
	$(Q)$(FUZZ_CC) $(WARN) $(FUZZ_FLAGS) -fsanitize=fuzzer -I. $(PKG_CFLAGS) -o $@ $^ \
		$(LDLIBS)

fuzzer: $(FUZZER)

fuzz: deps $(FUZZER)
	@scripts/fuzz.sh $(FUZZER) $(FUZZ_TIME) $(FUZZ_BUILD)

deps:
	@scripts/deps.sh check

check: deps
	$(MAKE) $(BUILD)/$(BIN) $(BUILD)/$(CORE) units fuzzer
	@scripts/run-tests.sh $(BUILD)

# The emulated POWER8 with running secondary threads alone (also part of
# `make check`), for working on it or on the emulator's stalls
# (docs/power-host.md).
check-power8-smt: deps
	$(MAKE) $(BUILD)/$(BIN) $(BUILD)/$(CORE) units
	@scripts/run-tests.sh $(BUILD) integration/power8-smt

units: $(UNIT_BINS) $(FAKEHV) $(KVMX86) $(HELPER_BINS) $(TRUTH_BENCH) $(BENCH_BINS) $(EBIZZY)

# The collectors' rates, then the same sweep on 1 and 3 Slurm hosts
# (scripts/bench-slurm.sh), then the store, plan and runs in guests
# (scripts/bench-sweeps.sh); all run, any failing fails.
bench: deps
	$(MAKE) $(BIN) $(FAKEHV) $(TCREAD) $(BUILD)/tests/helpers/cputime \
		$(BUILD)/tests/helpers/zstdfloor $(BUILD)/tests/helpers/readfloor \
		$(BUILD)/tests/helpers/mkstore
	@rc=0; scripts/bench.sh || rc=1; scripts/bench-slurm.sh || rc=1; \
		scripts/bench-sweeps.sh || rc=1; exit $$rc

# Runs every driver (all of them, even after a miss); fails if any target is missed.
# BENCH_CASES=NAME runs only that case of the command-line driver (and no C driver).
bench-advisor: $(BENCH_BINS) $(BUILD)/$(BIN) $(TRUTH_BENCH)
	@rc=0; [ -n "$$BENCH_CASES" ] || for b in $(BENCH_BINS); do echo "== $$b"; $$b || rc=1; done; \
	echo "== tests/bench/advisor-cli.py"; \
	TOPOADVISOR=$(BUILD)/$(BIN) TRUTH_BENCH=$(TRUTH_BENCH) \
		python3 tests/bench/advisor-cli.py || rc=1; exit $$rc

# Only what the demo needs (scripts/deps.sh demo); `make check` installs the rest.
demo:
	@scripts/deps.sh demo
	$(MAKE) $(BIN)
	@scripts/demo.sh

# Mutation testing of the decision engine (decide/): every single-point
# mutant against the engine's unit tests; not part of `make check` (an hour
# or so).  MUTATE_FLAGS: e.g. --jobs 2 --sample 3 (a random third, seed printed)
# --files collectors/gang.c,experiments/plan.c --list.
mutate: units
	@scripts/mutate.py $(MUTATE_FLAGS)

# The compiler and linker flags of the unit tests, one line each (for scripts/mutate.py).
print-cflags:
	@echo '$(ALL_CFLAGS)'
	@echo '$(LDLIBS) $(shell pkg-config --libs cmocka 2>/dev/null)'

# The test guest (kernel + initramfs) in $TOPOADVISOR_CACHE; cheap when its
# inputs are unchanged.  `make guest-image GUEST_ARCH=ppc64`: the pseries one.
GUEST_ARCH ?= x86_64
guest-image:
	@scripts/guest-image.sh --arch $(GUEST_ARCH)

# A ppc64el topoadvisor and the ppc64le KVM test guest, cross-compiled
# against a sysroot of extracted ppc64el -dev packages (scripts/sysroot.sh)
# into build-ppc64el/: what the emulated POWER8 host test runs.
CROSS_CC := powerpc64le-linux-gnu-gcc
CROSS_BUILD := build-ppc64el
cross-ppc64el:
	@command -v $(CROSS_CC) >/dev/null || { echo "$(CROSS_CC) missing: scripts/deps.sh check"; exit 1; }
	@sr=$$(scripts/sysroot.sh) && \
	$(MAKE) --no-print-directory BUILD=$(CROSS_BUILD) SAN= FRONT=0 CC="$(CROSS_CC) --sysroot=$$sr" \
		PKG_CONFIG="env PKG_CONFIG_SYSROOT_DIR=$$sr PKG_CONFIG_LIBDIR=$$sr/usr/lib/powerpc64le-linux-gnu/pkgconfig:$$sr/usr/share/pkgconfig pkg-config" \
		$(CROSS_BUILD)/$(BIN) $(CROSS_BUILD)/tests/kvmppc-guest

$(BUILD)/tests/kvmppc-guest: tests/power8/kvmppc-guest.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -O2 -static -o $@ $<

install: $(BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/libexec/topoadvisor \
		$(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/$(BIN)
	install -m 0755 $(CORE) $(DESTDIR)$(PREFIX)/libexec/topoadvisor/$(CORE)
	install -m 0644 docs/topoadvisor.1 $(DESTDIR)$(PREFIX)/share/man/man1/topoadvisor.1

clean:
	rm -rf build build-san build-fuzz build-mutate $(CROSS_BUILD) $(BIN) $(CORE)

-include $(shell find $(BUILD) $(FUZZ_BUILD) -name '*.d' 2>/dev/null)
