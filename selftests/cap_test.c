// SPDX-License-Identifier: GPL-2.0
/*
 * The module's caps, through its writable parameters: max_entries_total
 * bounds the live ids plus unread events of all wheels together (ENOSPC
 * past it), and max_entries_per_wheel bounds what setup may ask for and
 * is what 0 selects. Each test restores the parameters it changed.
 * Needs root (the VM runs tests as root).
 */
#include "twheel_util.h"
#include "kselftest_harness.h"

#define TICK_NS		(2 * NSEC_PER_MSEC)
#define PARAM_DIR	"/sys/module/twheel/parameters/"

FIXTURE(caps) {
	unsigned long long total, per_wheel;
};

FIXTURE_SETUP(caps)
{
	self->total = module_param("max_entries_total", 0);
	self->per_wheel = module_param("max_entries_per_wheel", 0);
	ASSERT_NE(0, self->total) TH_LOG("no %smax_entries_total", PARAM_DIR);
	ASSERT_NE(0, self->per_wheel);
	if (access(PARAM_DIR "max_entries_total", W_OK))
		SKIP(return, "module parameters not writable (not root?)");
}

FIXTURE_TEARDOWN(caps)
{
	if (self->total)
		module_param_set("max_entries_total", self->total);
	if (self->per_wheel)
		module_param_set("max_entries_per_wheel", self->per_wheel);
}

TEST_F(caps, global_cap_spans_all_wheels)
{
	int a = wheel_new(0, TICK_NS, NSEC_PER_SEC, 0);
	int b = wheel_new(0, TICK_NS, NSEC_PER_SEC, 0);
	unsigned int i;

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	ASSERT_EQ(0, module_param_set("max_entries_total", 100));
	for (i = 0; i < 60; i++)
		ASSERT_EQ(0, twheel_add(a, i, 10 * NSEC_PER_SEC)) TH_LOG("a %u", i);
	for (i = 0; i < 40; i++)
		ASSERT_EQ(0, twheel_add(b, i, 10 * NSEC_PER_SEC)) TH_LOG("b %u", i);
	EXPECT_EQ(-ENOSPC, twheel_add(b, 40, 10 * NSEC_PER_SEC));
	EXPECT_EQ(-ENOSPC, twheel_add(a, 60, 10 * NSEC_PER_SEC));
	EXPECT_EQ(-ENOSPC, twheel_refresh(a, 61, 10 * NSEC_PER_SEC,
					  TWHEEL_OPF_ADD_IF_ABSENT));
	/* Room freed in one wheel is usable by the other. */
	EXPECT_EQ(0, twheel_cancel(a, 0));
	EXPECT_EQ(0, twheel_add(b, 40, 10 * NSEC_PER_SEC));
	EXPECT_EQ(-ENOSPC, twheel_add(a, 0, 10 * NSEC_PER_SEC));
	/* Closing a wheel gives back all of its entries: a has 59 of 100. */
	close(b);
	for (i = 60; i < 101; i++)
		EXPECT_EQ(0, twheel_add(a, i, 10 * NSEC_PER_SEC)) TH_LOG("a %u", i);
	EXPECT_EQ(-ENOSPC, twheel_add(a, 101, 10 * NSEC_PER_SEC));
	close(a);
}

TEST_F(caps, global_cap_counts_unread_events)
{
	struct twheel_event ev[10];
	int a = wheel_new(0, TICK_NS, NSEC_PER_SEC, 0);
	unsigned int i;

	ASSERT_LE(0, a);
	ASSERT_EQ(0, module_param_set("max_entries_total", 10));
	for (i = 0; i < 10; i++)
		ASSERT_EQ(0, twheel_add(a, i, 0));
	EXPECT_EQ(10, wait_waiting(a, 10));
	EXPECT_EQ(-ENOSPC, twheel_add(a, 10, 0));
	ASSERT_EQ(10, twheel_read_events(a, ev, 10));
	for (i = 0; i < 10; i++)
		EXPECT_EQ(0, twheel_add(a, 20 + i, NSEC_PER_SEC));
	close(a);
}

TEST_F(caps, per_wheel_param_bounds_setup)
{
	int fd = twheel_open(0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, module_param_set("max_entries_per_wheel", 50));
	EXPECT_EQ(-EINVAL, twheel_setup(fd, TICK_NS, NSEC_PER_SEC,
					CLOCK_MONOTONIC, 51));
	EXPECT_EQ(0, twheel_setup(fd, TICK_NS, NSEC_PER_SEC, CLOCK_MONOTONIC, 0));
	EXPECT_EQ(50, fdinfo_get(fd, "max_entries"));
	close(fd);
}

TEST_F(caps, per_wheel_cap_is_fixed_at_setup)
{
	int fd = wheel_new(0, TICK_NS, NSEC_PER_SEC, 20);
	unsigned int i;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, module_param_set("max_entries_per_wheel", 5));
	for (i = 0; i < 20; i++)
		EXPECT_EQ(0, twheel_add(fd, i, NSEC_PER_SEC)) TH_LOG("id %u", i);
	EXPECT_EQ(-ENOSPC, twheel_add(fd, 20, NSEC_PER_SEC));
	close(fd);
}

TEST_HARNESS_MAIN
