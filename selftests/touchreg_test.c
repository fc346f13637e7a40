// SPDX-License-Identifier: GPL-2.0
/*
 * The registered touch table (TWHEEL_SETUPF_TOUCH_USER and
 * TWHEEL_IOC_TOUCH_REGISTER): every error of setup and registration;
 * binding before registration; mmap and fdinfo of such a wheel; a stamped
 * id kept alive and an unstamped one expiring, never early; the garbage
 * stamps of touch_test on process memory; a private mapping refused; the
 * pinned pages outliving munmap, shared across fork, and used after the registering process
 * exited; the pages charged to the user against RLIMIT_MEMLOCK without
 * CAP_IPC_LOCK, also after the registering process exited, and to the
 * process's VmPin; and a BPF_F_MMAPABLE array as the
 * table, stamped through its mapping.
 *
 * A registered table holds stamps on the kernel's clock, the wheel's
 * clockid in the initial time namespace. The selftests run there, so the
 * clock_gettime(CLOCK_MONOTONIC) of this process is that clock, and
 * dev_touch() stores it; one test moves to a time namespace behind it to
 * tell the two clocks apart. The io_uring form of the registration is
 * uring_test's.
 */
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/bpf.h>
#include <linux/capability.h>

#include "kselftest_harness.h"
#include "twheel_harness.h"

#define TICK_NS		(10 * NSEC_PER_MSEC)
/* The timeout of stamped ids: a stalled VM still stamps several times in it. */
#define TOUT_NS		(300 * NSEC_PER_MSEC)
/* The timeout of ids that are to expire as they are. */
#define SHORT_NS	(150 * NSEC_PER_MSEC)
/* How often a stamping loop stores. */
#define STAMP_NS	(2 * TICK_NS)
#define SLOTS		1000
#define PROBE_ID	0x5eedULL
/*
 * Longest wait for something the wheel must do within a timeout or two:
 * this only catches a stuck wheel, as an emulated VM on a loaded host
 * runs the expiry work a second or more late at times.
 */
#define WAIT_NS		(2 * TOUT_NS + 5 * NSEC_PER_SEC)

/* ---- helpers ---- */

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/* @slots slots in bytes, rounded up to whole pages. */
static size_t table_len(uint32_t slots)
{
	size_t ps = page_size();

	return ((size_t)slots * 8 + ps - 1) / ps * ps;
}

/* @t rounded up to the tick grid through @grid. */
static uint64_t grid_up(uint64_t grid, uint64_t t)
{
	return tick_grid_up(grid, TICK_NS, t);
}

/* Setup with @flags and @slots; 0 or the positive errno. */
static int setup_errno(int fd, uint32_t flags, uint32_t slots, uint32_t cap)
{
	struct twheel_setup_args args = {
		.tick_ns = TICK_NS,
		.default_timeout_ns = TOUT_NS,
		.clockid = CLOCK_MONOTONIC,
		.max_entries = cap,
		.flags = flags,
		.touch_slots = slots,
	};

	errno = 0;
	return ioctl(fd, TWHEEL_IOC_SETUP, &args) ? errno : 0;
}

/* A wheel set up with TWHEEL_SETUPF_TOUCH_USER and @slots slots, or -errno. */
static int user_wheel(uint32_t slots)
{
	int fd = dev_open(O_CLOEXEC | O_NONBLOCK), err;

	if (fd < 0)
		return fd;
	err = setup_errno(fd, TWHEEL_SETUPF_TOUCH_USER, slots, 0);
	if (err) {
		close(fd);
		return -err;
	}
	return fd;
}

/* The deadline of a probe added now: a point of the wheel's tick grid. */
static uint64_t probe_grid(struct __test_metadata *_metadata, int fd)
{
	struct twheel_op op;

	dev_prep_add(&op, PROBE_ID, NSEC_PER_SEC);
	ASSERT_EQ(0, dev_submit_op(fd, &op));
	ASSERT_EQ(0, dev_cancel(fd, PROBE_ID));
	return op.deadline_ns;
}

/* ADD @id bound to @slot with @timeout (or the default); returns its deadline. */
static uint64_t add_bound(struct __test_metadata *_metadata, int fd, uint64_t id,
			  uint32_t slot, uint64_t timeout)
{
	struct twheel_op op;

	dev_prep_add(&op, id, timeout);
	dev_prep_bind(&op, slot);
	ASSERT_EQ(0, run_op(_metadata, fd, &op));
	return op.deadline_ns;
}

/* Wait (up to WAIT_NS past @deadline) for one event into *@ev. */
static void next_event(struct __test_metadata *_metadata, int fd, uint64_t deadline,
		       struct twheel_event *ev)
{
	memset(ev, JUNK, sizeof(*ev));
	ASSERT_EQ(1, drain_until(fd, ev, 1, deadline + WAIT_NS))
		TH_LOG("no event by %llu ms past the deadline",
		       (unsigned long long)(WAIT_NS / NSEC_PER_MSEC));
	EXPECT_LE(ev->deadline_ns, ev->expired_ns)
		TH_LOG("id %llu expired early", (unsigned long long)ev->id);
}

/* @id's event, due at @deadline, is the next one, and not early. */
static void expect_expiry(struct __test_metadata *_metadata, int fd, uint64_t id,
			  uint64_t deadline)
{
	struct twheel_event ev;

	next_event(_metadata, fd, deadline, &ev);
	EXPECT_EQ(id, ev.id);
	EXPECT_EQ(deadline, ev.deadline_ns);
}

/*
 * @n events, one for each of @ids, each at its deadline in @deadlines,
 * in any order among equal deadlines.
 */
static void expect_expiries(struct __test_metadata *_metadata, int fd, int n,
			    const uint64_t *ids, const uint64_t *deadlines)
{
	struct twheel_event ev[8];
	uint64_t last = 0;
	int i, j;

	ASSERT_GE(8, n);
	for (i = 0; i < n; i++)
		last = deadlines[i] > last ? deadlines[i] : last;
	memset(ev, JUNK, sizeof(ev));
	ASSERT_EQ(n, drain_until(fd, ev, n, last + WAIT_NS));
	for (i = 0; i < n; i++) {
		for (j = 0; j < n && ids[j] != ev[i].id; j++)
			;
		ASSERT_GT(n, j) TH_LOG("event of id %llu", (unsigned long long)ev[i].id);
		EXPECT_EQ(deadlines[j], ev[i].deadline_ns)
			TH_LOG("id %llu", (unsigned long long)ids[j]);
		EXPECT_LE(ev[i].deadline_ns, ev[i].expired_ns);
	}
}

/*
 * Id @id, armed with @tout to @d1 and stamped once with @s before it,
 * gives its event: re-armed once to @s + @tout on the grid, and expired
 * there, the stamp still in its slot (a stamp counts once). If the event
 * is at @d1 the kernel looked before the stamp was stored, which it may
 * only have done if the test stalled past @d1 before storing it.
 */
static void expect_rearmed_once(struct __test_metadata *_metadata, int fd, uint64_t grid,
				uint64_t id, uint64_t d1, uint64_t s, uint64_t tout)
{
	struct twheel_event ev;

	next_event(_metadata, fd, grid_up(grid, s + tout), &ev);
	EXPECT_EQ(id, ev.id);
	if (ev.deadline_ns == d1) {
		ASSERT_LT(d1, s) TH_LOG("stamped %llu ms before the deadline, not seen",
					(unsigned long long)((d1 - s) / NSEC_PER_MSEC));
		TH_LOG("the test stalled: stamped %llu ms after the deadline",
		       (unsigned long long)((s - d1) / NSEC_PER_MSEC));
		return;
	}
	EXPECT_EQ(grid_up(grid, s + tout), ev.deadline_ns);
	EXPECT_EQ(1, fdinfo_get(fd, "touch_rearms"));
	EXPECT_EQ(0, drain_until(fd, &ev, 1, mono_ns() + tout + 2 * TICK_NS))
		TH_LOG("id %llu came again", (unsigned long long)ev.id);
}

/* What a stamping loop saw. */
struct stamping {
	uint64_t last;		/* the last stamp stored */
	uint64_t gap;		/* the longest time without a stamp */
	int nr_events;		/* events read meanwhile, into the caller's array */
};

/*
 * Stamp @slot every STAMP_NS from @since (a time at or before the
 * binding) until @until and until @want events were read, reading events
 * into @ev (room for @max) meanwhile; give up WAIT_NS past @until. The
 * gap counts from @since to the first stamp and from the last stamp to
 * the end: a stamped id may only expire if a gap was a timeout long.
 */
static void stamp_while_reading(struct __test_metadata *_metadata, int fd,
				const struct dev_touch *t, uint32_t slot, uint64_t since,
				uint64_t until, int want, struct twheel_event *ev, int max,
				struct stamping *st)
{
	uint64_t now, prev = since;
	int n;

	memset(st, 0, sizeof(*st));
	memset(ev, JUNK, max * sizeof(*ev));
	for (;;) {
		now = mono_ns();
		if (now - prev > st->gap)
			st->gap = now - prev;
		if ((now >= until && st->nr_events >= want) || now >= until + WAIT_NS ||
		    st->nr_events == max)
			break;
		dev_touch_at(t, slot, now);
		prev = now;
		n = drain_until(fd, ev + st->nr_events, max - st->nr_events, now + STAMP_NS);
		ASSERT_LE(0, n);
		st->nr_events += n;
	}
	st->last = prev;
}

/* VmPin of /proc/self/status: this process's pinned memory, in kB; -1 if missing. */
static long long vm_pin_kb(void)
{
	char buf[8192], *p;

	if (read_file("/proc/self/status", buf, sizeof(buf)) <= 0)
		return -1;
	p = strstr(buf, "\nVmPin:");
	return p ? strtoll(p + 7, NULL, 10) : -1;
}

static long long pages_kb(long long pages)
{
	return pages * (long long)page_size() / 1024;
}

/* ---- the fixture: a wheel with a registered table of anonymous memory ---- */

FIXTURE(reg) {
	int fd;
	uint64_t grid;
	struct dev_touch t;
};

FIXTURE_SETUP(reg)
{
	self->fd = user_wheel(SLOTS);
	ASSERT_LE(0, self->fd) TH_LOG("setup: %s", strerror(-self->fd));
	ASSERT_EQ(0, dev_touch_anon(SLOTS, PROT_READ | PROT_WRITE, MAP_SHARED, &self->t));
	ASSERT_EQ(0, dev_touch_register(self->fd, self->t.slots, SLOTS, 0));
	self->grid = probe_grid(_metadata, self->fd);
}

FIXTURE_TEARDOWN(reg)
{
	close(self->fd);
	if (self->t.slots)
		dev_touch_unmap(&self->t);
}

/* ---- setup and registration errors ---- */

TEST(setup_with_both_touch_flags_is_einval)
{
	int fd = dev_open(O_CLOEXEC);

	ASSERT_LE(0, fd);
	EXPECT_EQ(EINVAL, setup_errno(fd, TWHEEL_SETUPF_TOUCH | TWHEEL_SETUPF_TOUCH_USER,
				      SLOTS, 0));
	EXPECT_EQ(EINVAL, setup_errno(fd, TWHEEL_SETUPF_TOUCH_USER, 0, 0));
	EXPECT_EQ(EINVAL, setup_errno(fd, TWHEEL_SETUPF_TOUCH_USER, 101, 100));
	EXPECT_EQ(EINVAL, setup_errno(fd, TWHEEL_SETUPF_TOUCH_USER, TWHEEL_TOUCH_MAX_SLOTS + 1,
				      0));
	/* Not set up: a good setup still works. */
	EXPECT_EQ(-1, fdinfo_get(fd, "tick_ns"));
	EXPECT_EQ(0, setup_errno(fd, TWHEEL_SETUPF_TOUCH_USER, 100, 100));
	EXPECT_EQ(100, fdinfo_get(fd, "touch_slots"));
	close(fd);
}

TEST(register_on_a_wheel_without_touch_user_is_einval)
{
	int plain = wheel_new(O_CLOEXEC, TICK_NS, TOUT_NS, 0);
	int own = dev_open(O_CLOEXEC);
	struct dev_touch t;

	ASSERT_LE(0, plain);
	ASSERT_LE(0, own);
	ASSERT_EQ(0, setup_errno(own, TWHEEL_SETUPF_TOUCH, SLOTS, 0));
	ASSERT_EQ(0, dev_touch_anon(SLOTS, PROT_READ | PROT_WRITE, MAP_SHARED, &t));
	EXPECT_EQ(-EINVAL, dev_touch_register(plain, t.slots, 0, 0));
	EXPECT_EQ(-EINVAL, dev_touch_register(plain, t.slots, SLOTS, 0));
	EXPECT_EQ(-EINVAL, dev_touch_register(own, t.slots, SLOTS, 0));
	EXPECT_EQ(0, fdinfo_get(own, "touch_registered"));
	EXPECT_EQ(SLOTS, fdinfo_get(own, "touch_slots"));
	close(own);
	close(plain);
	EXPECT_EQ(0, dev_touch_unmap(&t));
}

/*
 * Each bad argument fails and registers nothing: the same wheel takes a
 * good registration after all of them.
 */
TEST(register_with_bad_flags_slots_or_addr_is_einval)
{
	static const uint32_t bad_slots[] = { 0, SLOTS - 1, SLOTS + 1, 2 * SLOTS, UINT32_MAX };
	static const uint32_t bad_flags[] = { 1, 2, 1U << 31, UINT32_MAX };
	int fd = user_wheel(SLOTS);
	struct dev_touch t;
	char *p;
	unsigned int i;

	ASSERT_LE(0, fd);
	/* A page more than the table: only the alignment is wrong below. */
	ASSERT_EQ(0, dev_touch_anon(SLOTS + page_size() / 8, PROT_READ | PROT_WRITE, MAP_SHARED, &t));
	p = (char *)t.slots;
	for (i = 0; i < ARRAY_SIZE(bad_flags); i++)
		EXPECT_EQ(-EINVAL, dev_touch_register(fd, p, SLOTS, bad_flags[i]))
			TH_LOG("flags %#x", bad_flags[i]);
	for (i = 0; i < ARRAY_SIZE(bad_slots); i++)
		EXPECT_EQ(-EINVAL, dev_touch_register(fd, p, bad_slots[i], 0))
			TH_LOG("slots %u", bad_slots[i]);
	EXPECT_EQ(-EINVAL, dev_touch_register(fd, p + 8, SLOTS, 0));
	EXPECT_EQ(-EINVAL, dev_touch_register(fd, p + 1, SLOTS, 0));
	EXPECT_EQ(-EINVAL, dev_touch_register(fd, p + page_size() / 2, SLOTS, 0));
	EXPECT_EQ(-EINVAL, dev_touch_register(fd, NULL, SLOTS, 0));
	EXPECT_EQ(1, fdinfo_get(fd, "touch_user"));
	EXPECT_EQ(0, fdinfo_get(fd, "touch_registered"));
	EXPECT_EQ(0, dev_touch_register(fd, p, SLOTS, 0));
	EXPECT_EQ(1, fdinfo_get(fd, "touch_registered"));
	close(fd);
	EXPECT_EQ(0, dev_touch_unmap(&t));
}

/*
 * Once registered, a table stays: another is EBUSY, is not pinned, and
 * its stamps reach nothing; the first one's do.
 */
TEST(second_register_is_ebusy)
{
	int fd = user_wheel(SLOTS);
	struct dev_touch t1, t2;
	uint64_t grid, d1, d2, s;
	long long lck;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dev_touch_anon(SLOTS, PROT_READ | PROT_WRITE, MAP_SHARED, &t1));
	ASSERT_EQ(0, dev_touch_anon(SLOTS, PROT_READ | PROT_WRITE, MAP_SHARED, &t2));
	ASSERT_EQ(0, dev_touch_register(fd, t1.slots, SLOTS, 0));
	lck = vm_pin_kb();
	EXPECT_EQ(-EBUSY, dev_touch_register(fd, t2.slots, SLOTS, 0));
	EXPECT_EQ(-EBUSY, dev_touch_register(fd, t1.slots, SLOTS, 0));
	EXPECT_EQ(lck, vm_pin_kb()) TH_LOG("a refused table stays counted");
	grid = probe_grid(_metadata, fd);
	d1 = add_bound(_metadata, fd, 1, 3, SHORT_NS);
	d2 = add_bound(_metadata, fd, 2, 4, TOUT_NS);
	sleep_ns(2 * TICK_NS);
	dev_touch_at(&t2, 3, UINT64_MAX);
	dev_touch(&t1, 4);
	s = t1.slots[4];
	expect_expiry(_metadata, fd, 1, d1);
	expect_rearmed_once(_metadata, fd, grid, 2, d2, s, TOUT_NS);
	close(fd);
	EXPECT_EQ(0, dev_touch_unmap(&t1));
	EXPECT_EQ(0, dev_touch_unmap(&t2));
}

/*
 * A descriptor opened O_RDONLY never registers, before anything else is
 * looked at: its wheel cannot be set up, the argument is not read.
 */
TEST(register_on_an_rdonly_descriptor_is_ebadf)
{
	int fd = open(TWHEEL_DEVICE, O_RDONLY | O_CLOEXEC);
	struct twheel_touch_register_args args;
	struct dev_touch t;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dev_touch_anon(SLOTS, PROT_READ | PROT_WRITE, MAP_SHARED, &t));
	EXPECT_EQ(-EBADF, dev_touch_register(fd, t.slots, SLOTS, 0));
	EXPECT_EQ(-EBADF, dev_touch_register(fd, t.slots, 0, UINT32_MAX));
	errno = 0;
	EXPECT_EQ(-1, ioctl(fd, TWHEEL_IOC_TOUCH_REGISTER, NULL));
	EXPECT_EQ(EBADF, errno);
	memset(&args, JUNK, sizeof(args));
	errno = 0;
	EXPECT_EQ(-1, ioctl(fd, TWHEEL_IOC_TOUCH_REGISTER, &args));
	EXPECT_EQ(EBADF, errno);
	close(fd);
	EXPECT_EQ(0, dev_touch_unmap(&t));
}

TEST(register_before_setup_is_ebadfd)
{
	int fd = dev_open(O_CLOEXEC);
	struct dev_touch t;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dev_touch_anon(SLOTS, PROT_READ | PROT_WRITE, MAP_SHARED, &t));
	EXPECT_EQ(-EBADFD, dev_touch_register(fd, t.slots, SLOTS, 0));
	/* Nothing of it stayed: the wheel sets up and registers. */
	EXPECT_EQ(0, setup_errno(fd, TWHEEL_SETUPF_TOUCH_USER, SLOTS, 0));
	EXPECT_EQ(0, dev_touch_register(fd, t.slots, SLOTS, 0));
	close(fd);
	EXPECT_EQ(0, dev_touch_unmap(&t));
}

/*
 * Memory that cannot be pinned for writing is EFAULT: unmapped (all of
 * it, or its second page), read-only, the kernel's half; and an argument
 * that cannot be read. Nothing stays counted, nothing is registered.
 */
TEST(register_of_memory_that_cannot_be_pinned_is_efault)
{
	const uint32_t slots = 2 * page_size() / 8;
	int fd = user_wheel(slots);
	struct dev_touch t, ro;
	long long lck;
	char *p;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dev_touch_anon(slots, PROT_READ | PROT_WRITE, MAP_SHARED, &t));
	ASSERT_EQ(0, dev_touch_anon(slots, PROT_READ, MAP_SHARED, &ro));
	p = (char *)t.slots;
	lck = vm_pin_kb();
	ASSERT_LE(0, lck);

	EXPECT_EQ(-EFAULT, dev_touch_register(fd, ro.slots, slots, 0));
	ASSERT_EQ(0, munmap(p + page_size(), page_size()));
	EXPECT_EQ(-EFAULT, dev_touch_register(fd, p, slots, 0));
	ASSERT_EQ(0, munmap(p, page_size()));
	EXPECT_EQ(-EFAULT, dev_touch_register(fd, p, slots, 0));
	EXPECT_EQ(-EFAULT, dev_touch_register(fd, (void *)(uintptr_t)(1ULL << 63), slots, 0));
	errno = 0;
	EXPECT_EQ(-1, ioctl(fd, TWHEEL_IOC_TOUCH_REGISTER, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(lck, vm_pin_kb());
	EXPECT_EQ(0, fdinfo_get(fd, "touch_registered"));

	/* A writable mapping at the same place registers. */
	ASSERT_EQ(p, mmap(p, t.map_len, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	EXPECT_EQ(0, dev_touch_register(fd, p, slots, 0));
	EXPECT_EQ(1, fdinfo_get(fd, "touch_registered"));
	close(fd);
	EXPECT_EQ(0, dev_touch_unmap(&t));
	EXPECT_EQ(0, dev_touch_unmap(&ro));
}

/*
 * A private mapping is refused with EINVAL, wholly or in part: its pinned
 * pages would be the process's copy at registration, and a fork (which
 * copies pinned pages for the child) or MADV_DONTNEED would send later
 * stores elsewhere, so a prefork server's workers would touch in vain.
 * Nothing is pinned or counted; shared memory then registers.
 */
TEST(register_of_a_private_mapping_is_einval)
{
	const uint32_t slots = 2 * page_size() / 8;
	int fd = user_wheel(slots);
	struct dev_touch priv, mixed;
	long long pin;
	char *p;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dev_touch_anon(slots, PROT_READ | PROT_WRITE, MAP_PRIVATE, &priv));
	ASSERT_EQ(0, dev_touch_anon(slots, PROT_READ | PROT_WRITE, MAP_SHARED, &mixed));
	p = (char *)mixed.slots;
	pin = vm_pin_kb();
	ASSERT_LE(0, pin);
	EXPECT_EQ(-EINVAL, dev_touch_register(fd, priv.slots, slots, 0));
	/* Shared, but for its second page. */
	ASSERT_EQ(p + page_size(), mmap(p + page_size(), page_size(), PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	EXPECT_EQ(-EINVAL, dev_touch_register(fd, p, slots, 0));
	EXPECT_EQ(pin, vm_pin_kb());
	EXPECT_EQ(0, fdinfo_get(fd, "touch_registered"));
	ASSERT_EQ(p + page_size(), mmap(p + page_size(), page_size(), PROT_READ | PROT_WRITE,
					MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	EXPECT_EQ(0, dev_touch_register(fd, p, slots, 0));
	EXPECT_EQ(1, fdinfo_get(fd, "touch_registered"));
	close(fd);
	EXPECT_EQ(0, dev_touch_unmap(&mixed));
	EXPECT_EQ(0, dev_touch_unmap(&priv));
}

/* ---- before registration ---- */

/*
 * Until the table is registered there is no slot to bind to; unbound ids
 * and TWHEEL_SLOT_NONE work as on any wheel.
 */
TEST(bind_before_register_is_einval)
{
	int fd = user_wheel(SLOTS);
	struct twheel_op op, ops[2];
	struct dev_touch t;
	uint64_t d;

	ASSERT_LE(0, fd);
	dev_prep_add(&op, 1, DEV_TIMEOUT_DEFAULT);
	dev_prep_bind(&op, 0);
	EXPECT_EQ(EINVAL, run_op(_metadata, fd, &op));
	ASSERT_EQ(0, dev_add(fd, 2, 3600 * NSEC_PER_SEC));
	dev_prep_refresh(&op, 2, DEV_TIMEOUT_DEFAULT, 0);
	dev_prep_bind(&op, SLOTS - 1);
	EXPECT_EQ(EINVAL, run_op(_metadata, fd, &op));
	dev_prep_add(&ops[0], 3, DEV_TIMEOUT_DEFAULT);
	dev_prep_bind(&ops[0], 1);
	dev_prep_add(&ops[1], 4, 3600 * NSEC_PER_SEC);
	dev_prep_bind(&ops[1], TWHEEL_SLOT_NONE);
	ASSERT_EQ(2, dev_batch(fd, ops, 2));
	EXPECT_EQ(-EINVAL, ops[0].result);
	EXPECT_EQ(0, ops[1].result);
	EXPECT_EQ(2, fdinfo_get(fd, "live"));
	/* An id bound to no slot expires as any. */
	d = add_bound(_metadata, fd, 5, TWHEEL_SLOT_NONE, SHORT_NS);
	expect_expiry(_metadata, fd, 5, d);

	ASSERT_EQ(0, dev_touch_anon(SLOTS, PROT_READ | PROT_WRITE, MAP_SHARED, &t));
	ASSERT_EQ(0, dev_touch_register(fd, t.slots, SLOTS, 0));
	add_bound(_metadata, fd, 1, 0, DEV_TIMEOUT_DEFAULT);
	dev_prep_refresh(&op, 2, DEV_TIMEOUT_DEFAULT, 0);
	dev_prep_bind(&op, SLOTS - 1);
	EXPECT_EQ(0, run_op(_metadata, fd, &op));
	dev_prep_refresh(&op, 2, DEV_TIMEOUT_DEFAULT, 0);
	dev_prep_bind(&op, SLOTS);
	EXPECT_EQ(EINVAL, run_op(_metadata, fd, &op));
	close(fd);
	EXPECT_EQ(0, dev_touch_unmap(&t));
}

static int mmap_errno(int fd)
{
	void *p;

	errno = 0;
	p = mmap(NULL, page_size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p != MAP_FAILED) {
		munmap(p, page_size());
		return 0;
	}
	return errno;
}

/* The table is the process's memory: the wheel has nothing to map. */
TEST(mmap_of_a_touch_user_wheel_is_enodev)
{
	int fd = user_wheel(SLOTS);
	struct dev_touch t;

	ASSERT_LE(0, fd);
	EXPECT_EQ(ENODEV, mmap_errno(fd));
	ASSERT_EQ(0, dev_touch_anon(SLOTS, PROT_READ | PROT_WRITE, MAP_SHARED, &t));
	ASSERT_EQ(0, dev_touch_register(fd, t.slots, SLOTS, 0));
	EXPECT_EQ(ENODEV, mmap_errno(fd));
	close(fd);
	EXPECT_EQ(0, dev_touch_unmap(&t));
}

TEST(fdinfo_shows_touch_user_and_registered)
{
	int plain = wheel_new(O_CLOEXEC, TICK_NS, TOUT_NS, 0);
	int own = dev_open(O_CLOEXEC), fd = user_wheel(SLOTS);
	struct dev_touch t;

	ASSERT_LE(0, plain);
	ASSERT_LE(0, own);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, setup_errno(own, TWHEEL_SETUPF_TOUCH, SLOTS, 0));
	EXPECT_EQ(0, fdinfo_get(plain, "touch_user"));
	EXPECT_EQ(0, fdinfo_get(plain, "touch_registered"));
	EXPECT_EQ(0, fdinfo_get(own, "touch_user"));
	EXPECT_EQ(0, fdinfo_get(own, "touch_registered"));
	EXPECT_EQ(1, fdinfo_get(fd, "touch_user"));
	EXPECT_EQ(0, fdinfo_get(fd, "touch_registered"));
	EXPECT_EQ(SLOTS, fdinfo_get(fd, "touch_slots"));
	ASSERT_EQ(0, dev_touch_anon(SLOTS, PROT_READ | PROT_WRITE, MAP_SHARED, &t));
	ASSERT_EQ(0, dev_touch_register(fd, t.slots, SLOTS, 0));
	EXPECT_EQ(1, fdinfo_get(fd, "touch_user"));
	EXPECT_EQ(1, fdinfo_get(fd, "touch_registered"));
	EXPECT_EQ(SLOTS, fdinfo_get(fd, "touch_slots"));
	close(fd);
	close(own);
	close(plain);
	EXPECT_EQ(0, dev_touch_unmap(&t));
}

/* ---- stamps ---- */

/*
 * Id 1 stamped every STAMP_NS for four timeouts stays live; id 2, bound
 * but never stamped, expires at its deadline. Once the stamps stop, id 1
 * expires a timeout after the last, never earlier.
 */
TEST_F(reg, stamped_id_stays_alive_and_unstamped_one_expires)
{
	uint64_t t0 = mono_ns(), d2;
	struct twheel_event ev[4];
	struct stamping st;
	int i;

	add_bound(_metadata, self->fd, 1, 1, TOUT_NS);
	d2 = add_bound(_metadata, self->fd, 2, 2, TOUT_NS);
	stamp_while_reading(_metadata, self->fd, &self->t, 1, t0, t0 + 4 * TOUT_NS, 1, ev, 4,
			    &st);
	ASSERT_LE(1, st.nr_events) TH_LOG("no event for the unstamped id");
	for (i = 0; i < st.nr_events; i++) {
		EXPECT_LE(ev[i].deadline_ns, ev[i].expired_ns);
		if (ev[i].id == 2) {
			EXPECT_EQ(d2, ev[i].deadline_ns);
			continue;
		}
		ASSERT_EQ(1, ev[i].id);
		/* Only a stall of the stamping as long as a timeout lets it go. */
		ASSERT_LE(TOUT_NS - TICK_NS, st.gap)
			TH_LOG("stamped id expired at %llu though never unstamped for %llu ms",
			       (unsigned long long)ev[i].deadline_ns,
			       (unsigned long long)(st.gap / NSEC_PER_MSEC));
		TH_LOG("the test stalled for %llu ms: the stamped id expired",
		       (unsigned long long)(st.gap / NSEC_PER_MSEC));
		return;
	}
	ASSERT_EQ(1, st.nr_events);
	EXPECT_EQ(2, ev[0].id);
	EXPECT_EQ(0, fdinfo_get(self->fd, "events_waiting"));
	expect_expiry(_metadata, self->fd, 1, grid_up(self->grid, st.last + TOUT_NS));
	EXPECT_LE(1, fdinfo_get(self->fd, "touch_rearms"));
}

/* One stamp re-arms once, to stamp + timeout; found again it is no touch. */
TEST_F(reg, stamp_counts_once)
{
	uint64_t d1 = add_bound(_metadata, self->fd, 1, 3, TOUT_NS), s;

	sleep_ns(2 * TICK_NS);
	dev_touch(&self->t, 3);
	s = self->t.slots[3];
	expect_rearmed_once(_metadata, self->fd, self->grid, 1, d1, s, TOUT_NS);
	EXPECT_EQ(s, self->t.slots[3]);
	EXPECT_EQ(-ENOENT, dev_query(self->fd, 1, NULL, NULL));
}

TEST_F(reg, zero_and_stale_stamps_are_no_touch)
{
	uint64_t before = mono_ns(), ids[3] = { 1, 2, 3 }, d[3];

	sleep_ns(NSEC_PER_MSEC);
	d[0] = add_bound(_metadata, self->fd, 1, 0, SHORT_NS);
	d[1] = add_bound(_metadata, self->fd, 2, 1, SHORT_NS);
	d[2] = add_bound(_metadata, self->fd, 3, 2, SHORT_NS);
	dev_touch_at(&self->t, 0, 0);
	dev_touch_at(&self->t, 1, before);
	dev_touch_at(&self->t, 2, 1);
	expect_expiries(_metadata, self->fd, 3, ids, d);
	EXPECT_EQ(0, fdinfo_get(self->fd, "touch_rearms"));
}

/*
 * A stamp from the future counts as the present when the deadline comes;
 * left in the slot it counts no more: one timeout more, not forever.
 */
TEST_F(reg, future_stamp_keeps_an_id_one_timeout_more)
{
	const uint64_t future[] = { UINT64_MAX, mono_ns() + 3600 * NSEC_PER_SEC };
	struct twheel_event ev;
	unsigned int i;

	for (i = 0; i < 2; i++) {
		long long rearms = fdinfo_get(self->fd, "touch_rearms");
		uint64_t d1 = add_bound(_metadata, self->fd, 10 + i, 10 + i, SHORT_NS);

		dev_touch_at(&self->t, 10 + i, future[i]);
		next_event(_metadata, self->fd, d1 + SHORT_NS, &ev);
		EXPECT_EQ(10 + i, ev.id);
		/* Re-armed from a look at the deadline or later. */
		EXPECT_LE(d1 + SHORT_NS, ev.deadline_ns) TH_LOG("stamp %#llx",
								(unsigned long long)future[i]);
		EXPECT_EQ(rearms + 1, fdinfo_get(self->fd, "touch_rearms"));
		EXPECT_EQ(0, drain_until(self->fd, &ev, 1, mono_ns() + SHORT_NS + 2 * TICK_NS));
		EXPECT_EQ(-ENOENT, dev_query(self->fd, 10 + i, NULL, NULL));
		EXPECT_EQ(future[i], self->t.slots[10 + i]);
	}
}

/*
 * What a slot holds when an id is bound to it never counts, a stamp from
 * the future included: by ADD, and by a REFRESH that binds.
 */
TEST_F(reg, stamp_present_at_binding_does_not_count)
{
	uint64_t ids[3] = { 1, 2, 3 }, d[3];
	struct twheel_op op;

	dev_touch_at(&self->t, 4, UINT64_MAX);
	dev_touch_at(&self->t, 5, mono_ns() + 3600 * NSEC_PER_SEC);
	d[0] = add_bound(_metadata, self->fd, 1, 4, SHORT_NS);
	d[1] = add_bound(_metadata, self->fd, 2, 5, SHORT_NS);
	ASSERT_EQ(0, dev_add(self->fd, 3, 3600 * NSEC_PER_SEC));
	dev_prep_refresh(&op, 3, SHORT_NS, 0);
	dev_prep_bind(&op, 4);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	d[2] = op.deadline_ns;
	expect_expiries(_metadata, self->fd, 3, ids, d);
	EXPECT_EQ(0, fdinfo_get(self->fd, "touch_rearms"));
}

/* A slot reused for a new id does not pass on the old id's stamp. */
TEST_F(reg, reused_slot_does_not_pass_on_a_stamp)
{
	uint64_t ids[2] = { 2, 4 }, d[2];

	add_bound(_metadata, self->fd, 1, 6, TOUT_NS);
	add_bound(_metadata, self->fd, 3, 7, TOUT_NS);
	sleep_ns(2 * TICK_NS);
	dev_touch(&self->t, 6);
	dev_touch_at(&self->t, 7, UINT64_MAX);
	ASSERT_EQ(0, dev_cancel(self->fd, 1));
	ASSERT_EQ(0, dev_cancel(self->fd, 3));
	d[0] = add_bound(_metadata, self->fd, 2, 6, SHORT_NS);
	d[1] = add_bound(_metadata, self->fd, 4, 7, SHORT_NS);
	expect_expiries(_metadata, self->fd, 2, ids, d);
	EXPECT_EQ(0, fdinfo_get(self->fd, "touch_rearms"));
}

/*
 * In a time namespace behind the kernel's clocks, a wheel set up there
 * reports the namespace's times, but its registered table is read on the
 * kernel's clock: the namespace's own clock_gettime() is a stale stamp
 * there, and that less fdinfo's clock_offset_ns is a touch.
 */
TEST(stamps_are_on_the_kernel_clock_in_any_time_namespace)
{
	long long secs = mono_ns() / NSEC_PER_SEC - 2, off;
	struct dev_touch t;
	uint64_t grid, d1, d2, s;
	char buf[128];
	int ns, fd;

	if (secs > 1000)
		secs = 1000;
	if (secs < 2)
		SKIP(return, "up for %llu s only: no room for an offset behind",
		     (unsigned long long)(mono_ns() / NSEC_PER_SEC));
	if (unshare(CLONE_NEWTIME))
		SKIP(return, "unshare(CLONE_NEWTIME): %s (CONFIG_TIME_NS, CAP_SYS_ADMIN)",
		     strerror(errno));
	snprintf(buf, sizeof(buf), "monotonic %lld 0\nboottime %lld 0\n", -secs, -secs);
	ASSERT_EQ(0, write_file("/proc/self/timens_offsets", buf));
	ns = open("/proc/self/ns/time_for_children", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, ns);
	ASSERT_EQ(0, setns(ns, CLONE_NEWTIME)) TH_LOG("setns: %s", strerror(errno));
	close(ns);

	fd = user_wheel(SLOTS);
	ASSERT_LE(0, fd);
	off = fdinfo_get(fd, "clock_offset_ns");
	ASSERT_EQ(-secs * (long long)NSEC_PER_SEC, off);
	ASSERT_EQ(0, dev_touch_anon(SLOTS, PROT_READ | PROT_WRITE, MAP_SHARED, &t));
	ASSERT_EQ(0, dev_touch_register(fd, t.slots, SLOTS, 0));
	grid = probe_grid(_metadata, fd);
	d1 = add_bound(_metadata, fd, 1, 1, SHORT_NS);
	d2 = add_bound(_metadata, fd, 2, 2, TOUT_NS);
	sleep_ns(2 * TICK_NS);
	dev_touch(&t, 1);
	s = mono_ns();
	dev_touch_at(&t, 2, s - off);
	/* Times the wheel reports are the namespace's. */
	expect_expiry(_metadata, fd, 1, d1);
	expect_rearmed_once(_metadata, fd, grid, 2, d2, s, TOUT_NS);
	close(fd);
	EXPECT_EQ(0, dev_touch_unmap(&t));
}

/* ---- the pinned pages ---- */

/*
 * munmap of the table's memory does not take it from the wheel: a stamp
 * stored before still counts, new memory mapped at the address is not the
 * table, so ids bound after just expire, and close is clean.
 */
TEST_F(reg, pinned_table_outlives_munmap)
{
	uint64_t *fresh, *addr = self->t.slots;
	uint64_t d1, d2, s;

	d1 = add_bound(_metadata, self->fd, 1, 0, TOUT_NS);
	sleep_ns(2 * TICK_NS);
	dev_touch(&self->t, 0);
	s = self->t.slots[0];
	ASSERT_EQ(0, dev_touch_unmap(&self->t));
	d2 = add_bound(_metadata, self->fd, 2, 1, SHORT_NS);
	fresh = mmap(addr, table_len(SLOTS), PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	EXPECT_EQ(addr, fresh);
	if (fresh != MAP_FAILED) {
		sleep_ns(2 * TICK_NS);
		__atomic_store_n(&fresh[1], mono_ns(), __ATOMIC_RELAXED);
		__atomic_store_n(&fresh[1], UINT64_MAX, __ATOMIC_RELAXED);
	}
	expect_expiry(_metadata, self->fd, 2, d2);
	expect_rearmed_once(_metadata, self->fd, self->grid, 1, d1, s, TOUT_NS);
	if (fresh != MAP_FAILED)
		munmap(fresh, table_len(SLOTS));
}

/* A child's stores into a MAP_SHARED table reach the wheel. */
TEST(child_stamps_in_a_shared_table_count)
{
	int fd = user_wheel(SLOTS), status;
	struct dev_touch t;
	uint64_t grid, d1, s;
	pid_t pid;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dev_touch_anon(SLOTS, PROT_READ | PROT_WRITE, MAP_SHARED, &t));
	ASSERT_EQ(0, dev_touch_register(fd, t.slots, SLOTS, 0));
	grid = probe_grid(_metadata, fd);
	d1 = add_bound(_metadata, fd, 1, 7, TOUT_NS);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		sleep_ns(2 * TICK_NS);
		dev_touch(&t, 7);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	s = t.slots[7];
	ASSERT_NE(0, s);
	expect_rearmed_once(_metadata, fd, grid, 1, d1, s, TOUT_NS);
	close(fd);
	EXPECT_EQ(0, dev_touch_unmap(&t));
}

/*
 * A table registered by a child that then exited stays the wheel's: the
 * parent's stores into the shared memory count, and the release, with
 * the registering process gone, is clean. The child's locked memory was
 * the child's, not the parent's.
 */
TEST(table_registered_by_an_exited_child_stays)
{
	int fd = user_wheel(SLOTS), status;
	struct dev_touch t;
	uint64_t grid, d1, s;
	long long lck;
	pid_t pid;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dev_touch_anon(SLOTS, PROT_READ | PROT_WRITE, MAP_SHARED, &t));
	lck = vm_pin_kb();
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(dev_touch_register(fd, t.slots, SLOTS, 0) ? 1 : 0);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_EQ(1, fdinfo_get(fd, "touch_registered"));
	EXPECT_EQ(lck, vm_pin_kb());
	grid = probe_grid(_metadata, fd);
	d1 = add_bound(_metadata, fd, 1, 5, TOUT_NS);
	sleep_ns(2 * TICK_NS);
	dev_touch(&t, 5);
	s = t.slots[5];
	expect_rearmed_once(_metadata, fd, grid, 1, d1, s, TOUT_NS);
	close(fd);
	EXPECT_EQ(lck, vm_pin_kb());
	EXPECT_EQ(0, dev_touch_unmap(&t));
}

/* The parent's stores after a fork still land in the pinned pages. */
TEST_F(reg, parent_stamps_count_after_fork)
{
	uint64_t d1, s;
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		sleep_ns(50 * NSEC_PER_MSEC);
		_exit(0);
	}
	d1 = add_bound(_metadata, self->fd, 1, 8, TOUT_NS);
	sleep_ns(2 * TICK_NS);
	dev_touch(&self->t, 8);
	s = self->t.slots[8];
	expect_rearmed_once(_metadata, self->fd, self->grid, 1, d1, s, TOUT_NS);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
}

/* ---- locked memory ---- */

/* Drop @cap from every set of this task, with the raw system calls. */
static int drop_cap(int cap)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];
	uint32_t bit = 1U << (cap % 32);

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[cap / 32].effective &= ~bit;
	data[cap / 32].permitted &= ~bit;
	data[cap / 32].inheritable &= ~bit;
	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

static int set_memlock(rlim_t bytes)
{
	struct rlimit rl = { .rlim_cur = bytes, .rlim_max = bytes };

	return setrlimit(RLIMIT_MEMLOCK, &rl) ? -errno : 0;
}

/*
 * Without CAP_IPC_LOCK a table counts, as io_uring's buffers do, against
 * RLIMIT_MEMLOCK as locked memory of the caller's user, however many of
 * its processes hold the pins: a limit a page short of a table is ENOMEM,
 * with nothing counted; a second table past the limit is ENOMEM while the
 * first is pinned, and fits once the first wheel is released. (The user
 * is root, whose count nothing else in the guest holds; the checks allow
 * up to 7 pages of it.) The harness runs each test in a child of its
 * own, so the capability and the limit are dropped for this test only.
 */
TEST(register_past_rlimit_memlock_is_enomem)
{
	const uint32_t slots = 8 * page_size() / 8;
	struct dev_touch t, u;
	long long pin;
	int fd = user_wheel(slots), fd2 = user_wheel(slots);

	ASSERT_LE(0, fd);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, dev_touch_anon(slots, PROT_READ | PROT_WRITE, MAP_SHARED, &t));
	ASSERT_EQ(0, dev_touch_anon(slots, PROT_READ | PROT_WRITE, MAP_SHARED, &u));
	ASSERT_EQ(0, drop_cap(CAP_IPC_LOCK));
	pin = vm_pin_kb();
	ASSERT_LE(0, pin);
	ASSERT_EQ(0, set_memlock(7 * page_size()));
	EXPECT_EQ(-ENOMEM, dev_touch_register(fd, t.slots, slots, 0));
	ASSERT_EQ(0, set_memlock(0));
	EXPECT_EQ(-ENOMEM, dev_touch_register(fd, t.slots, slots, 0));
	EXPECT_EQ(pin, vm_pin_kb());
	EXPECT_EQ(0, fdinfo_get(fd, "touch_registered"));

	ASSERT_EQ(0, set_memlock(15 * page_size()));
	EXPECT_EQ(0, dev_touch_register(fd, t.slots, slots, 0));
	EXPECT_EQ(1, fdinfo_get(fd, "touch_registered"));
	EXPECT_EQ(pin + pages_kb(8), vm_pin_kb());
	/* 16 pages do not fit in 15, whatever process asks. */
	EXPECT_EQ(-ENOMEM, dev_touch_register(fd2, u.slots, slots, 0));
	close(fd);
	EXPECT_EQ(pin, vm_pin_kb());
	/* Given back: the room is the second table's. */
	EXPECT_EQ(0, dev_touch_register(fd2, u.slots, slots, 0));
	close(fd2);
	EXPECT_EQ(0, dev_touch_unmap(&u));
	EXPECT_EQ(0, dev_touch_unmap(&t));
}

/*
 * A child that registers a table on a wheel it inherited and exits
 * leaves its pin charged to its user until the wheel is released: a loop
 * of such children cannot pin more than RLIMIT_MEMLOCK allows, though
 * each child's process is gone. Without CAP_IPC_LOCK, limit 12 pages,
 * tables of 8: the second child is refused, and after the first wheel's
 * release a third one fits.
 */
TEST(pins_of_exited_children_stay_charged)
{
	const uint32_t slots = 8 * page_size() / 8;
	struct dev_touch t;
	int fd[3], i;

	for (i = 0; i < 3; i++) {
		fd[i] = user_wheel(slots);
		ASSERT_LE(0, fd[i]);
	}
	ASSERT_EQ(0, dev_touch_anon(slots, PROT_READ | PROT_WRITE, MAP_SHARED, &t));
	ASSERT_EQ(0, drop_cap(CAP_IPC_LOCK));
	ASSERT_EQ(0, set_memlock(12 * page_size()));
	for (i = 0; i < 3; i++) {
		pid_t pid;
		int status;

		if (i == 2)
			close(fd[0]);
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			_exit(-dev_touch_register(fd[i], t.slots, slots, 0));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		EXPECT_EQ(i == 1 ? ENOMEM : 0, WEXITSTATUS(status)) TH_LOG("child %d", i);
	}
	EXPECT_EQ(1, fdinfo_get(fd[2], "touch_registered"));
	EXPECT_EQ(0, fdinfo_get(fd[1], "touch_registered"));
	close(fd[1]);
	close(fd[2]);
	EXPECT_EQ(0, dev_touch_unmap(&t));
}

/*
 * VmPin grows by the table's pages at registration, whatever munmap does
 * meanwhile, and the wheel's release gives them back. With CAP_IPC_LOCK:
 * no limit, but counted all the same.
 */
TEST(vm_pin_counts_the_table_until_close)
{
	const uint32_t slots = 100000;	/* 800000 bytes: 196 pages of 4 KiB */
	const long long kb = table_len(slots) / 1024;
	struct dev_touch t;
	int fd = user_wheel(slots), other = user_wheel(SLOTS);
	long long pin;

	ASSERT_LE(0, fd);
	ASSERT_LE(0, other);
	ASSERT_EQ(0, dev_touch_anon(slots, PROT_READ | PROT_WRITE, MAP_SHARED, &t));
	pin = vm_pin_kb();
	ASSERT_LE(0, pin);
	ASSERT_EQ(0, dev_touch_register(fd, t.slots, slots, 0));
	EXPECT_EQ(pin + kb, vm_pin_kb());
	/* The same memory in a second wheel is pinned, and counted, twice. */
	ASSERT_EQ(0, dev_touch_register(other, t.slots, SLOTS, 0));
	EXPECT_EQ(pin + kb + (long long)table_len(SLOTS) / 1024, vm_pin_kb());
	close(other);
	EXPECT_EQ(pin + kb, vm_pin_kb());
	ASSERT_EQ(0, dev_touch_unmap(&t));
	EXPECT_EQ(pin + kb, vm_pin_kb());
	close(fd);
	EXPECT_EQ(pin, vm_pin_kb());
}

/* ---- a BPF array as the table ---- */

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/*
 * A BPF_F_MMAPABLE array of 8-byte values, whose element i is slot i,
 * registered through its mapping and stamped from here, as a BPF program
 * would with bpf_ktime_get_ns(): the kernel pins the array's pages, and
 * the stamps keep the bound id alive.
 */
TEST(bpf_mmapable_array_is_a_table)
{
	union bpf_attr attr;
	struct twheel_event ev[2];
	struct stamping st;
	struct dev_touch t;
	uint64_t t0, grid, value = 0;
	uint32_t key = 9;
	int mfd, fd;
	void *p;

	/* Kernels before 5.11 count BPF maps against RLIMIT_MEMLOCK, whatever the caps. */
	set_memlock(RLIM_INFINITY);
	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = sizeof(uint32_t);
	attr.value_size = sizeof(uint64_t);
	attr.max_entries = SLOTS;
	attr.map_flags = BPF_F_MMAPABLE;
	mfd = sys_bpf(BPF_MAP_CREATE, &attr);
	if (mfd < 0 && (errno == ENOSYS || errno == EPERM))
		SKIP(return, "bpf(BPF_MAP_CREATE): %s", strerror(errno));
	ASSERT_LE(0, mfd) TH_LOG("bpf(BPF_MAP_CREATE): %s", strerror(errno));
	p = mmap(NULL, table_len(SLOTS), PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("mmap of the array: %s", strerror(errno));
	memset(&t, 0, sizeof(t));
	t.slots = p;
	t.nr_slots = SLOTS;
	t.clockid = CLOCK_MONOTONIC;
	t.map_len = table_len(SLOTS);

	fd = user_wheel(SLOTS);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dev_touch_register(fd, p, SLOTS, 0));
	grid = probe_grid(_metadata, fd);
	t0 = mono_ns();
	add_bound(_metadata, fd, 1, key, TOUT_NS);
	stamp_while_reading(_metadata, fd, &t, key, t0, t0 + 3 * TOUT_NS, 0, ev, 2, &st);
	if (st.nr_events) {
		EXPECT_EQ(1, ev[0].id);
		ASSERT_LE(TOUT_NS - TICK_NS, st.gap)
			TH_LOG("stamped id expired though never unstamped for %llu ms",
			       (unsigned long long)(st.gap / NSEC_PER_MSEC));
		TH_LOG("the test stalled for %llu ms: the stamped id expired",
		       (unsigned long long)(st.gap / NSEC_PER_MSEC));
		goto out;
	}
	/* What the program would see: element @key holds the last stamp. */
	memset(&attr, 0, sizeof(attr));
	attr.map_fd = mfd;
	attr.key = (uint64_t)(uintptr_t)&key;
	attr.value = (uint64_t)(uintptr_t)&value;
	EXPECT_EQ(0, sys_bpf(BPF_MAP_LOOKUP_ELEM, &attr));
	EXPECT_EQ(st.last, value);
	expect_expiry(_metadata, fd, 1, grid_up(grid, st.last + TOUT_NS));
	EXPECT_LE(1, fdinfo_get(fd, "touch_rearms"));
out:
	close(fd);
	munmap(p, table_len(SLOTS));
	close(mfd);
}

TEST_HARNESS_MAIN
