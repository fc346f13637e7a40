// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/PID/fdinfo of a wheel: the settings given at setup and the
 * counters (live, events_waiting, expired_total, ticks_run,
 * ticks_caught_up, due), each as "name:\tdecimal", moving as they should:
 * as of the last look at the wheel, since the tasks that look at it do
 * its expiry work.
 */
#include "twheel_util.h"
#include "kselftest_harness.h"

#define TICK_NS		(2 * NSEC_PER_MSEC)
#define DFLT_NS		(30 * NSEC_PER_MSEC)

static const char *const keys[] = {
	"tick_ns", "default_timeout_ns", "clockid", "max_entries", "live",
	"events_waiting", "expired_total", "ticks_run", "ticks_caught_up",
	"due",
};

FIXTURE(wheel) {
	int fd;
};

FIXTURE_SETUP(wheel)
{
	self->fd = dev_open(0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, dev_setup(self->fd, TICK_NS, DFLT_NS, CLOCK_MONOTONIC,
			       1000));
}

FIXTURE_TEARDOWN(wheel)
{
	close(self->fd);
}

/* How many lines of fdinfo start with "@key:". */
static int count_key(int fd, const char *key)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += !strncmp(line, key, klen) && line[klen] == ':';
	fclose(f);
	return n;
}

TEST_F(wheel, every_key_appears_once_as_decimal)
{
	unsigned int i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		EXPECT_EQ(1, count_key(self->fd, keys[i])) TH_LOG("%s", keys[i]);
		EXPECT_LE(0, fdinfo_get(self->fd, keys[i])) TH_LOG("%s", keys[i]);
	}
	EXPECT_EQ(1, count_key(self->fd, "pos"));
	EXPECT_EQ(1, count_key(self->fd, "flags"));
	EXPECT_EQ(1, count_key(self->fd, "mnt_id"));
}

TEST_F(wheel, shows_the_settings)
{
	EXPECT_EQ((long long)TICK_NS, fdinfo_get(self->fd, "tick_ns"));
	EXPECT_EQ((long long)DFLT_NS, fdinfo_get(self->fd, "default_timeout_ns"));
	EXPECT_EQ(CLOCK_MONOTONIC, fdinfo_get(self->fd, "clockid"));
	EXPECT_EQ(1000, fdinfo_get(self->fd, "max_entries"));
}

TEST(shows_boottime_clock)
{
	int fd = dev_open(0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dev_setup(fd, TICK_NS, DFLT_NS, CLOCK_BOOTTIME, 0));
	EXPECT_EQ(CLOCK_BOOTTIME, fdinfo_get(fd, "clockid"));
	close(fd);
}

TEST_F(wheel, counters_start_at_zero)
{
	EXPECT_EQ(0, fdinfo_get(self->fd, "live"));
	EXPECT_EQ(0, fdinfo_get(self->fd, "events_waiting"));
	EXPECT_EQ(0, fdinfo_get(self->fd, "expired_total"));
}

TEST_F(wheel, live_follows_adds_and_cancels)
{
	ASSERT_EQ(0, dev_add(self->fd, 1, NSEC_PER_SEC));
	ASSERT_EQ(0, dev_add(self->fd, 2, NSEC_PER_SEC));
	EXPECT_EQ(2, fdinfo_get(self->fd, "live"));
	ASSERT_EQ(0, dev_refresh(self->fd, 3, NSEC_PER_SEC,
				 TWHEEL_OPF_ADD_IF_ABSENT));
	EXPECT_EQ(3, fdinfo_get(self->fd, "live"));
	ASSERT_EQ(0, dev_refresh(self->fd, 3, NSEC_PER_SEC, 0));
	EXPECT_EQ(3, fdinfo_get(self->fd, "live"));
	ASSERT_EQ(0, dev_cancel(self->fd, 1));
	EXPECT_EQ(2, fdinfo_get(self->fd, "live"));
	ASSERT_EQ(-EEXIST, dev_add(self->fd, 2, NSEC_PER_SEC));
	EXPECT_EQ(2, fdinfo_get(self->fd, "live"));
	EXPECT_EQ(0, fdinfo_get(self->fd, "expired_total"));
}

TEST_F(wheel, expiry_moves_live_to_events_waiting)
{
	struct twheel_event ev[3];

	ASSERT_EQ(0, dev_add(self->fd, 1, 0));
	ASSERT_EQ(0, dev_add(self->fd, 2, 0));
	ASSERT_EQ(0, dev_add(self->fd, 3, 0));
	ASSERT_EQ(0, dev_add(self->fd, 4, 10 * NSEC_PER_SEC));
	ASSERT_EQ(3, wait_waiting(self->fd, 3));
	EXPECT_EQ(1, fdinfo_get(self->fd, "live"));
	EXPECT_EQ(3, fdinfo_get(self->fd, "events_waiting"));
	EXPECT_EQ(3, fdinfo_get(self->fd, "expired_total"));
	ASSERT_EQ(1, dev_read_events(self->fd, ev, 1));
	EXPECT_EQ(2, fdinfo_get(self->fd, "events_waiting"));
	EXPECT_EQ(3, fdinfo_get(self->fd, "expired_total"));
	ASSERT_EQ(2, dev_read_events(self->fd, ev, 3));
	EXPECT_EQ(0, fdinfo_get(self->fd, "events_waiting"));
	EXPECT_EQ(3, fdinfo_get(self->fd, "expired_total"));
	EXPECT_EQ(1, fdinfo_get(self->fd, "live"));
}

TEST_F(wheel, ticks_run_advances_with_time)
{
	long long t0, t1, c0, c1;
	struct twheel_event ev;

	t0 = fdinfo_get(self->fd, "ticks_run");
	c0 = fdinfo_get(self->fd, "ticks_caught_up");
	ASSERT_LE(0, t0);
	ASSERT_LE(0, c0);
	ASSERT_EQ(0, dev_add(self->fd, 1, 50 * NSEC_PER_MSEC));
	ASSERT_EQ(1, dev_read_events(self->fd, &ev, 1));
	t1 = fdinfo_get(self->fd, "ticks_run");
	c1 = fdinfo_get(self->fd, "ticks_caught_up");
	/*
	 * The wheel may sleep until its next deadline and process the ticks
	 * in between in one run, so only say that it ran.
	 */
	EXPECT_LT(t0, t1);
	/* Counted in ticks, not runs: only that it never goes back. */
	EXPECT_LE(c0, c1);
}

/*
 * Nobody looks: the timer marks the wheel due and does nothing else, so
 * the id stays live and no event waits, for as long as nobody looks
 * (fdinfo is no look). The first poll does the work.
 */
TEST_F(wheel, a_wheel_nobody_looks_at_is_due_and_does_nothing)
{
	uint64_t t0 = mono_ns(), until;
	long long due;

	ASSERT_EQ(0, dev_add(self->fd, 1, 300 * NSEC_PER_MSEC));
	due = fdinfo_get(self->fd, "due");
	/* Not before its deadline: a slow guest may have got there already. */
	if (mono_ns() < t0 + 300 * NSEC_PER_MSEC)
		EXPECT_EQ(0, due);
	/*
	 * Past the deadline (a cascade may mark the wheel due before it, and
	 * nobody clears a mark while nobody looks), then the mark.
	 */
	while (mono_ns() < t0 + 300 * NSEC_PER_MSEC + 2 * TICK_NS)
		sleep_ns(NSEC_PER_MSEC);
	until = mono_ns() + 10 * NSEC_PER_SEC;
	while (fdinfo_get(self->fd, "due") != 1 && mono_ns() < until)
		sleep_ns(NSEC_PER_MSEC);
	ASSERT_EQ(1, fdinfo_get(self->fd, "due"));
	EXPECT_EQ(1, fdinfo_get(self->fd, "live"));
	EXPECT_EQ(0, fdinfo_get(self->fd, "events_waiting"));
	EXPECT_EQ(0, fdinfo_get(self->fd, "expired_total"));
	dev_look(self->fd);
	EXPECT_EQ(0, fdinfo_get(self->fd, "due"));
	EXPECT_EQ(0, fdinfo_get(self->fd, "live"));
	EXPECT_EQ(1, fdinfo_get(self->fd, "events_waiting"));
	EXPECT_EQ(1, fdinfo_get(self->fd, "expired_total"));
}

TEST_F(wheel, dup_shows_the_same_wheel)
{
	int d = dup(self->fd);

	ASSERT_LE(0, d);
	ASSERT_EQ(0, dev_add(self->fd, 1, NSEC_PER_SEC));
	EXPECT_EQ(1, fdinfo_get(d, "live"));
	EXPECT_EQ((long long)TICK_NS, fdinfo_get(d, "tick_ns"));
	close(d);
}

TEST_HARNESS_MAIN
