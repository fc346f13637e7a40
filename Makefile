# SPDX-License-Identifier: GPL-2.0
#
# twheel: top-level build. The two commands a new user needs:
#   make demo    boot a VM, load the module, run the heartbeat demo
#   make check   every test: host core tests, checkpatch, then the module
#                built (W=1, sparse) and the selftests run in a VM on each
#                kernel of vm/kernels (Debian 5.10, 6.1, 6.12, 7.2, 7.3-rc)
#                and on a debug 7.2 kernel, with stress tests on some
# Both install what they need (scripts/setup.sh) on a Debian 12 machine;
# the kernels go into the cache (/var/tmp/twheel-cache), not into /boot.
#
# On a server, the Debian packages (README, "Install on a server"):
#   make deb           out/deb/twheel-dkms_*.deb, libtwheel1_*, libtwheel-dev_*, twheel-tools_*
#   make server-test   install them in a Debian 12 VM, reboot, upgrade its kernel
# or by hand: make && sudo make install && sudo modprobe twheel

VERSION	:= $(shell cat VERSION)
KVER	?= $(shell uname -r)
KDIR	?= /lib/modules/$(KVER)/build
PREFIX	?= /usr/local
DESTDIR	?=

.PHONY: all module lib clean install demo check core-test fuzz-core \
	fuzz-core-long bench-core bench-dev selftests setup kernels style \
	deb dkms-src server-test readme-test check-all charts fresh-check

all: module lib

setup:
	./scripts/setup.sh

# Ask the mirror for newer kernels of each line and fetch what changed.
kernels:
	./vm/fetch-kernels.sh --update

# checkpatch.pl --strict over kmod/, uapi/, lib/ (scripts/style.sh).
style:
	./scripts/style.sh

module:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

lib:
	$(MAKE) -C lib

selftests: lib
	$(MAKE) -C selftests

core-test:
	$(MAKE) -C tests/core test

fuzz-core:
	$(MAKE) -C tests/core fuzz

fuzz-core-long:
	$(MAKE) -C tests/core fuzz-long

bench-core:
	$(MAKE) -C bench/core bench N=$(N)

bench-dev:
	$(MAKE) -C bench/device run

# The benchmark charts of docs/ (PNG), from the result files in docs/data.
charts:
	./scripts/setup.sh charts
	./scripts/plot.sh

demo:
	./scripts/demo.sh

check:
	./scripts/check.sh

# The README's "Try it" commands in a pristine Debian 12 root, as CI runs
# them (scripts/fresh.sh).
fresh-check:
	./scripts/fresh.sh

# What does not fit CI's time: the check, then the Debian server VM
# (install, reboot, kernel upgrade, removal; about 35 min, 50 more the
# first time for its image), which the check alone runs only when that
# image is cached.
check-all:
	TWHEEL_SERVER=no ./scripts/check.sh
	$(MAKE) server-test

# The Debian packages, built with dpkg-buildpackage in out/deb (see
# scripts/build-debs.sh); lintian errors fail it.
deb:
	./scripts/setup.sh deb
	./scripts/build-debs.sh

# The packages installed, rebooted, upgraded and removed on a Debian 12
# server in a VM (tests/server/README.md).
server-test: deb
	./scripts/setup.sh server
	./tests/server/run.sh --debs out/deb

# The README's library example, compiled as it stands.
readme-test: lib
	./tests/readme-example.sh

# The module's source as DKMS wants it, in $(DESTDIR)/usr/src/twheel-VERSION:
# sudo make dkms-src && sudo dkms install twheel/$(VERSION)
DKMS_SRC = $(DESTDIR)/usr/src/twheel-$(VERSION)
dkms-src:
	install -d $(DKMS_SRC)
	install -m 644 Kbuild VERSION $(DKMS_SRC)/
	find kmod uapi -type f \( -name '*.[ch]' -o -name Kbuild \) ! -name '*.mod.c' \
		-exec install -D -m 644 {} $(DKMS_SRC)/{} \;
	sed 's/#MODULE_VERSION#/$(VERSION)/' dkms.conf >$(DKMS_SRC)/dkms.conf

install: all
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=extra modules_install
	depmod -a $(KVER)
	$(MAKE) -C lib install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null
	$(MAKE) -C lib clean
	$(MAKE) -C tests/core clean
	$(MAKE) -C selftests clean
	$(MAKE) -C tests/stress clean
	$(MAKE) -C examples clean
	$(MAKE) -C bench/core clean
	$(MAKE) -C bench/device clean
	rm -rf out/deb
