// SPDX-License-Identifier: GPL-2.0
/*
 * The touch table: setup of a table (slot count limits, the table charged
 * to the user's entries and to the memory cgroup); binding ids to slots
 * with TWHEEL_OPF_TOUCH (and every EINVAL of it); the lazy re-arm (a touch
 * before the deadline re-arms to touch time + timeout rounded up to the
 * grid, exactly; an untouched id expires on time; no touch brings an
 * absolute deadline forward; at most one re-arm per deadline); untrusted
 * stamps (0 and the past are no touch, the future counts as now); a
 * reused slot does not pass its stamp on; ioctl REFRESH
 * and touch, the later wins; a touch that came too late shows in the
 * event; mmap rules; the mapping across fork and after close. The tests
 * of the fixture run twice: on the module's table, mapped, and on a table
 * of the test's own memory, registered (TWHEEL_SETUPF_TOUCH_USER; the
 * rest of its rules are touchreg_test's), whose stamps the kernel takes
 * on its own clock: these tests run in the initial time namespace, where
 * the two are one. Uses
 * dev_touch_map(), dev_touch_unmap(), dev_touch(),
 * dev_touch_at(), dev_prep_bind(), dev_prep_add_at(),
 * dev_prep_refresh_at() and dev_dump() (to see bindings).
 */
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>

#include "twheel_util.h"
#include "kselftest_harness.h"
#include "twheel_harness.h"

#define TICK_NS		(10 * NSEC_PER_MSEC)
/* The default timeout: long enough that a stalled VM still touches in time. */
#define TOUT_NS		(500 * NSEC_PER_MSEC)
#define SLOTS		1000
#define CAP		4096
/* The page size: 4 KiB, or 16 or 64 KiB on some arm64 kernels. */
#define PAGE		((size_t)sysconf(_SC_PAGESIZE))
/* The module's table of SLOTS slots: whole pages. */
#define TABLE_BYTES	((SLOTS * 8 + PAGE - 1) / PAGE * PAGE)
#define PROBE_ID	0x5eedULL
/*
 * The timeout of ids whose re-arm is checked to the nanosecond. Each such
 * test touches half of it before the deadline and looks at the re-armed
 * id within half of it after: a VM stalled for less than that cannot make
 * a touch late or an id expire before the test looks.
 */
#define REARM_NS	(1000 * NSEC_PER_MSEC)
/*
 * Longest wait for something the wheel must do within a timeout or two.
 * Lateness is read_test's business: this only catches a stuck wheel, as
 * an emulated VM on a loaded host runs the expiry work a second or more
 * late at times.
 */
#define WAIT_NS		(2 * REARM_NS + 5 * NSEC_PER_SEC)

/* ---- helpers ---- */

/* @t rounded up to the tick grid through @grid. */
static uint64_t grid_up(uint64_t grid, uint64_t t)
{
	return tick_grid_up(grid, TICK_NS, t);
}

/* A wheel with a table of @slots on @clk, or -errno. */
static int touch_wheel(clockid_t clk, uint32_t slots, uint64_t dflt_ns, uint32_t cap)
{
	struct twheel_setup_args args = {
		.tick_ns = TICK_NS,
		.default_timeout_ns = dflt_ns,
		.clockid = clk,
		.max_entries = cap,
		.flags = TWHEEL_SETUPF_TOUCH,
		.touch_slots = slots,
	};
	int fd = dev_open(O_CLOEXEC | O_NONBLOCK), ret;

	if (fd < 0)
		return fd;
	ret = dev_setup_params(fd, &args);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

/* Setup with a table; returns 0 or the positive errno, checking -1/errno. */
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

/* The slot @id is bound to as the dump lists it; -1 if not listed. */
static long long slot_of(int fd, uint64_t id)
{
	struct twheel_dump_entry e[64];
	uint64_t cursor = 0;
	long long slot = -1;
	int n, i;

	while (cursor != TWHEEL_DUMP_END) {
		n = dev_dump(fd, e, 64, &cursor);
		if (n < 0)
			return -2;
		for (i = 0; i < n; i++)
			if (e[i].id == id)
				slot = e[i].slot;
	}
	return slot;
}

static uint64_t deadline_of(int fd, uint64_t id)
{
	uint64_t d = 0;

	return dev_query(fd, id, &d, NULL) ? 0 : d;
}

/*
 * Wait until fdinfo's @key reaches @n or @until (monotonic) passes,
 * looking at the wheel each time (the looks happen when someone does).
 */
static long long wait_count(int fd, const char *key, long long n, uint64_t until)
{
	long long v;

	for (;;) {
		dev_look(fd);
		v = fdinfo_get(fd, key);
		if (v >= n || mono_ns() >= until)
			return v;
		sleep_ns(NSEC_PER_MSEC);
	}
}

/* ---- the fixture: a wheel with a mapped table, or a registered one ---- */

FIXTURE(touch) {
	int fd;
	uint64_t grid;
	struct dev_touch t;
	struct twheel_event ev[4];
};

FIXTURE_VARIANT(touch) {
	bool registered;
};

FIXTURE_VARIANT_ADD(touch, mapped) {
	.registered = false,
};

FIXTURE_VARIANT_ADD(touch, registered) {
	.registered = true,
};

/*
 * A wheel of @slots slots whose table is the caller's anonymous shared
 * memory, registered; described in *@t as a mapped one would be
 * (dev_touch_unmap() unmaps it). The fd, or -errno.
 */
static int registered_wheel(uint32_t slots, uint64_t dflt_ns, uint32_t cap, struct dev_touch *t)
{
	struct twheel_setup_args args = {
		.tick_ns = TICK_NS,
		.default_timeout_ns = dflt_ns,
		.clockid = CLOCK_MONOTONIC,
		.max_entries = cap,
		.flags = TWHEEL_SETUPF_TOUCH_USER,
		.touch_slots = slots,
	};
	int fd = dev_open(O_CLOEXEC | O_NONBLOCK), ret;

	if (fd < 0)
		return fd;
	ret = dev_setup_params(fd, &args);
	if (ret)
		goto err_close;
	ret = dev_touch_anon(slots, PROT_READ | PROT_WRITE, MAP_SHARED, t);
	if (ret)
		goto err_close;
	ret = dev_touch_register(fd, t->slots, slots, 0);
	if (ret) {
		dev_touch_unmap(t);
		goto err_close;
	}
	return fd;

err_close:
	close(fd);
	return ret;
}

/* The fixture's wheel, default timeout @dflt_ns: its table ready, its grid probed. */
static void fixture_wheel(struct __test_metadata *_metadata, FIXTURE_DATA(touch) *self,
			  const FIXTURE_VARIANT(touch) *variant, uint64_t dflt_ns)
{
	struct twheel_op op;

	if (variant->registered) {
		self->fd = registered_wheel(SLOTS, dflt_ns, CAP, &self->t);
		ASSERT_LE(0, self->fd) TH_LOG("registered wheel: %s", strerror(-self->fd));
	} else {
		self->fd = touch_wheel(CLOCK_MONOTONIC, SLOTS, dflt_ns, CAP);
		ASSERT_LE(0, self->fd) TH_LOG("touch wheel: %s", strerror(-self->fd));
		ASSERT_EQ(0, dev_touch_map(self->fd, SLOTS, CLOCK_MONOTONIC, &self->t));
	}
	dev_prep_add(&op, PROBE_ID, NSEC_PER_SEC);
	ASSERT_EQ(0, dev_submit_op(self->fd, &op));
	ASSERT_EQ(0, dev_cancel(self->fd, PROBE_ID));
	self->grid = op.deadline_ns;
}

FIXTURE_SETUP(touch)
{
	fixture_wheel(_metadata, self, variant, TOUT_NS);
}

FIXTURE_TEARDOWN(touch)
{
	if (self->t.slots)
		dev_touch_unmap(&self->t);
	close(self->fd);
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

/* Touch @slot now; returns the stamp the touch stored. */
static uint64_t touch_now(FIXTURE_DATA(touch) *self, uint32_t slot)
{
	dev_touch(&self->t, slot);
	return __atomic_load_n(&self->t.slots[slot], __ATOMIC_RELAXED);
}

/* Sleep until @t on the monotonic clock. */
static void sleep_until(uint64_t t)
{
	uint64_t now = mono_ns();

	if (t > now)
		sleep_ns(t - now);
}

/*
 * Wait (up to WAIT_NS past @deadline) for @id's event and check it carries
 * @deadline and is not early.
 */
static void expect_expiry(struct __test_metadata *_metadata, FIXTURE_DATA(touch) *self,
			  uint64_t id, uint64_t deadline)
{
	memset(self->ev, JUNK, sizeof(self->ev));
	ASSERT_EQ(1, drain_until(self->fd, self->ev, 1, deadline + WAIT_NS))
		TH_LOG("no event for id %llu by its deadline + %llu ms", (unsigned long long)id,
		       (unsigned long long)(WAIT_NS / NSEC_PER_MSEC));
	EXPECT_EQ(id, self->ev[0].id);
	EXPECT_EQ(deadline, self->ev[0].deadline_ns);
	EXPECT_LE(deadline, self->ev[0].expired_ns);
}

/*
 * After a re-arm to @deadline: true if @id is live with that deadline, as
 * it should be when the kernel ran on time. If the expiry work ran so late
 * that @deadline had passed too when it re-armed @id, the id expired in
 * the same run: then its event must carry @deadline, and false says the
 * live id could not be looked at.
 */
static bool rearmed_to(struct __test_metadata *_metadata, FIXTURE_DATA(touch) *self,
		       uint64_t id, uint64_t deadline)
{
	uint64_t d = deadline_of(self->fd, id);

	if (d) {
		EXPECT_EQ(deadline, d);
		return true;
	}
	TH_LOG("the expiry work ran late: id %llu re-armed to %llu ms ago and expired",
	       (unsigned long long)id, (unsigned long long)((mono_ns() - deadline) / NSEC_PER_MSEC));
	expect_expiry(_metadata, self, id, deadline);
	return false;
}

/* ---- setup ---- */

TEST(setup_touch_flag_without_slots_is_einval)
{
	int fd = dev_open(O_CLOEXEC);

	ASSERT_LE(0, fd);
	EXPECT_EQ(EINVAL, setup_errno(fd, TWHEEL_SETUPF_TOUCH, 0, 0));
	EXPECT_EQ(-1, fdinfo_get(fd, "tick_ns"));
	/* The wheel is not set up: a good setup still works. */
	EXPECT_EQ(0, setup_errno(fd, TWHEEL_SETUPF_TOUCH, 1, 0));
	EXPECT_EQ(1, fdinfo_get(fd, "touch_slots"));
	close(fd);
}

TEST(setup_slots_without_touch_flag_is_einval)
{
	int fd = dev_open(O_CLOEXEC);

	ASSERT_LE(0, fd);
	EXPECT_EQ(EINVAL, setup_errno(fd, 0, 1, 0));
	EXPECT_EQ(EINVAL, setup_errno(fd, 0, SLOTS, 0));
	EXPECT_EQ(0, setup_errno(fd, 0, 0, 0));
	EXPECT_EQ(0, fdinfo_get(fd, "touch_slots"));
	close(fd);
}

/*
 * TWHEEL_TOUCH_MAX_SLOTS is the limit of its own, even where the wheel's
 * cap would allow more (the module parameter is raised for the test).
 */
TEST(setup_more_slots_than_the_maximum_is_einval)
{
	unsigned long long per_wheel = module_param("max_entries_per_wheel", 0);
	int fd = dev_open(O_CLOEXEC);

	ASSERT_LE(0, fd);
	ASSERT_NE(0, per_wheel);
	ASSERT_EQ(0, module_param_set("max_entries_per_wheel", 2ULL * TWHEEL_TOUCH_MAX_SLOTS));
	EXPECT_EQ(EINVAL, setup_errno(fd, TWHEEL_SETUPF_TOUCH, TWHEEL_TOUCH_MAX_SLOTS + 1, 0));
	EXPECT_EQ(EINVAL, setup_errno(fd, TWHEEL_SETUPF_TOUCH, UINT32_MAX, 0));
	module_param_set("max_entries_per_wheel", per_wheel);
	EXPECT_EQ(per_wheel, module_param("max_entries_per_wheel", 0));
	close(fd);
}

TEST(setup_more_slots_than_the_cap_is_einval)
{
	int fd = dev_open(O_CLOEXEC);

	ASSERT_LE(0, fd);
	EXPECT_EQ(EINVAL, setup_errno(fd, TWHEEL_SETUPF_TOUCH, 101, 100));
	EXPECT_EQ(0, setup_errno(fd, TWHEEL_SETUPF_TOUCH, 100, 100));
	EXPECT_EQ(100, fdinfo_get(fd, "touch_slots"));
	close(fd);
}

/* The largest table: 128 MiB, every slot of it mapped and usable. */
TEST(setup_with_the_maximum_slots_maps_them_all)
{
	unsigned long long user_max = module_param("max_user_entries", 0);
	struct dev_touch t;
	struct twheel_op op;
	int fd;

	ASSERT_NE(0, user_max);
	/* The table costs 2M entries: more than a small VM's default. */
	ASSERT_EQ(0, module_param_set("max_user_entries", 1ULL << 23));
	fd = touch_wheel(CLOCK_MONOTONIC, TWHEEL_TOUCH_MAX_SLOTS, TOUT_NS, 0);
	if (fd < 0)
		module_param_set("max_user_entries", user_max);
	ASSERT_LE(0, fd) TH_LOG("setup: %s", strerror(-fd));
	EXPECT_EQ(TWHEEL_TOUCH_MAX_SLOTS, fdinfo_get(fd, "touch_slots"));
	ASSERT_EQ(0, dev_touch_map(fd, TWHEEL_TOUCH_MAX_SLOTS, CLOCK_MONOTONIC, &t));
	EXPECT_EQ(0, t.slots[TWHEEL_TOUCH_MAX_SLOTS - 1]);
	dev_touch(&t, TWHEEL_TOUCH_MAX_SLOTS - 1);
	EXPECT_NE(0, t.slots[TWHEEL_TOUCH_MAX_SLOTS - 1]);
	dev_prep_add(&op, 1, DEV_TIMEOUT_DEFAULT);
	dev_prep_bind(&op, TWHEEL_TOUCH_MAX_SLOTS - 1);
	EXPECT_EQ(0, dev_submit_op(fd, &op));
	dev_prep_add(&op, 2, DEV_TIMEOUT_DEFAULT);
	dev_prep_bind(&op, TWHEEL_TOUCH_MAX_SLOTS);
	EXPECT_EQ(-EINVAL, dev_submit_op(fd, &op));
	EXPECT_EQ(0, dev_touch_unmap(&t));
	close(fd);
	module_param_set("max_user_entries", user_max);
}

/*
 * The table counts against the user's entries, in proportion to its
 * pages, and is given back at close: fdinfo's user_entries, read from a
 * wheel of the same user without a table.
 */
TEST(table_is_counted_in_user_entries)
{
	static const uint32_t slots[] = { 1, 512, 513, 2048, 100000 };
	long long base, one_page = 0, per_slot_pages;
	int obs = wheel_new(O_CLOEXEC, TICK_NS, TOUT_NS, 0);
	unsigned int i;

	ASSERT_LE(0, obs);
	base = fdinfo_get(obs, "user_entries");
	ASSERT_LE(0, base);
	for (i = 0; i < sizeof(slots) / sizeof(slots[0]); i++) {
		int fd = dev_open(O_CLOEXEC);
		long long charged;

		ASSERT_LE(0, fd);
		EXPECT_EQ(base, fdinfo_get(obs, "user_entries")) TH_LOG("before setup");
		ASSERT_EQ(0, setup_errno(fd, TWHEEL_SETUPF_TOUCH, slots[i], 0));
		charged = fdinfo_get(obs, "user_entries") - base;
		per_slot_pages = (slots[i] * 8ULL + PAGE - 1) / PAGE;
		if (!one_page)
			one_page = charged;
		EXPECT_LT(0, charged);
		EXPECT_EQ(per_slot_pages * one_page, charged) TH_LOG("%u slots", slots[i]);
		EXPECT_EQ(charged + base, fdinfo_get(fd, "user_entries"));
		close(fd);
		EXPECT_EQ(base, fdinfo_get(obs, "user_entries")) TH_LOG("after close");
	}
	close(obs);
}

/* A table the user's entry limit cannot hold fails setup with ENOSPC. */
TEST(table_beyond_the_user_limit_is_enospc)
{
	unsigned long long user_max = module_param("max_user_entries", 0);
	int fd = dev_open(O_CLOEXEC);
	long long used;
	int err;

	ASSERT_LE(0, fd);
	ASSERT_NE(0, user_max);
	used = fdinfo_get(fd, "user_entries");
	ASSERT_LE(0, used);
	/* Room for 10 entries more: a table of 8 pages needs far more. */
	ASSERT_EQ(0, module_param_set("max_user_entries", used + 10));
	err = setup_errno(fd, TWHEEL_SETUPF_TOUCH, 4096, 0);
	module_param_set("max_user_entries", user_max);
	EXPECT_EQ(ENOSPC, err);
	EXPECT_EQ(used, fdinfo_get(fd, "user_entries"));
	EXPECT_EQ(0, setup_errno(fd, TWHEEL_SETUPF_TOUCH, 4096, 0));
	close(fd);
}

/*
 * A second setup asking for a table fails with EBUSY; the table it
 * allocated first is given back, nothing stays charged, and the wheel
 * keeps its own table.
 */
TEST(second_setup_with_a_table_is_ebusy_and_charges_nothing)
{
	int obs = wheel_new(O_CLOEXEC, TICK_NS, TOUT_NS, 0);
	int fd = touch_wheel(CLOCK_MONOTONIC, 16, TOUT_NS, 0);
	long long held;

	ASSERT_LE(0, obs);
	ASSERT_LE(0, fd);
	held = fdinfo_get(obs, "user_entries");
	EXPECT_EQ(EBUSY, setup_errno(fd, TWHEEL_SETUPF_TOUCH, 100000, 0));
	EXPECT_EQ(EBUSY, setup_errno(fd, 0, 0, 0));
	EXPECT_EQ(held, fdinfo_get(obs, "user_entries"));
	EXPECT_EQ(16, fdinfo_get(fd, "touch_slots"));
	close(fd);
	close(obs);
}

/* ---- binding ---- */

TEST_F(touch, add_with_touch_binds_the_slot)
{
	struct twheel_op op;

	add_bound(_metadata, self->fd, 1, 7, DEV_TIMEOUT_DEFAULT);
	add_bound(_metadata, self->fd, 2, SLOTS - 1, DEV_TIMEOUT_DEFAULT);
	add_bound(_metadata, self->fd, 3, TWHEEL_SLOT_NONE, DEV_TIMEOUT_DEFAULT);
	dev_prep_add(&op, 4, NSEC_PER_SEC);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	EXPECT_EQ(7, slot_of(self->fd, 1));
	EXPECT_EQ(SLOTS - 1, slot_of(self->fd, 2));
	EXPECT_EQ(TWHEEL_SLOT_NONE, slot_of(self->fd, 3));
	EXPECT_EQ(TWHEEL_SLOT_NONE, slot_of(self->fd, 4));
}

TEST_F(touch, refresh_with_touch_rebinds_and_slot_none_unbinds)
{
	struct twheel_op op;

	add_bound(_metadata, self->fd, 1, 7, DEV_TIMEOUT_DEFAULT);
	dev_prep_refresh(&op, 1, DEV_TIMEOUT_DEFAULT, 0);
	dev_prep_bind(&op, 8);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	EXPECT_EQ(8, slot_of(self->fd, 1));
	dev_prep_refresh(&op, 1, NSEC_PER_SEC, 0);
	dev_prep_bind(&op, TWHEEL_SLOT_NONE);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	EXPECT_EQ(TWHEEL_SLOT_NONE, slot_of(self->fd, 1));
	/* ADD_IF_ABSENT binds the id it adds. */
	dev_prep_refresh(&op, 2, DEV_TIMEOUT_DEFAULT, TWHEEL_OPF_ADD_IF_ABSENT);
	dev_prep_bind(&op, 9);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	EXPECT_EQ(9, slot_of(self->fd, 2));
}

TEST_F(touch, refresh_without_touch_keeps_the_binding)
{
	struct twheel_op op;

	add_bound(_metadata, self->fd, 1, 5, DEV_TIMEOUT_DEFAULT);
	dev_prep_refresh(&op, 1, 2 * NSEC_PER_SEC, 0);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	EXPECT_EQ(5, slot_of(self->fd, 1));
	dev_prep_refresh_at(&op, 1, mono_ns() + NSEC_PER_SEC, 0);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	EXPECT_EQ(5, slot_of(self->fd, 1));
}

TEST_F(touch, bind_in_a_batch)
{
	struct twheel_op ops[3];

	dev_prep_add(&ops[0], 1, DEV_TIMEOUT_DEFAULT);
	dev_prep_bind(&ops[0], 10);
	dev_prep_add_at(&ops[1], 2, mono_ns() + NSEC_PER_SEC);
	dev_prep_bind(&ops[1], 11);
	dev_prep_refresh_at(&ops[2], 1, mono_ns() + NSEC_PER_SEC, 0);
	dev_prep_bind(&ops[2], SLOTS);
	ASSERT_EQ(3, dev_batch(self->fd, ops, 3));
	EXPECT_EQ(0, ops[0].result);
	EXPECT_EQ(0, ops[1].result);
	EXPECT_EQ(-EINVAL, ops[2].result);
	EXPECT_EQ(10, slot_of(self->fd, 1));
	EXPECT_EQ(11, slot_of(self->fd, 2));
}

TEST_F(touch, slot_outside_the_table_is_einval)
{
	static const uint32_t bad[] = { SLOTS, SLOTS + 1, 1U << 31, TWHEEL_SLOT_NONE - 1 };
	struct twheel_op op;
	unsigned int i;

	add_bound(_metadata, self->fd, 1, 3, DEV_TIMEOUT_DEFAULT);
	for (i = 0; i < 4; i++) {
		op_init(&op, TWHEEL_OP_ADD, 2, TWHEEL_OPF_TOUCH, 0);
		op.slot = bad[i];
		EXPECT_EQ(EINVAL, run_op(_metadata, self->fd, &op)) TH_LOG("slot %u", bad[i]);
		op_init(&op, TWHEEL_OP_REFRESH, 1, TWHEEL_OPF_TOUCH, 0);
		op.slot = bad[i];
		EXPECT_EQ(EINVAL, run_op(_metadata, self->fd, &op)) TH_LOG("slot %u", bad[i]);
	}
	EXPECT_EQ(-ENOENT, dev_query(self->fd, 2, NULL, NULL));
	EXPECT_EQ(3, slot_of(self->fd, 1));
}

TEST_F(touch, slot_without_touch_flag_is_einval)
{
	int plain = wheel_new(O_CLOEXEC, TICK_NS, TOUT_NS, 0);
	struct twheel_op op;
	int fds[2] = { self->fd, plain }, i;

	ASSERT_LE(0, plain);
	for (i = 0; i < 2; i++) {
		op_init(&op, TWHEEL_OP_ADD, 1, 0, 0);
		op.slot = 1;
		EXPECT_EQ(EINVAL, run_op(_metadata, fds[i], &op));
		op_init(&op, TWHEEL_OP_ADD, 1, 0, 0);
		op.slot = TWHEEL_SLOT_NONE;
		EXPECT_EQ(EINVAL, run_op(_metadata, fds[i], &op));
		EXPECT_EQ(0, fdinfo_get(fds[i], "live"));
	}
	close(plain);
}

TEST(touch_flag_on_wheel_without_table_is_einval)
{
	static const uint32_t slots[] = { 0, 1, TWHEEL_SLOT_NONE };
	int fd = wheel_new(O_CLOEXEC, TICK_NS, TOUT_NS, 0);
	struct twheel_op op;
	unsigned int i;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dev_add(fd, 2, DEV_TIMEOUT_DEFAULT));
	for (i = 0; i < 3; i++) {
		dev_prep_add(&op, 1, DEV_TIMEOUT_DEFAULT);
		dev_prep_bind(&op, slots[i]);
		EXPECT_EQ(EINVAL, run_op(_metadata, fd, &op));
		dev_prep_refresh(&op, 2, DEV_TIMEOUT_DEFAULT, 0);
		dev_prep_bind(&op, slots[i]);
		EXPECT_EQ(EINVAL, run_op(_metadata, fd, &op));
	}
	EXPECT_EQ(1, fdinfo_get(fd, "live"));
	EXPECT_EQ(0, fdinfo_get(fd, "touch_slots"));
	close(fd);
}

TEST_F(touch, touch_flag_on_cancel_and_query_is_einval)
{
	static const uint32_t codes[] = { TWHEEL_OP_CANCEL, TWHEEL_OP_QUERY };
	struct twheel_op op;
	unsigned int i;

	add_bound(_metadata, self->fd, 1, 3, DEV_TIMEOUT_DEFAULT);
	for (i = 0; i < 2; i++) {
		op_init(&op, codes[i], 1, TWHEEL_OPF_TOUCH, 0);
		op.slot = 3;
		EXPECT_EQ(EINVAL, run_op(_metadata, self->fd, &op));
		op_init(&op, codes[i], 1, TWHEEL_OPF_TOUCH, 0);
		op.slot = TWHEEL_SLOT_NONE;
		EXPECT_EQ(EINVAL, run_op(_metadata, self->fd, &op));
	}
	EXPECT_EQ(3, slot_of(self->fd, 1));
}

/* ---- the lazy re-arm ---- */

TEST_F(touch, touch_rearms_to_touch_time_plus_timeout)
{
	uint64_t d1, d2, s;

	d1 = add_bound(_metadata, self->fd, 1, 3, REARM_NS);
	sleep_until(d1 - REARM_NS / 2);
	s = touch_now(self, 3);
	d2 = grid_up(self->grid, s + REARM_NS);
	ASSERT_LT(d1, d2);
	ASSERT_EQ(1, wait_count(self->fd, "touch_rearms", 1, d1 + WAIT_NS));
	/* Not touched again: it expires at the new deadline, once. */
	if (rearmed_to(_metadata, self, 1, d2))
		expect_expiry(_metadata, self, 1, d2);
	EXPECT_EQ(1, fdinfo_get(self->fd, "touch_rearms"));
	EXPECT_EQ(-ENOENT, dev_query(self->fd, 1, NULL, NULL));
}

/* The deadline a touch gave is the one the dump shows. */
TEST_F(touch, dump_shows_the_deadline_a_touch_gave)
{
	struct twheel_dump_entry e[4];
	uint64_t d1, d2, cursor = 0;
	int n;

	d1 = add_bound(_metadata, self->fd, 1, 3, REARM_NS);
	sleep_until(d1 - REARM_NS / 2);
	d2 = grid_up(self->grid, touch_now(self, 3) + REARM_NS);
	ASSERT_EQ(1, wait_count(self->fd, "touch_rearms", 1, d1 + WAIT_NS));
	n = dev_dump(self->fd, e, 4, &cursor);
	if (!n && !rearmed_to(_metadata, self, 1, d2))
		return;
	ASSERT_EQ(1, n);
	EXPECT_EQ(1, e[0].id);
	EXPECT_EQ(d2, e[0].deadline_ns);
	EXPECT_EQ(3, e[0].slot);
}

/*
 * Each deadline comes, finds the touch since, and re-arms exactly once,
 * to the touch's time plus the timeout, round after round.
 */
TEST_F(touch, touched_id_stays_live_over_many_timeouts)
{
	enum { ROUNDS = 4 };
	uint64_t d, s;
	int k;

	d = add_bound(_metadata, self->fd, 1, 4, REARM_NS);
	for (k = 1; k <= ROUNDS; k++) {
		sleep_until(d - REARM_NS / 2);
		s = touch_now(self, 4);
		ASSERT_EQ(k, wait_count(self->fd, "touch_rearms", k, d + WAIT_NS))
			TH_LOG("round %d", k);
		d = grid_up(self->grid, s + REARM_NS);
		if (!rearmed_to(_metadata, self, 1, d))
			return;
		ASSERT_EQ(0, fdinfo_get(self->fd, "events_waiting")) TH_LOG("round %d", k);
	}
	expect_expiry(_metadata, self, 1, d);
	EXPECT_EQ(ROUNDS, fdinfo_get(self->fd, "touch_rearms"));
}

TEST_F(touch, untouched_bound_id_expires_on_time)
{
	uint64_t d = add_bound(_metadata, self->fd, 1, 5, 200 * NSEC_PER_MSEC);

	expect_expiry(_metadata, self, 1, d);
	EXPECT_EQ(0, fdinfo_get(self->fd, "touch_rearms"));
}

/* A touch gains nothing unless it moves the deadline to a later tick. */
TEST_F(touch, touch_in_the_tick_of_arming_gains_nothing_or_a_tick)
{
	uint64_t d1 = add_bound(_metadata, self->fd, 1, 5, DEV_TIMEOUT_DEFAULT);
	uint64_t s = touch_now(self, 5), want = grid_up(self->grid, s + TOUT_NS);

	if (want == d1) {
		expect_expiry(_metadata, self, 1, d1);
		EXPECT_EQ(0, fdinfo_get(self->fd, "touch_rearms"));
	} else {
		EXPECT_EQ(1, wait_count(self->fd, "touch_rearms", 1, d1 + WAIT_NS));
		expect_expiry(_metadata, self, 1, want);
	}
}

TEST_F(touch, unbound_id_ignores_its_old_slot)
{
	struct twheel_op op;

	add_bound(_metadata, self->fd, 1, 6, DEV_TIMEOUT_DEFAULT);
	dev_prep_refresh(&op, 1, 200 * NSEC_PER_MSEC, 0);
	dev_prep_bind(&op, TWHEEL_SLOT_NONE);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	sleep_ns(5 * TICK_NS);
	dev_touch(&self->t, 6);
	expect_expiry(_metadata, self, 1, op.deadline_ns);
	EXPECT_EQ(0, fdinfo_get(self->fd, "touch_rearms"));
}

TEST_F(touch, stamp_zero_is_no_touch)
{
	uint64_t d = add_bound(_metadata, self->fd, 1, 0, 200 * NSEC_PER_MSEC);

	dev_touch_at(&self->t, 0, 0);
	expect_expiry(_metadata, self, 1, d);
	EXPECT_EQ(0, fdinfo_get(self->fd, "touch_rearms"));
}

TEST_F(touch, stamp_before_arming_is_no_touch)
{
	uint64_t before = mono_ns(), d;

	sleep_ns(NSEC_PER_MSEC);
	d = add_bound(_metadata, self->fd, 1, 1, 200 * NSEC_PER_MSEC);
	dev_touch_at(&self->t, 1, before);
	expect_expiry(_metadata, self, 1, d);
	EXPECT_EQ(0, fdinfo_get(self->fd, "touch_rearms"));
}

/*
 * A stamp from the future counts as the present when the deadline comes:
 * the id is re-armed from the moment the kernel looked, not from the
 * stamp; once the slot reads 0 the id expires at that deadline.
 */
TEST_F(touch, stamp_from_the_future_counts_as_now)
{
	uint64_t now = mono_ns();
	const uint64_t future[] = { UINT64_MAX, now + 3600 * NSEC_PER_SEC, now + 10 * TOUT_NS };
	unsigned int i;

	for (i = 0; i < 3; i++) {
		uint64_t d1, d2, seen;

		d1 = add_bound(_metadata, self->fd, 10 + i, 2, DEV_TIMEOUT_DEFAULT);
		dev_touch_at(&self->t, 2, future[i]);
		ASSERT_EQ(i + 1, wait_count(self->fd, "touch_rearms", i + 1, d1 + WAIT_NS));
		seen = mono_ns();
		d2 = deadline_of(self->fd, 10 + i);
		dev_touch_at(&self->t, 2, 0);
		EXPECT_LE(d1 + TOUT_NS, d2) TH_LOG("stamp %#llx", (unsigned long long)future[i]);
		EXPECT_GE(grid_up(self->grid, seen + TOUT_NS), d2)
			TH_LOG("stamp %#llx", (unsigned long long)future[i]);
		expect_expiry(_metadata, self, 10 + i, d2);
		EXPECT_EQ(i + 1, fdinfo_get(self->fd, "touch_rearms"));
	}
}

/*
 * A time from the future left in a slot counts once: one re-arm from the
 * present, then the id expires at that deadline, never early. With a
 * timeout of 0 the deadline is every tick.
 */
TEST_F(touch, future_stamp_left_in_a_slot_counts_once)
{
	static const uint64_t tout[] = { 0, 5 * TICK_NS };
	struct twheel_event ev[2];
	unsigned int i;

	for (i = 0; i < 2; i++) {
		long long before = fdinfo_get(self->fd, "touch_rearms");
		struct twheel_op op;
		uint64_t t0;

		/* Stamp after binding, then the short timeout: no race with the first tick. */
		add_bound(_metadata, self->fd, 20 + i, 20 + i, 3600 * NSEC_PER_SEC);
		dev_touch_at(&self->t, 20 + i, UINT64_MAX);
		t0 = mono_ns();
		dev_prep_refresh(&op, 20 + i, tout[i], 0);
		ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
		memset(ev, JUNK, sizeof(ev));
		/*
		 * Due by two expiry runs, each a timeout and a tick: wait for
		 * that and the file's slack for a stalled VM, but no longer
		 * than the event takes to come. No second event follows it,
		 * not even one timeout later (a second re-arm's).
		 */
		ASSERT_EQ(1, drain_until(self->fd, ev, 1,
					 t0 + 2 * tout[i] + 2 * TICK_NS + WAIT_NS));
		EXPECT_EQ(0, drain_until(self->fd, ev + 1, 1,
					 mono_ns() + tout[i] + 2 * TICK_NS));
		EXPECT_EQ(20 + i, ev[0].id);
		/* Re-armed once, from when the kernel looked: past the first deadline. */
		EXPECT_LT(op.deadline_ns, ev[0].deadline_ns);
		EXPECT_LE(ev[0].deadline_ns, ev[0].expired_ns);
		EXPECT_EQ(1, fdinfo_get(self->fd, "touch_rearms") - before);
		EXPECT_EQ(-ENOENT, dev_query(self->fd, 20 + i, NULL, NULL));
		dev_touch_at(&self->t, 20 + i, 0);
	}
	EXPECT_EQ(0, fdinfo_get(self->fd, "events_waiting"));
}

/* A new id bound to a slot that holds the old id's touch is not touched. */
TEST_F(touch, reused_slot_does_not_pass_on_the_old_stamp)
{
	uint64_t d;

	add_bound(_metadata, self->fd, 1, 5, DEV_TIMEOUT_DEFAULT);
	sleep_ns(2 * TICK_NS);
	touch_now(self, 5);
	ASSERT_EQ(0, dev_cancel(self->fd, 1));
	sleep_ns(NSEC_PER_MSEC);
	d = add_bound(_metadata, self->fd, 2, 5, 200 * NSEC_PER_MSEC);
	expect_expiry(_metadata, self, 2, d);
	EXPECT_EQ(0, fdinfo_get(self->fd, "touch_rearms"));
}

/*
 * The uapi: "Binding an id to a slot counts only stamps after the
 * binding, so a slot reused for a new id does not inherit the old id's
 * stamp." That holds for a stamp from the future left by the old id too:
 * it was stored before the binding.
 */
TEST_F(touch, reused_slot_does_not_pass_on_a_future_stamp)
{
	uint64_t d;

	add_bound(_metadata, self->fd, 1, 5, DEV_TIMEOUT_DEFAULT);
	dev_touch_at(&self->t, 5, UINT64_MAX);
	ASSERT_EQ(0, dev_cancel(self->fd, 1));
	d = add_bound(_metadata, self->fd, 2, 5, 200 * NSEC_PER_MSEC);
	expect_expiry(_metadata, self, 2, d);
	EXPECT_EQ(0, fdinfo_get(self->fd, "touch_rearms"));
}

/* A REFRESH by ioctl after the touch: the touch is older, it counts no more. */
TEST_F(touch, ioctl_refresh_after_touch_wins)
{
	struct twheel_op op;

	add_bound(_metadata, self->fd, 1, 6, REARM_NS);
	sleep_ns(2 * TICK_NS);
	touch_now(self, 6);
	sleep_ns(2 * TICK_NS);
	dev_prep_refresh(&op, 1, 300 * NSEC_PER_MSEC, 0);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	expect_expiry(_metadata, self, 1, op.deadline_ns);
	EXPECT_EQ(0, fdinfo_get(self->fd, "touch_rearms"));
}

/* A touch after a REFRESH by ioctl re-arms from the touch. */
TEST_F(touch, touch_after_ioctl_refresh_wins)
{
	struct twheel_op op;
	uint64_t s;

	add_bound(_metadata, self->fd, 1, 6, 2 * REARM_NS);
	sleep_ns(2 * TICK_NS);
	dev_prep_refresh(&op, 1, REARM_NS, 0);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	sleep_until(op.deadline_ns - REARM_NS / 2);
	s = touch_now(self, 6);
	ASSERT_EQ(1, wait_count(self->fd, "touch_rearms", 1, op.deadline_ns + WAIT_NS));
	expect_expiry(_metadata, self, 1, grid_up(self->grid, s + REARM_NS));
}

/* A touch re-arms with the timeout of the id's last ADD or REFRESH. */
TEST_F(touch, touch_rearms_with_the_timeout_of_the_last_refresh)
{
	const uint64_t t2 = REARM_NS;
	struct twheel_op op;
	uint64_t s;

	add_bound(_metadata, self->fd, 1, 7, 3 * REARM_NS);
	dev_prep_refresh(&op, 1, t2, 0);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	sleep_until(op.deadline_ns - t2 / 2);
	s = touch_now(self, 7);
	ASSERT_EQ(1, wait_count(self->fd, "touch_rearms", 1, op.deadline_ns + WAIT_NS));
	expect_expiry(_metadata, self, 1, grid_up(self->grid, s + t2));
}

/*
 * An id placed with a deadline re-arms with the wheel's default timeout:
 * here REARM_NS, the fixture's wheel set up again with it, so that the
 * touch comes half of it before the deadline, as in the other tests
 * checked to the nanosecond.
 */
TEST_F(touch, touch_rearms_an_abstime_id_with_the_default_timeout)
{
	struct twheel_op op;
	uint64_t s;

	ASSERT_EQ(0, dev_touch_unmap(&self->t));
	close(self->fd);
	fixture_wheel(_metadata, self, variant, REARM_NS);
	dev_prep_add_at(&op, 1, mono_ns() + REARM_NS);
	dev_prep_bind(&op, 8);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	sleep_until(op.deadline_ns - REARM_NS / 2);
	s = touch_now(self, 8);
	ASSERT_EQ(1, wait_count(self->fd, "touch_rearms", 1, op.deadline_ns + WAIT_NS));
	expect_expiry(_metadata, self, 1, grid_up(self->grid, s + REARM_NS));
}

/*
 * A touch does not bring forward an absolute deadline later than the
 * touch plus the timeout: neither when the deadline comes nor when the
 * kernel looks at the slot before, as its wheel moves the id down a
 * level, which it does in the last eighth of the timeout (with 6 s, the
 * last move, at most 64 ticks of 10 ms before the deadline, is looked
 * at). The touch's time plus the timeout is the tick before the
 * deadline: taken on that move, it would make the id expire a tick
 * early (unless the move came in that very tick, one chance in 64).
 */
TEST_F(touch, touch_never_brings_an_abstime_deadline_forward)
{
	const uint64_t tout = 6 * NSEC_PER_SEC;
	struct twheel_op op;
	uint64_t s;

	ASSERT_EQ(0, dev_touch_unmap(&self->t));
	close(self->fd);
	fixture_wheel(_metadata, self, variant, tout);
	dev_prep_add_at(&op, 1, mono_ns() + tout + 2 * NSEC_PER_SEC);
	dev_prep_bind(&op, 8);
	ASSERT_EQ(0, run_op(_metadata, self->fd, &op));
	s = op.deadline_ns - tout - TICK_NS;
	sleep_until(s);
	dev_touch_at(&self->t, 8, s);
	expect_expiry(_metadata, self, 1, op.deadline_ns);
	EXPECT_EQ(0, fdinfo_get(self->fd, "touch_rearms"));
}

/*
 * A touch stored after the kernel processed the deadline is too late: the
 * id expired, and the reader can tell, since the event's deadline
 * precedes the stamp in the slot.
 */
TEST_F(touch, touch_after_expiry_is_too_late_and_the_event_shows_it)
{
	uint64_t d = add_bound(_metadata, self->fd, 1, 9, 200 * NSEC_PER_MSEC), s;

	ASSERT_EQ(1, wait_waiting(self->fd, 1));
	s = touch_now(self, 9);
	sleep_ns(3 * TICK_NS);
	ASSERT_EQ(1, dev_read_events(self->fd, self->ev, 4));
	EXPECT_EQ(1, self->ev[0].id);
	EXPECT_EQ(d, self->ev[0].deadline_ns);
	EXPECT_LT(self->ev[0].deadline_ns, s);
	EXPECT_LE(self->ev[0].expired_ns, s);
	EXPECT_EQ(-ENOENT, dev_query(self->fd, 1, NULL, NULL));
	EXPECT_EQ(0, fdinfo_get(self->fd, "touch_rearms"));
}

/* Slot 3 of one wheel's table is not slot 3 of another's. */
TEST_F(touch, another_wheels_table_touches_nothing_here)
{
	int other = touch_wheel(CLOCK_MONOTONIC, SLOTS, TOUT_NS, 0);
	struct dev_touch t2;
	uint64_t d, d2;

	ASSERT_LE(0, other);
	ASSERT_EQ(0, dev_touch_map(other, SLOTS, CLOCK_MONOTONIC, &t2));
	d = add_bound(_metadata, self->fd, 1, 3, 200 * NSEC_PER_MSEC);
	/* Due long after the touch that follows, however stalled the VM. */
	d2 = add_bound(_metadata, other, 1, 3, REARM_NS);
	dev_touch_at(&t2, 3, UINT64_MAX);
	EXPECT_EQ(0, self->t.slots[3]);
	expect_expiry(_metadata, self, 1, d);
	EXPECT_EQ(0, fdinfo_get(self->fd, "touch_rearms"));
	/* The other wheel saw its own touch. */
	EXPECT_EQ(1, wait_count(other, "touch_rearms", 1, d2 + WAIT_NS));
	EXPECT_EQ(0, dev_touch_unmap(&t2));
	close(other);
}

TEST(boottime_wheel_is_touched_on_boottime)
{
	struct dev_touch t;
	struct twheel_event ev;
	struct twheel_op op;
	uint64_t grid, s, want, until;
	int fd = touch_wheel(CLOCK_BOOTTIME, 16, REARM_NS, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dev_touch_map(fd, 16, CLOCK_BOOTTIME, &t));
	dev_prep_add(&op, 1, DEV_TIMEOUT_DEFAULT);
	dev_prep_bind(&op, 15);
	ASSERT_EQ(0, dev_submit_op(fd, &op));
	grid = op.deadline_ns;
	sleep_ns(REARM_NS / 2);
	dev_touch(&t, 15);
	s = t.slots[15];
	EXPECT_LE(op.deadline_ns - REARM_NS, s);
	EXPECT_GE(clock_ns(CLOCK_BOOTTIME), s);
	want = grid_up(grid, s + REARM_NS);
	until = mono_ns() + REARM_NS + WAIT_NS;
	memset(&ev, JUNK, sizeof(ev));
	while (dev_read_events(fd, &ev, 1) == -EAGAIN && mono_ns() < until)
		sleep_ns(TICK_NS);
	EXPECT_EQ(1, ev.id);
	EXPECT_EQ(want, ev.deadline_ns);
	EXPECT_LE(want, ev.expired_ns);
	EXPECT_EQ(1, fdinfo_get(fd, "touch_rearms"));
	EXPECT_EQ(0, dev_touch_unmap(&t));
	close(fd);
}

/* ---- the mapping ---- */

/* The module's table of SLOTS slots, mapped: what mmap(2) of it allows. */
FIXTURE(mapping) {
	int fd;
	struct dev_touch t;
};

FIXTURE_SETUP(mapping)
{
	self->fd = touch_wheel(CLOCK_MONOTONIC, SLOTS, TOUT_NS, CAP);
	ASSERT_LE(0, self->fd) TH_LOG("touch wheel: %s", strerror(-self->fd));
	ASSERT_EQ(0, dev_touch_map(self->fd, SLOTS, CLOCK_MONOTONIC, &self->t));
}

FIXTURE_TEARDOWN(mapping)
{
	if (self->t.slots)
		dev_touch_unmap(&self->t);
	close(self->fd);
}

TEST_F(mapping, table_reads_zero_at_setup)
{
	unsigned int i, nonzero = 0;

	for (i = 0; i < SLOTS; i++)
		nonzero += self->t.slots[i] != 0;
	EXPECT_EQ(0, nonzero);
}

static int mmap_errno(int fd, size_t len, int prot, int flags, off_t off)
{
	void *p;

	errno = 0;
	p = mmap(NULL, len, prot, flags, fd, off);
	if (p != MAP_FAILED) {
		munmap(p, len);
		return 0;
	}
	return errno;
}

TEST_F(mapping, mmap_private_is_einval)
{
	EXPECT_EQ(EINVAL, mmap_errno(self->fd, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, 0));
	EXPECT_EQ(EINVAL, mmap_errno(self->fd, PAGE, PROT_READ, MAP_PRIVATE, 0));
}

TEST_F(mapping, mmap_at_an_offset_is_einval)
{
	EXPECT_EQ(EINVAL, mmap_errno(self->fd, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, PAGE));
}

TEST_F(mapping, mmap_longer_than_the_table_is_einval)
{
	/* 1000 slots are 8000 bytes: two 4 KiB pages, or one larger page. */
	EXPECT_EQ(0, mmap_errno(self->fd, SLOTS * 8, PROT_READ | PROT_WRITE, MAP_SHARED, 0));
	EXPECT_EQ(0, mmap_errno(self->fd, TABLE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, 0));
	EXPECT_EQ(0, mmap_errno(self->fd, 1, PROT_READ, MAP_SHARED, 0));
	EXPECT_EQ(EINVAL, mmap_errno(self->fd, TABLE_BYTES + 1, PROT_READ | PROT_WRITE, MAP_SHARED, 0));
	EXPECT_EQ(EINVAL, mmap_errno(self->fd, 64 * PAGE, PROT_READ, MAP_SHARED, 0));
}

TEST_F(mapping, mmap_executable_is_refused)
{
	struct statvfs sv;
	int want = EINVAL;

	/* On a noexec /dev the VFS refuses first. */
	if (!statvfs("/dev/twheel", &sv) && (sv.f_flag & ST_NOEXEC))
		want = EPERM;
	EXPECT_EQ(want, mmap_errno(self->fd, PAGE, PROT_READ | PROT_EXEC, MAP_SHARED, 0));
	EXPECT_EQ(want, mmap_errno(self->fd, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
				   MAP_SHARED, 0));
}

TEST_F(mapping, mprotect_cannot_make_the_table_executable)
{
	errno = 0;
	EXPECT_EQ(-1, mprotect(self->t.slots, PAGE, PROT_READ | PROT_EXEC));
	EXPECT_EQ(EACCES, errno);
	/* Still mapped as it was. */
	dev_touch_at(&self->t, 0, 42);
	EXPECT_EQ(42, self->t.slots[0]);
}

TEST_F(mapping, mremap_cannot_grow_the_table)
{
	void *p = mremap(self->t.slots, TABLE_BYTES, 2 * TABLE_BYTES, MREMAP_MAYMOVE);

	EXPECT_EQ(MAP_FAILED, p);
	if (p != MAP_FAILED)
		munmap(p, 2 * TABLE_BYTES);
	dev_touch_at(&self->t, 0, 43);
	EXPECT_EQ(43, self->t.slots[0]);
}

TEST(mmap_of_a_wheel_without_table_is_enodev)
{
	int fd = wheel_new(O_CLOEXEC, TICK_NS, TOUT_NS, 0);
	struct dev_touch t;

	ASSERT_LE(0, fd);
	EXPECT_EQ(ENODEV, mmap_errno(fd, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, 0));
	EXPECT_EQ(-ENODEV, dev_touch_map(fd, 1, CLOCK_MONOTONIC, &t));
	close(fd);
}

TEST(mmap_before_setup_is_ebadfd)
{
	int fd = dev_open(O_CLOEXEC);

	ASSERT_LE(0, fd);
	EXPECT_EQ(EBADFD, mmap_errno(fd, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, 0));
	close(fd);
}

TEST_F(mapping, two_mappings_are_the_same_memory)
{
	struct dev_touch t2;

	ASSERT_EQ(0, dev_touch_map(self->fd, SLOTS, CLOCK_MONOTONIC, &t2));
	EXPECT_NE(self->t.slots, t2.slots);
	dev_touch_at(&self->t, SLOTS - 1, 12345);
	EXPECT_EQ(12345, t2.slots[SLOTS - 1]);
	dev_touch_at(&t2, 0, 678);
	EXPECT_EQ(678, self->t.slots[0]);
	EXPECT_EQ(0, dev_touch_unmap(&t2));
	EXPECT_EQ(NULL, t2.slots);
}

/* ---- lifetimes ---- */

TEST_F(touch, child_touch_through_inherited_mapping_reaches_the_wheel)
{
	uint64_t d, s;
	int status;
	pid_t pid;

	d = add_bound(_metadata, self->fd, 1, 11, DEV_TIMEOUT_DEFAULT);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		sleep_ns(5 * TICK_NS);
		dev_touch(&self->t, 11);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	s = self->t.slots[11];
	EXPECT_NE(0, s);
	ASSERT_EQ(1, wait_count(self->fd, "touch_rearms", 1, d + WAIT_NS));
	expect_expiry(_metadata, self, 1, grid_up(self->grid, s + TOUT_NS));
}

/* Whether /proc/self/maps has a mapping of /dev/twheel at @addr. */
static bool mapped_at(const void *addr)
{
	char line[512], want[32];
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return false;
	snprintf(want, sizeof(want), "%lx-", (unsigned long)addr);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, want, strlen(want)) && strstr(line, "/dev/twheel"))
			found = true;
	fclose(f);
	return found;
}

static long long module_refs(void)
{
	return read_ll("/sys/module/twheel/refcnt");
}

/*
 * Close the fd with the table mapped: the mapping still works, the wheel
 * (its entries and table, charged to the user, and its hold on the
 * module) stays until munmap, and stores after close harm nothing.
 */
TEST(close_with_the_table_mapped_keeps_the_wheel_until_munmap)
{
	int obs = wheel_new(O_CLOEXEC, TICK_NS, TOUT_NS, 0), fd;
	long long base, refs0, held, refs1;
	struct dev_touch t;
	struct twheel_op op;
	unsigned int i;

	ASSERT_LE(0, obs);
	base = fdinfo_get(obs, "user_entries");
	refs0 = module_refs();
	fd = touch_wheel(CLOCK_MONOTONIC, 4096, 100 * NSEC_PER_MSEC, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dev_touch_map(fd, 4096, CLOCK_MONOTONIC, &t));
	dev_prep_add(&op, 1, DEV_TIMEOUT_DEFAULT);
	dev_prep_bind(&op, 1);
	ASSERT_EQ(0, dev_submit_op(fd, &op));
	ASSERT_EQ(0, dev_add(fd, 2, 3600 * NSEC_PER_SEC));
	held = fdinfo_get(obs, "user_entries");
	refs1 = module_refs();
	EXPECT_LT(base + 2, held);
	if (refs0 >= 0)
		EXPECT_EQ(refs0 + 1, refs1);

	close(fd);
	EXPECT_TRUE(mapped_at(t.slots));
	EXPECT_EQ(held, fdinfo_get(obs, "user_entries"));
	EXPECT_EQ(refs1, module_refs());
	/* The wheel runs on: the bound id is re-armed once, then expires. */
	dev_touch(&t, 1);
	EXPECT_NE(0, t.slots[1]);
	sleep_ns(400 * NSEC_PER_MSEC);
	for (i = 0; i < 4096; i++)
		dev_touch_at(&t, i, i & 1 ? UINT64_MAX : i);
	sleep_ns(100 * NSEC_PER_MSEC);
	EXPECT_EQ(held, fdinfo_get(obs, "user_entries"));

	EXPECT_EQ(0, dev_touch_unmap(&t));
	EXPECT_FALSE(mapped_at(t.slots));
	EXPECT_EQ(base, fdinfo_get(obs, "user_entries"));
	EXPECT_EQ(refs0, module_refs());
	close(obs);
}

/* A child's mapping keeps the wheel after the parent closed and unmapped. */
TEST(child_mapping_keeps_the_wheel_after_the_parent_lets_go)
{
	int obs = wheel_new(O_CLOEXEC, TICK_NS, TOUT_NS, 0), fd, go[2], status;
	long long base, held;
	struct dev_touch t;
	pid_t pid;
	char c;

	ASSERT_LE(0, obs);
	ASSERT_EQ(0, pipe(go));
	base = fdinfo_get(obs, "user_entries");
	fd = touch_wheel(CLOCK_MONOTONIC, 512, TOUT_NS, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dev_touch_map(fd, 512, CLOCK_MONOTONIC, &t));
	ASSERT_EQ(0, dev_add(fd, 1, 3600 * NSEC_PER_SEC));
	held = fdinfo_get(obs, "user_entries");
	EXPECT_LT(base, held);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(fd);
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		dev_touch(&t, 0);
		_exit(t.slots[0] ? 0 : 2);
	}
	close(go[0]);
	close(fd);
	EXPECT_EQ(0, dev_touch_unmap(&t));
	EXPECT_EQ(held, fdinfo_get(obs, "user_entries"));
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_EQ(base, fdinfo_get(obs, "user_entries"));
	close(go[1]);
	close(obs);
}

/* ---- memory cgroup ---- */

#define CG_SLACK	(1LL << 20)

FIXTURE(memcg) {
	char group[128];
	unsigned long long user_max;
	bool moved;
};

static long long cg_read(FIXTURE_DATA(memcg) *self, const char *file)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", self->group, file);
	return read_ll(p);
}

/* A counter of memory.events, or -1. */
static long long cg_event(FIXTURE_DATA(memcg) *self, const char *key)
{
	char p[256], k[64];
	long long v, found = -1;
	FILE *f;

	snprintf(p, sizeof(p), "%s/memory.events", self->group);
	f = fopen(p, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", k, &v) == 2)
		if (!strcmp(k, key))
			found = v;
	fclose(f);
	return found;
}

FIXTURE_SETUP(memcg)
{
	char buf[256], pid[32];

	self->moved = false;
	self->group[0] = 0;
	if (!memcg_ready())
		SKIP(return, "no cgroup v2 memory controller at " CG_ROOT);
	snprintf(self->group, sizeof(self->group), CG_ROOT "/twheel-touch-%d", getpid());
	ASSERT_EQ(0, mkdir(self->group, 0755));
	snprintf(buf, sizeof(buf), "%s/cgroup.procs", self->group);
	snprintf(pid, sizeof(pid), "%d", getpid());
	ASSERT_EQ(0, write_file(buf, pid));
	self->moved = true;
	/* The tables below cost up to 3M entries: above a small VM's default. */
	self->user_max = module_param("max_user_entries", 0);
	ASSERT_EQ(0, module_param_set("max_user_entries", 1ULL << 23));
}

FIXTURE_TEARDOWN(memcg)
{
	char pid[32];

	if (self->user_max)
		module_param_set("max_user_entries", self->user_max);
	if (self->moved) {
		snprintf(pid, sizeof(pid), "%d", getpid());
		write_file(CG_ROOT "/cgroup.procs", pid);
	}
	if (self->group[0])
		rmdir(self->group);
}

/* memory.current grows by the table's size at setup and falls back at close. */
TEST_F(memcg, table_is_charged_to_the_memory_cgroup)
{
	const uint32_t slots = 1U << 21;	/* 16 MiB */
	const long long size = slots * 8LL;
	long long m0, m1, m2;
	int fd = dev_open(O_CLOEXEC);

	ASSERT_LE(0, fd);
	m0 = cg_read(self, "memory.current");
	ASSERT_LE(0, m0);
	ASSERT_EQ(0, setup_errno(fd, TWHEEL_SETUPF_TOUCH, slots, 0));
	m1 = cg_read(self, "memory.current");
	TH_LOG("memory.current %lld before setup, %lld after (table %lld)", m0, m1, size);
	EXPECT_LE(m0 + size - CG_SLACK, m1);
	EXPECT_GE(m0 + size + CG_SLACK, m1);
	close(fd);
	m2 = cg_read(self, "memory.current");
	EXPECT_GE(m0 + CG_SLACK, m2) TH_LOG("after close %lld", m2);
}

/* Setup of a table the group cannot hold: ENOMEM, never the OOM killer. */
TEST_F(memcg, table_larger_than_memory_max_is_enomem)
{
	const long long max = 8LL << 20;
	long long m0, ooms, kills, entries;
	char buf[256], val[32];
	int fd = dev_open(O_CLOEXEC);

	ASSERT_LE(0, fd);
	snprintf(buf, sizeof(buf), "%s/memory.max", self->group);
	snprintf(val, sizeof(val), "%lld", max);
	ASSERT_EQ(0, write_file(buf, val));
	m0 = cg_read(self, "memory.current");
	ooms = cg_event(self, "oom");
	kills = cg_event(self, "oom_kill");
	entries = fdinfo_get(fd, "user_entries");
	/* 24 MiB of table. */
	EXPECT_EQ(ENOMEM, setup_errno(fd, TWHEEL_SETUPF_TOUCH, 3U << 20, 0));
	EXPECT_EQ(ooms, cg_event(self, "oom"));
	EXPECT_EQ(kills, cg_event(self, "oom_kill"));
	EXPECT_GE(m0 + CG_SLACK, cg_read(self, "memory.current"));
	EXPECT_EQ(entries, fdinfo_get(fd, "user_entries")) TH_LOG("the failed table stays charged");
	EXPECT_EQ(-1, fdinfo_get(fd, "touch_slots"));
	/* The wheel was not set up: a table that fits still can be. */
	EXPECT_EQ(0, setup_errno(fd, TWHEEL_SETUPF_TOUCH, 1000, 0));
	close(fd);
}

TEST_HARNESS_MAIN
