# SPDX-License-Identifier: GPL-2.0
#
# twheel: top-level build. The two commands a new user needs are `make
# demo` and `make check` (README, "Try it"); `make help` lists the rest.
# What the check runs is written once, in the header of scripts/check.sh.
# Every target installs what it needs on a Debian 12 machine
# (scripts/setup.sh); kernels go into the cache (/var/tmp/twheel-cache),
# never into /boot.

VERSION	:= $(shell cat VERSION)
KVER	?= $(shell uname -r)
KDIR	?= /lib/modules/$(KVER)/build
PREFIX	?= /usr/local
DESTDIR	?=

.PHONY: all module lib tools clean install help demo check fresh-check \
	check-all setup kernels style core-test fuzz-core fuzz-core-long \
	bench-core bench-dev bench-scenarios fleet bench-fleet charts selftests deb deb-arm64 dkms-src server-test server-langs \
	readme-test cross lkmm

all: module lib ## the module (against KDIR) and libtwheel

help: ## this list
	@echo 'make TARGET, with TARGET one of:'
	@sed -nE 's/^([a-z-]+):.*## (.*)/  \1\t\2/p' $(MAKEFILE_LIST) | expand -t 20

demo: ## boot a VM with the module and run the heartbeat demo in it
	./scripts/demo.sh

check: ## every test: what it runs is the header of scripts/check.sh
	./scripts/check.sh

fresh-check: ## the README's Try-it block in a pristine Debian 12 root, as CI runs it
	./scripts/fresh.sh

check-all: ## the check, then the Debian server VM test (tests/server, ~35 min more)
	TWHEEL_SERVER=no ./scripts/check.sh
	$(MAKE) server-test

setup: ## install every package the check needs and fetch every kernel
	./scripts/setup.sh

kernels: ## ask the mirror for newer kernels of each line and fetch what changed
	./vm/fetch-kernels.sh --update

style: ## checkpatch.pl --strict over kmod/, uapi/, lib/ (scripts/style.sh)
	./scripts/style.sh

module: ## twheel.ko against KDIR (the running kernel's headers by default)
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

lib: ## libtwheel (static and shared)
	$(MAKE) -C lib

tools: lib ## twheel-stat
	$(MAKE) -C tools

selftests: ## the kselftest target selftests/ (the check installs it and runs it in the VMs)
	$(MAKE) -C selftests

cross: ## libtwheel, twheel-stat and the test programs cross-built static for arm64 (out/arm64)
	./scripts/setup.sh arm64
	./scripts/cross-build.sh arm64

lkmm: ## the litmus tests of the module's lockless patterns, herd7 with the kernel's memory model
	./litmus/run.sh

core-test: ## the wheel core's host tests and a bounded differential fuzz
	$(MAKE) -C tests/core test

fuzz-core: ## the bounded differential fuzz of the core alone
	$(MAKE) -C tests/core fuzz

fuzz-core-long: ## a long fuzz campaign of the core (FUZZ_TIME seconds)
	$(MAKE) -C tests/core fuzz-long

bench-core: ## the core against libuv's and libevent's heaps [N=1000000]
	$(MAKE) -C bench/core bench N=$(N)

bench-dev: ## the device against one timerfd per id, in a VM
	$(MAKE) -C bench/device run

bench-scenarios: ## the seeds' scenarios against Redis, Netty, Kafka, the JDK, Go, Node, timerfd, in a VM
	./scripts/setup.sh scenarios
	$(MAKE) -C bench/scenarios run
	$(MAKE) -C bench/scenarios report

fleet: ## examples/orders-pg: 1,000,000 orders through kill -9, a cut and a restart, on PostgreSQL in a VM
	./scripts/setup.sh build vm bindings
	$(MAKE) -C examples/orders-pg check

bench-fleet: ## examples/orders-pg: its fleet's twheel way against database polling, in a VM
	./scripts/setup.sh build vm bindings
	$(MAKE) -C examples/orders-pg bench

charts: ## the benchmark charts of docs/ (PNG), from docs/data
	./scripts/setup.sh charts
	./scripts/plot.sh

deb: ## the Debian packages in out/deb, checked by lintian
	./scripts/setup.sh deb
	./scripts/build-debs.sh

deb-arm64: ## the arm64 packages in out/deb-arm64, cross-built in a Debian 12 chroot
	./scripts/setup.sh deb
	./scripts/build-debs.sh --arch arm64

server-test: deb server-langs ## the packages installed, rebooted, upgraded, removed on a Debian 12 VM
	./scripts/setup.sh server
	./tests/server/run.sh --debs out/deb --langs out/server-langs

server-langs: ## the Go, Python, Java and Node.js bindings as the server test installs them
	./tests/server/langs.sh out/server-langs

readme-test: lib ## the README's library example, compiled as it stands
	./tests/readme-example.sh

# The module's source as DKMS wants it, in $(DESTDIR)/usr/src/twheel-VERSION:
# sudo make dkms-src && sudo dkms install twheel/$(VERSION)
DKMS_SRC = $(DESTDIR)/usr/src/twheel-$(VERSION)
dkms-src: ## the module's source for DKMS in /usr/src/twheel-VERSION
	install -d $(DKMS_SRC)
	install -m 644 Kbuild VERSION $(DKMS_SRC)/
	find kmod uapi -type f \( -name '*.[ch]' -o -name Kbuild -o -name Kconfig \) \
		! -name '*.mod.c' -exec install -D -m 644 {} $(DKMS_SRC)/{} \;
	sed 's/#MODULE_VERSION#/$(VERSION)/' dkms.conf >$(DKMS_SRC)/dkms.conf

install: all ## the module (extra/), libtwheel, headers, pkg-config, man pages
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=extra modules_install
	depmod -a $(KVER)
	$(MAKE) -C lib install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)

clean: ## every build output of the tree
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null
	$(MAKE) -C lib clean
	$(MAKE) -C tools clean
	$(MAKE) -C tests/core clean
	$(MAKE) -C selftests clean
	$(MAKE) -C tests/lib clean
	$(MAKE) -C tests/tools clean
	$(MAKE) -C tests/stress clean
	$(MAKE) -C examples clean
	$(MAKE) -C bench/core clean
	$(MAKE) -C bench/device clean
	rm -rf out/deb
