# SPDX-License-Identifier: GPL-2.0
#
# Included by the Makefiles of tests/stress/, tests/lib/, tests/tools/,
# tests/core/ and bench/ (after their first target): where the tree is,
# the flags that find tests/common/twheel_test.h (which builds on
# selftests/twheel_util.h), libtwheel and the uapi header, the rule that
# builds libtwheel.a, and where the kselftest files are (from Debian's
# linux-source, never kept in git): kselftest.h (TAP reporting),
# kselftest_harness.h (TEST, FIXTURE, ASSERT_*) and
# kselftest/ktap_helpers.sh (TAP from shell scripts). selftests/ builds
# on the kernel's lib.mk instead.

TOP		:= $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/../..)
LIBTWHEEL	:= $(TOP)/lib/libtwheel.a
TEST_CPPFLAGS	:= -D_GNU_SOURCE -I$(TOP)/tests/common -I$(TOP)/lib -I$(TOP)/uapi
TEST_DEPS	:= $(TOP)/tests/common/twheel_test.h $(TOP)/selftests/twheel_util.h \
		   $(TOP)/lib/twheel.h $(TOP)/uapi/linux/twheel.h

# The kselftest framework, unpacked from linux-source into the cache by
# vm/fetch-kernels.sh (the one place that does; scripts/setup.sh kernels
# source fetches it).
HARNESS_DIR	?= $(or $(TWHEEL_CACHE),/var/tmp/twheel-cache)/linux-source/tree/tools/testing/selftests
HARNESS		:= $(HARNESS_DIR)/kselftest.h $(HARNESS_DIR)/kselftest_harness.h \
		   $(HARNESS_DIR)/kselftest/ktap_helpers.sh

$(HARNESS):
	@echo "$@ is missing: run scripts/setup.sh kernels source" >&2; exit 1

$(LIBTWHEEL): FORCE
	$(MAKE) -C $(TOP)/lib libtwheel.a

.PHONY: FORCE
FORCE:
