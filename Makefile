# xtcam — see README.md.  `make help` lists the targets.
#
# Layout: bpf/*.bpf.c -> build/*.bpf.o -> build/*.skel.h (bpftool gen
# skeleton); user/*.c -> build/libxtcam.a; user/cli/*.c -> build/xtcam (and
# build/asan/xtcam, with ASan+UBSan, for the tests);
# tests/{unit,prog,net}/*.c -> build/tests/*.  Quiet by default, V=1 shows
# the commands.

.DELETE_ON_ERROR:
.SUFFIXES:

PREFIX    ?= /usr/local
BUILD     ?= build
CLANG     ?= clang
BPFTOOL   ?= bpftool
CC        ?= gcc
ARCH_INC  := /usr/include/$(shell $(CC) -dumpmachine 2>/dev/null)
# the one version: xtcam -V, make install's man pages and the package
VERSION   := $(shell cat VERSION)
# where make install puts things (the package: debian/rules)
SBINDIR   ?= $(PREFIX)/sbin
LIBDIR    ?= $(PREFIX)/lib
MANDIR    ?= $(PREFIX)/share/man
DOCDIR    ?= $(PREFIX)/share/doc/xtcam
UNITDIR   ?= $(PREFIX)/lib/systemd/system
UDEVDIR   ?= $(PREFIX)/lib/udev/rules.d
COMPDIR   ?= $(PREFIX)/share/bash-completion/completions
SYSCONFDIR?= /etc
# where prometheus-node-exporter's textfile collector reads (Debian's)
TEXTFILE_DIR ?= /var/lib/prometheus/node-exporter
# the exit status of `xtcam apply` when some bindings of the file could
# not be made (their device is not there yet): success for the boot unit
EXIT_PARTIAL := 3

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# Debian packages the build, tests, demo and benchmarks need.
DEB_PKGS := make gcc libc6-dev clang llvm libbpf-dev bpftool libxdp-dev \
	xdp-tools libcriterion-dev libelf-dev zlib1g-dev pkg-config iproute2 \
	libjson-c-dev ethtool nftables gnuplot-nox linux-libc-dev procps \
	util-linux iputils-ping tcpdump strace \
	pandoc debhelper lintian debootstrap bash-completion systemd \
	prometheus prometheus-node-exporter curl fakeroot dpkg-dev man-db
# ... and the ones vmtest needs on top (kernels come from Debian too).
VM_PKGS  := qemu-system-x86 busybox-static cpio kmod linux-source-6.1 bc \
	bison flex libelf-dev libssl-dev dwarves xz-utils dpkg-dev

PKG_CFLAGS = $(shell pkg-config --cflags libbpf libxdp json-c 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs libbpf libxdp json-c 2>/dev/null)

CFLAGS   ?= -O2 -g
XCFLAGS  := -std=gnu11 -fno-strict-aliasing -Wall -Wextra -Werror -Iinclude -I$(BUILD) -Iuser \
	    $(PKG_CFLAGS) -D_GNU_SOURCE
BPF_CFLAGS := -g -O2 -target bpf -fno-strict-aliasing -Wall -Werror -Iinclude -I$(ARCH_INC)
# The host data path is built for BPF ISA v3 (32-bit ALU and jumps, in the
# kernel since 5.1): no zero-extension pairs after every 32-bit operation
# of the lookup.  The offload program keeps the default ISA: NICs' JITs
# take less.
BPF_CPU_xtcam := -mcpu=v3
ASAN     := -fsanitize=address,undefined -fno-omit-frame-pointer

BPF_SRCS  := $(wildcard bpf/*.bpf.c)
BPF_OBJS  := $(patsubst bpf/%.bpf.c,$(BUILD)/%.bpf.o,$(BPF_SRCS))
SKELS     := $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS))
BPF_HDRS  := $(wildcard bpf/*.h include/xtcam/*.h)
HDRS      := $(wildcard include/xtcam/*.h user/*.h tests/lib/*.h)
HDRS      += $(wildcard user/cli/*.h)

LIB_SRCS  := $(wildcard user/*.c)
LIB_OBJS  := $(patsubst user/%.c,$(BUILD)/user/%.o,$(LIB_SRCS))
ASAN_OBJS := $(patsubst user/%.c,$(BUILD)/asan/%.o,$(LIB_SRCS))
CLI_SRCS  := $(wildcard user/cli/*.c)
CLI_OBJS  := $(patsubst user/cli/%.c,$(BUILD)/cli/%.o,$(CLI_SRCS))
TLIB_SRCS := $(wildcard tests/lib/*.c)
TLIB_OBJS := $(patsubst tests/lib/%.c,$(BUILD)/tests/lib/%.o,$(TLIB_SRCS))
TLIB_AOBJS:= $(patsubst tests/lib/%.c,$(BUILD)/asan/tlib/%.o,$(TLIB_SRCS))
UNIT_SRCS := $(wildcard tests/unit/*.c)
PROG_SRCS := $(wildcard tests/prog/*.c)
NET_SRCS  := $(wildcard tests/net/*.c)
# XDP programs the net tests load as "somebody else's" (xdp-loader)
TPROG_OBJS:= $(patsubst tests/progs/%.bpf.c,$(BUILD)/tests/progs/%.bpf.o,$(wildcard tests/progs/*.bpf.c))
BENCH_SRCS:= $(wildcard bench/*.c)
BENCH_BINS:= $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))
BENCH_BPF := $(patsubst bench/progs/%.bpf.c,$(BUILD)/bench/%.bpf.o,$(wildcard bench/progs/*.bpf.c))
# example programs on the library's API (xtcam/xtcam.h), and the same with
# ASan+UBSan for the tests
EX_SRCS   := $(wildcard examples/*.c)
EX_BINS   := $(patsubst examples/%.c,$(BUILD)/examples/%,$(EX_SRCS))
EX_ABINS  := $(patsubst examples/%.c,$(BUILD)/asan/examples/%,$(EX_SRCS))

TEST_BINS := $(if $(UNIT_SRCS),$(BUILD)/tests/unit) \
	     $(if $(PROG_SRCS),$(BUILD)/tests/prog) \
	     $(if $(NET_SRCS),$(BUILD)/tests/net)
# the cls_flower differential test's generator, sender and judge
TEST_BINS += $(BUILD)/tests/flower-oracle

.PHONY: all deps vm-deps test check bench demo vmtest install uninstall clean help man deb

all: $(BPF_OBJS) $(SKELS) $(BUILD)/libxtcam.a $(if $(CLI_SRCS),$(BUILD)/xtcam $(BUILD)/asan/xtcam) \
	$(TEST_BINS) \
	$(BENCH_BINS) $(BENCH_BPF)

all: $(EX_BINS) $(EX_ABINS)

help:
	@echo 'make deps     install the Debian packages (idempotent, needs root)'
	@echo 'make          build BPF objects, skeletons, libxtcam.a, xtcam, tests'
	@echo 'make test     deps + build + every test (unit under ASan, prog, net, cli again under ASan)'
	@echo 'make demo     deps + build + the veth demo'
	@echo 'make bench    benchmarks, then docs/performance.md (QUICK=1: a short run)'
	@echo 'make vmtest   the suite in a VM (FULL=1: all of it)'
	@echo 'make install  install xtcam into $(PREFIX)'
	@echo 'make man      the man pages, from docs/ (pandoc)'
	@echo 'make deb      the Debian packages, in $(BUILD)/deb/'

# Installs only what is missing, so a second run does nothing.
deps:
	@missing=$$(for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "  DEPS     installing:" $$missing; \
		if [ "$$(id -u)" != 0 ]; then echo "make deps: need root to install packages" >&2; exit 1; fi; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	else echo "  DEPS     all present"; fi

vm-deps:
	@$(MAKE) --no-print-directory deps DEB_PKGS="$(VM_PKGS)"

# `make test` must work as the first command on a fresh machine: install the
# packages first, then build and test in a sub-make that sees them.
test: deps
	@$(MAKE) --no-print-directory check

check: all
	$(Q)tests/run.sh $(BUILD)

demo: deps
	@$(MAKE) --no-print-directory all
	$(Q)./demo.sh $(BUILD)

bench: deps
	@$(MAKE) --no-print-directory all
	$(Q)bench/run.sh $(BUILD) $(if $(QUICK),quick)

vmtest: vm-deps
	@$(MAKE) --no-print-directory all
	$(Q)vmtest/run.sh $(if $(FULL),--full) $(VMTEST_ARGS)

# the systemd units, their paths (@SBINDIR@, ...) filled in by install
SYSTEMD_SRCS := $(wildcard contrib/systemd/*.service contrib/systemd/*.timer)

# the CLI (self-contained: the BPF objects are in its skeletons), and the
# library with its headers for C users of the flow_block API; the man
# pages, bash completion, systemd units (not enabled) and udev rule; the
# example configuration only where there is none
install: $(BUILD)/xtcam $(BUILD)/libxtcam.a man
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PREFIX)/include/xtcam \
		$(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(COMPDIR) \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(UDEVDIR) $(DESTDIR)$(SYSCONFDIR)/xtcam \
		$(DESTDIR)$(SYSCONFDIR)/default
	install -m 0755 $(BUILD)/xtcam $(DESTDIR)$(SBINDIR)/xtcam
	install -m 0644 $(BUILD)/libxtcam.a $(DESTDIR)$(LIBDIR)/libxtcam.a
	install -m 0644 include/xtcam/*.h $(DESTDIR)$(PREFIX)/include/xtcam/
	install -m 0644 $(BUILD)/man/xtcam.8 $(DESTDIR)$(MANDIR)/man8/xtcam.8
	install -m 0644 $(BUILD)/man/xtcam-rules.7 $(DESTDIR)$(MANDIR)/man7/xtcam-rules.7
	install -m 0644 contrib/bash-completion/xtcam $(DESTDIR)$(COMPDIR)/xtcam
	for u in $(SYSTEMD_SRCS); do \
		sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@EXIT_PARTIAL@|$(EXIT_PARTIAL)|g' \
		    -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' -e 's|@TEXTFILE_DIR@|$(TEXTFILE_DIR)|g' $$u > $(DESTDIR)$(UNITDIR)/$${u##*/} && \
		chmod 0644 $(DESTDIR)$(UNITDIR)/$${u##*/} || exit 1; \
	done
	install -m 0644 contrib/systemd/90-xtcam.rules $(DESTDIR)$(UDEVDIR)/90-xtcam.rules
	[ -e $(DESTDIR)$(SYSCONFDIR)/xtcam/xtcam.conf ] || \
		install -m 0644 contrib/systemd/xtcam.conf $(DESTDIR)$(SYSCONFDIR)/xtcam/xtcam.conf
	[ -e $(DESTDIR)$(SYSCONFDIR)/default/xtcam ] || \
		install -m 0644 contrib/systemd/xtcam.default $(DESTDIR)$(SYSCONFDIR)/default/xtcam

uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/xtcam $(DESTDIR)$(LIBDIR)/libxtcam.a
	rm -rf $(DESTDIR)$(PREFIX)/include/xtcam
	rm -f $(DESTDIR)$(MANDIR)/man8/xtcam.8 $(DESTDIR)$(MANDIR)/man7/xtcam-rules.7 \
		$(DESTDIR)$(COMPDIR)/xtcam $(DESTDIR)$(UDEVDIR)/90-xtcam.rules \
		$(addprefix $(DESTDIR)$(UNITDIR)/,$(notdir $(SYSTEMD_SRCS)))

# --- man pages, units, package ------------------------------------------------
# The man pages are docs/ pages: xtcam(8) is docs/xtcam.md, xtcam-rules(7)
# is docs/rule-syntax.md (its title line gives way to a NAME section).
MANS  := $(BUILD)/man/xtcam.8 $(BUILD)/man/xtcam-rules.7
PANDOC_MAN = pandoc -s -f markdown-smart -t man --shift-heading-level-by=-1 \
	-M section=$(2) -M footer="xtcam $(VERSION)" -M header="xtcam manual" \
	-M date="$(shell date -u -d @$${SOURCE_DATE_EPOCH:-$$(stat -c %Y VERSION)} +%Y-%m-%d)"
man: $(MANS)

$(BUILD)/man/xtcam.8: docs/xtcam.md VERSION | $(BUILD)
	$(call msg,PANDOC,$@)
	$(Q)mkdir -p $(@D) && sed '1{/^# /d}' $< | $(call PANDOC_MAN,xtcam,8) -M title=XTCAM -o $@

$(BUILD)/man/xtcam-rules.7: docs/rule-syntax.md contrib/man/xtcam-rules.7.name.md VERSION | $(BUILD)
	$(call msg,PANDOC,$@)
	$(Q)mkdir -p $(@D) && { cat contrib/man/xtcam-rules.7.name.md; echo; sed '1{/^# /d}' $<; } | \
		$(call PANDOC_MAN,xtcam-rules,7) -M title=XTCAM-RULES -o $@

# dpkg-buildpackage writes into the parent of the source tree: build a
# copy of the tree (what git knows of, committed or not) under $(BUILD)/deb
# (without this make's variables: the copy has a build/ of its own)
deb:
	$(call msg,DEB,$(BUILD)/deb/xtcam_$(VERSION)_amd64.deb)
	$(Q)rm -rf $(BUILD)/deb && mkdir -p $(BUILD)/deb/xtcam-$(VERSION) && \
	{ git ls-files -co --exclude-standard 2>/dev/null || \
	  find . -path ./$(BUILD) -prune -o -type f -print; } | \
	while read -r f; do [ -e "$$f" ] && printf '%s\n' "$$f"; done | \
	tar -cf - -T - | tar -xf - -C $(BUILD)/deb/xtcam-$(VERSION) && \
	cd $(BUILD)/deb/xtcam-$(VERSION) && MAKEFLAGS= MAKELEVEL= dpkg-buildpackage -us -uc -b $(if $(V),,>../build.log 2>&1) || \
	{ echo "make deb: dpkg-buildpackage failed, see $(BUILD)/deb/build.log" >&2; exit 1; }

clean:
	rm -rf $(BUILD)

# --- BPF -------------------------------------------------------------------
$(BUILD)/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS) | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(BPF_CPU_$*) -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*) > $@

# --- userspace -------------------------------------------------------------
$(BUILD)/user/%.o: user/%.c $(HDRS) $(SKELS) | $(BUILD)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(XCFLAGS) -c $< -o $@

$(BUILD)/asan/%.o: user/%.c $(HDRS) $(SKELS) | $(BUILD)
	$(call msg,CC-ASAN,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(ASAN) $(XCFLAGS) -c $< -o $@

$(BUILD)/libxtcam.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# the version, from VERSION (for xtcam -V)
VERSIONED := $(BUILD)/cli/main.o $(BUILD)/asan/cli/main.o $(BUILD)/cli/metrics.o \
	     $(BUILD)/asan/cli/metrics.o
$(VERSIONED): VERSION
$(VERSIONED): XCFLAGS += -DXTCAM_VERSION='"$(VERSION)"'

$(BUILD)/cli/%.o: user/cli/%.c $(HDRS) $(SKELS) | $(BUILD)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(XCFLAGS) -c $< -o $@

$(BUILD)/xtcam: $(CLI_OBJS) $(BUILD)/libxtcam.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(PKG_LIBS) -lelf -lz

# the same CLI with ASan+UBSan, for the net tests (tests/run.sh): a
# use-after-free or undefined behaviour in a command fails `make test`
$(BUILD)/asan/xtcam: $(patsubst user/cli/%.c,$(BUILD)/asan/cli/%.o,$(CLI_SRCS)) $(ASAN_OBJS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(ASAN) -o $@ $^ $(PKG_LIBS) -lelf -lz

# --- tests -----------------------------------------------------------------
$(BUILD)/tests/lib/%.o: tests/lib/%.c $(HDRS) | $(BUILD)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(XCFLAGS) -Itests/lib -c $< -o $@

$(BUILD)/asan/tlib/%.o: tests/lib/%.c $(HDRS) | $(BUILD)
	$(call msg,CC-ASAN,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(ASAN) $(XCFLAGS) -Itests/lib -c $< -o $@

# unit tests: no kernel, built with ASan+UBSan against ASan objects
$(BUILD)/tests/unit: $(UNIT_SRCS) $(ASAN_OBJS) $(TLIB_AOBJS) $(HDRS)
	$(call msg,CC-TEST,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(ASAN) $(XCFLAGS) -Itests/lib -o $@ \
		$(UNIT_SRCS) $(ASAN_OBJS) $(TLIB_AOBJS) -lcriterion $(PKG_LIBS) -lelf -lz

$(BUILD)/tests/prog: $(PROG_SRCS) $(BUILD)/libxtcam.a $(TLIB_OBJS) $(HDRS) $(SKELS)
	$(call msg,CC-TEST,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(XCFLAGS) -Itests/lib -o $@ \
		$(PROG_SRCS) $(TLIB_OBJS) $(BUILD)/libxtcam.a -lcriterion $(PKG_LIBS) -lelf -lz

$(BUILD)/tests/progs/%.bpf.o: tests/progs/%.bpf.c $(BPF_HDRS) | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D) && $(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/tests/net: $(NET_SRCS) $(BUILD)/libxtcam.a $(TLIB_OBJS) $(HDRS) $(SKELS) $(TPROG_OBJS)
	$(call msg,CC-TEST,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(XCFLAGS) -Itests/lib -o $@ \
		$(NET_SRCS) $(TLIB_OBJS) $(BUILD)/libxtcam.a -lcriterion $(PKG_LIBS) -lelf -lz

$(BUILD)/tests/flower-oracle: tests/flower/oracle.c | $(BUILD)
	$(call msg,CC-TEST,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(XCFLAGS) -o $@ $< $(PKG_LIBS)

# --- benchmarks ------------------------------------------------------------
$(BUILD)/bench/%.bpf.o: bench/progs/%.bpf.c $(BPF_HDRS) | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D) && $(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/bench/%: bench/%.c $(BUILD)/libxtcam.a $(TLIB_OBJS) $(HDRS) $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(XCFLAGS) -Itests/lib -o $@ $< \
		$(TLIB_OBJS) $(BUILD)/libxtcam.a $(PKG_LIBS) -lelf -lz -lm

# --- examples --------------------------------------------------------------
$(BUILD)/examples/%: examples/%.c $(BUILD)/libxtcam.a $(HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(XCFLAGS) -o $@ $< $(BUILD)/libxtcam.a \
		$(PKG_LIBS) -lelf -lz

$(BUILD)/asan/examples/%: examples/%.c $(ASAN_OBJS) $(HDRS)
	$(call msg,CC-ASAN,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(ASAN) $(XCFLAGS) -o $@ $< $(ASAN_OBJS) \
		$(PKG_LIBS) -lelf -lz

$(BUILD):
	$(Q)mkdir -p $@
