# SPDX-License-Identifier: GPL-2.0
#
# Included by the Makefiles of selftests/, tests/stress/, tests/core/, bench/
# and demo/ (after their first target): where the tree is, the flags
# that find tests/common/twheel_test.h, libtwheel and the uapi header,
# the rule that builds libtwheel.a, and the kselftest files taken at
# build time out of Debian's linux-source tarball, never kept in git:
# kselftest.h (TAP reporting), kselftest_harness.h (TEST, FIXTURE,
# ASSERT_*) and kselftest/ktap_helpers.sh (TAP from shell scripts).

TOP		:= $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/../..)
LIBTWHEEL	:= $(TOP)/lib/libtwheel.a
TEST_CPPFLAGS	:= -D_GNU_SOURCE -I$(TOP)/tests/common -I$(TOP)/lib -I$(TOP)/uapi
TEST_DEPS	:= $(TOP)/tests/common/twheel_test.h $(TOP)/lib/twheel.h \
		   $(TOP)/uapi/linux/twheel.h

# The linux-source tarball vm/fetch-kernels.sh keeps in the cache.
LINUX_SOURCE	?= $(lastword $(sort $(wildcard $(or $(TWHEEL_CACHE),/var/tmp/twheel-cache)/linux-source/linux-source-*.tar.xz)))
HARNESS_DIR	?= $(if $(TWHEEL_CACHE),$(TWHEEL_CACHE)/kselftest,$(TOP)/.kselftest)
HARNESS		:= $(HARNESS_DIR)/kselftest.h $(HARNESS_DIR)/kselftest_harness.h \
		   $(HARNESS_DIR)/kselftest/ktap_helpers.sh

# Three files out of the kernel tarball in one pass; the rest stays packed.
$(HARNESS) &:
	@test -n "$(LINUX_SOURCE)" || { echo "no linux-source tarball in the cache: run scripts/setup.sh" >&2; exit 1; }
	mkdir -p $(HARNESS_DIR)
	tar -xJf $(LINUX_SOURCE) -C $(HARNESS_DIR) --strip-components=4 \
		--wildcards '*/tools/testing/selftests/kselftest.h' \
		'*/tools/testing/selftests/kselftest_harness.h' \
		'*/tools/testing/selftests/kselftest/ktap_helpers.sh'
	touch $(HARNESS)

$(LIBTWHEEL): FORCE
	$(MAKE) -C $(TOP)/lib libtwheel.a

.PHONY: FORCE
FORCE:
