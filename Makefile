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
# On a server: make && sudo make install && sudo modprobe twheel

KVER	?= $(shell uname -r)
KDIR	?= /lib/modules/$(KVER)/build
PREFIX	?= /usr/local
DESTDIR	?=

.PHONY: all module lib clean install demo check core-test fuzz-core \
	fuzz-core-long bench-core bench-dev selftests setup kernels style

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
	$(MAKE) -C tests/core bench N=$(N)

bench-dev:
	$(MAKE) -C bench run

demo:
	./scripts/demo.sh

check:
	./scripts/check.sh

install: all
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=extra modules_install
	depmod -a $(KVER)
	$(MAKE) -C lib install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null
	$(MAKE) -C lib clean
	$(MAKE) -C tests/core clean
	$(MAKE) -C selftests clean
	$(MAKE) -C stress clean
	$(MAKE) -C demo clean
	$(MAKE) -C bench clean
