// SPDX-License-Identifier: GPL-2.0
/*
 * The caps: a wheel's max_entries and the module's max_entries_total
 * (live ids plus unread events of all wheels together) answer ENOSPC
 * past them, exactly, even under adders racing on several threads;
 * max_entries_per_wheel bounds what setup may ask for and is what 0
 * selects. Tests that change a module parameter restore it and check
 * that it was. Needs root (the VM runs tests as root).
 */
#include "twheel_util.h"
#include "kselftest_harness.h"

#define TICK_NS		(2 * NSEC_PER_MSEC)
#define HOUR_NS		(3600 * NSEC_PER_SEC)

FIXTURE(caps) {
	unsigned long long total, per_wheel;
};

FIXTURE_SETUP(caps)
{
	self->total = module_param("max_entries_total", 0);
	self->per_wheel = module_param("max_entries_per_wheel", 0);
	ASSERT_NE(0, self->total) TH_LOG("no %smax_entries_total", TWHEEL_PARAM_DIR);
	ASSERT_NE(0, self->per_wheel);
	if (access(TWHEEL_PARAM_DIR "max_entries_total", W_OK))
		SKIP(return, "module parameters not writable (not root?)");
}

FIXTURE_TEARDOWN(caps)
{
	if (self->total) {
		module_param_set("max_entries_total", self->total);
		EXPECT_EQ(self->total, module_param("max_entries_total", 0));
	}
	if (self->per_wheel) {
		module_param_set("max_entries_per_wheel", self->per_wheel);
		EXPECT_EQ(self->per_wheel,
			  module_param("max_entries_per_wheel", 0));
	}
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
		ASSERT_EQ(0, dev_add(a, i, 10 * NSEC_PER_SEC)) TH_LOG("a %u", i);
	for (i = 0; i < 40; i++)
		ASSERT_EQ(0, dev_add(b, i, 10 * NSEC_PER_SEC)) TH_LOG("b %u", i);
	EXPECT_EQ(-ENOSPC, dev_add(b, 40, 10 * NSEC_PER_SEC));
	EXPECT_EQ(-ENOSPC, dev_add(a, 60, 10 * NSEC_PER_SEC));
	EXPECT_EQ(-ENOSPC, dev_refresh(a, 61, 10 * NSEC_PER_SEC,
				       TWHEEL_OPF_ADD_IF_ABSENT));
	/* Room freed in one wheel is usable by the other. */
	EXPECT_EQ(0, dev_cancel(a, 0));
	EXPECT_EQ(0, dev_add(b, 40, 10 * NSEC_PER_SEC));
	EXPECT_EQ(-ENOSPC, dev_add(a, 0, 10 * NSEC_PER_SEC));
	/* Closing a wheel gives back all of its entries: a has 59 of 100. */
	close(b);
	for (i = 60; i < 101; i++)
		EXPECT_EQ(0, dev_add(a, i, 10 * NSEC_PER_SEC)) TH_LOG("a %u", i);
	EXPECT_EQ(-ENOSPC, dev_add(a, 101, 10 * NSEC_PER_SEC));
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
		ASSERT_EQ(0, dev_add(a, i, 0));
	EXPECT_EQ(10, wait_waiting(a, 10));
	EXPECT_EQ(-ENOSPC, dev_add(a, 10, 0));
	ASSERT_EQ(10, dev_read_events(a, ev, 10));
	for (i = 0; i < 10; i++)
		EXPECT_EQ(0, dev_add(a, 20 + i, NSEC_PER_SEC));
	close(a);
}

TEST_F(caps, per_wheel_param_bounds_setup)
{
	int fd = dev_open(0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, module_param_set("max_entries_per_wheel", 50));
	EXPECT_EQ(-EINVAL, dev_setup(fd, TICK_NS, NSEC_PER_SEC,
				     CLOCK_MONOTONIC, 51));
	EXPECT_EQ(0, dev_setup(fd, TICK_NS, NSEC_PER_SEC, CLOCK_MONOTONIC, 0));
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
		EXPECT_EQ(0, dev_add(fd, i, NSEC_PER_SEC)) TH_LOG("id %u", i);
	EXPECT_EQ(-ENOSPC, dev_add(fd, 20, NSEC_PER_SEC));
	close(fd);
}

/* Adds ids [base, base + n) in batches of 500, counting the results. */
struct adder {
	pthread_t th;
	int fd;
	uint64_t base;
	unsigned int n;
	unsigned int ok, nospc, other;
};

static void *adder_main(void *arg)
{
	struct adder *a = arg;
	struct twheel_op ops[500];
	unsigned int i, j;

	for (i = 0; i < a->n; i += 500) {
		unsigned int k = a->n - i < 500 ? a->n - i : 500;

		for (j = 0; j < k; j++)
			op_init(&ops[j], TWHEEL_OP_ADD, a->base + i + j, 0, 0);
		if (dev_batch(a->fd, ops, k) != (int)k) {
			a->other += k;
			continue;
		}
		for (j = 0; j < k; j++) {
			if (!ops[j].result)
				a->ok++;
			else if (ops[j].result == -ENOSPC)
				a->nospc++;
			else
				a->other++;
		}
	}
	return NULL;
}

#define NR_ADDERS	4

/* NR_ADDERS threads over @nfds wheels, @per ids each; totals in @sum. */
static void race_adds(int *fds, int nfds, unsigned int per, struct adder *sum)
{
	struct adder a[NR_ADDERS];
	int i;

	memset(a, 0, sizeof(a));
	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < NR_ADDERS; i++) {
		a[i].fd = fds[i % nfds];
		a[i].base = (uint64_t)i << 32;
		a[i].n = per;
		if (pthread_create(&a[i].th, NULL, adder_main, &a[i])) {
			sum->other += per;
			a[i].n = 0;
		}
	}
	for (i = 0; i < NR_ADDERS; i++) {
		if (a[i].n)
			pthread_join(a[i].th, NULL);
		sum->ok += a[i].ok;
		sum->nospc += a[i].nospc;
		sum->other += a[i].other;
	}
}

TEST_F_TIMEOUT(caps, per_wheel_cap_holds_under_racing_adders, 120)
{
	int fd = wheel_new(O_CLOEXEC, NSEC_PER_MSEC, HOUR_NS, 10000);
	struct adder sum;

	ASSERT_LE(0, fd);
	race_adds(&fd, 1, 5000, &sum);
	EXPECT_EQ(10000, sum.ok);
	EXPECT_EQ(10000, sum.nospc);
	EXPECT_EQ(0, sum.other);
	EXPECT_EQ(10000, fdinfo_get(fd, "live"));
	close(fd);
}

TEST_F_TIMEOUT(caps, global_cap_holds_under_racing_adders, 120)
{
	int fds[2];
	struct adder sum;

	fds[0] = wheel_new(O_CLOEXEC, NSEC_PER_MSEC, HOUR_NS, 0);
	fds[1] = wheel_new(O_CLOEXEC, NSEC_PER_MSEC, HOUR_NS, 0);
	ASSERT_LE(0, fds[0]);
	ASSERT_LE(0, fds[1]);
	ASSERT_EQ(0, module_param_set("max_entries_total", 20000));
	race_adds(fds, 2, 10000, &sum);
	EXPECT_EQ(20000, sum.ok);
	EXPECT_EQ(20000, sum.nospc);
	EXPECT_EQ(0, sum.other);
	close(fds[0]);
	close(fds[1]);
}

TEST_HARNESS_MAIN
