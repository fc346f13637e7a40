// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz-abi: throw random and mutated ioctls, reads, polls, closes, dups
 * and forks at several wheels, and check every byte the kernel hands back.
 *
 * Commands are the real ones with mutated arguments (flags, slots, op
 * codes, timeouts, counts of 0, 17, INT_MAX, INT_MAX + 1, 0xffffffff),
 * our magic with random nr/size/direction, and random numbers (minus the
 * generic ioctls the VFS handles itself, which would change the fd, and
 * TWHEEL_IOC_DUMP, which is not fuzzed here yet: a random command that
 * happens to be it is no unknown command).
 * Pointers are valid, NULL, unmapped, read-only, kernel addresses, non-
 * canonical, or a struct straddling the end of a page into PROT_NONE.
 * Before each call the buffers are filled with a pattern; after it every
 * return value must be in the errno set documented for the call, and each
 * byte must be untouched or properly written: struct twheel_op results in
 * {0, EEXIST, ENOENT, ENOSPC, ENOMEM, EINVAL} and equal to the ioctl's
 * error, input fields unchanged, nothing past the returned count changed;
 * events for ids we use, with plausible times; and no 8-byte value that
 * looks like a kernel pointer anywhere the kernel wrote. Children forked
 * midway fuzz the shared wheels too and report their own anomalies.
 * Kernel-side problems (KASAN, UBSAN, lockdep, WARN) are caught by the
 * harness's scan of the kernel log, so run this on the debug kernel.
 *
 *   fuzz-abi [SECONDS [SEED]]	(SECONDS: $TWHEEL_STRESS_SECS, else 60)
 *
 * Prints TAP and "fuzz-abi: calls=N reports=N"; exits 1 if reports > 0.
 */
#include <poll.h>
#include <stddef.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "twheel_test.h"
#include "kselftest.h"

#define NWHEELS		4
#define NIDS		64
#define PAGE		4096UL
#define BATCH_PAGES	16		/* batch array region, then a guard page */
#define CHECK_LEN	256		/* bytes checked around a struct */

enum { R_ERRNO, R_OPFIELD, R_STRAY, R_EVENT, R_KPTR, R_CHILD, R_USABLE, R_NR };
static const char *const r_name[R_NR] = {
	"errno outside the documented set", "op out fields malformed",
	"bytes changed that the kernel should not touch", "read event implausible",
	"kernel-pointer-like value returned", "forked child found anomalies",
	"wheel unusable after fuzzing",
};
static uint64_t reports[R_NR];
static uint64_t calls;
static uint64_t rs;			/* the random state */
static int is_child;
static uint64_t start_ns;

static int wfd[NWHEELS];
static uint64_t ids[NIDS];

static uint8_t *arena;			/* 2 RW pages + 1 PROT_NONE */
static uint8_t *ro_page;		/* PROT_READ */
static uint8_t *unmapped;		/* an address with no mapping */
static uint8_t *batch_region;		/* BATCH_PAGES RW + 1 PROT_NONE */
static uint8_t saved[BATCH_PAGES * PAGE];

enum ptr_kind { P_VALID, P_NULL, P_UNMAPPED, P_RO, P_KERNEL, P_NONCANON, P_STRADDLE, P_NR };

/*
 * The fuzzer reaches the device through raw ioctls only, for its own
 * set-up and checks too: nothing stands between it and the ABI it checks.
 */
static int raw_setup(int fd, uint64_t tick_ns, uint64_t dflt_ns, uint32_t max_entries)
{
	struct twheel_setup_args a = {
		.tick_ns = tick_ns,
		.default_timeout_ns = dflt_ns,
		.clockid = CLOCK_MONOTONIC,
		.max_entries = max_entries,
	};

	return ioctl(fd, TWHEEL_IOC_SETUP, &a) ? -errno : 0;
}

static int raw_op(int fd, struct twheel_op *op)
{
	return ioctl(fd, TWHEEL_IOC_OP, op) ? -errno : 0;
}

/* One op built in place (UINT64_MAX: the default timeout); its result. */
static int raw_op1(int fd, uint32_t code, uint64_t id, uint64_t timeout_ns)
{
	struct twheel_op op;

	op_init(&op, code, id, timeout_ns != UINT64_MAX ? TWHEEL_OPF_TIMEOUT : 0,
		timeout_ns != UINT64_MAX ? timeout_ns : 0);
	return raw_op(fd, &op);
}

static void __attribute__((format(printf, 2, 3))) report(int kind, const char *fmt, ...)
{
	static int printed;
	va_list ap;

	reports[kind]++;
	if (printed++ >= 40)
		return;
	printf("# report%s: %s: ", is_child ? " (child)" : "", r_name[kind]);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static int in_pool(uint64_t v)
{
	int i;

	for (i = 0; i < NIDS; i++)
		if (ids[i] == v)
			return 1;
	return 0;
}

static int looks_kernel(uint64_t v)
{
	return (v & 0xffff800000000000ULL) == 0xffff800000000000ULL && !in_pool(v);
}

static void fill_pattern(uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = rnd_next(&rs) >> 56;
}

/* Words the kernel changed in [p, p + len) that look like kernel pointers. */
static void scan_kptr(const uint8_t *before, const uint8_t *after, size_t len, const char *what)
{
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t a, b;

		memcpy(&a, after + i, 8);
		memcpy(&b, before + i, 8);
		if (a != b && looks_kernel(a))
			report(R_KPTR, "%s: offset %zu holds %#llx", what, i, (unsigned long long)a);
	}
}

static int errno_in(int err, const int *set, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (set[i] == err)
			return 1;
	return 0;
}

static void check_errno(long ret, int err, const int *set, int n, const char *what)
{
	if (ret < 0 && !errno_in(err, set, n))
		report(R_ERRNO, "%s: errno %d (%s)", what, err, strerror(err));
}

/* A pointer of random kind to room for @len bytes; *kind says which. */
static uint8_t *pick_ptr(size_t len, enum ptr_kind *kind)
{
	*kind = rnd_below(&rs, 100) < 55 ? P_VALID : (enum ptr_kind)(1 + rnd_below(&rs, P_NR - 1));
	switch (*kind) {
	case P_VALID:
		return arena + 8 * rnd_below(&rs, (PAGE - CHECK_LEN) / 8);
	case P_NULL:
		return NULL;
	case P_UNMAPPED:
		return unmapped + 8 * rnd_below(&rs, 64);
	case P_RO:
		return ro_page + 8 * rnd_below(&rs, 64);
	case P_KERNEL: {
		static const uint64_t k[] = { 0xffff888000000000ULL, 0xffffffff81000000ULL,
					      0xffffc90000000000ULL, 0xffffffffffffff00ULL };
		return (uint8_t *)(uintptr_t)k[rnd_below(&rs, 4)];
	}
	case P_NONCANON:
		return (uint8_t *)(uintptr_t)(0x0000800000000000ULL + 8 * rnd_below(&rs, 1 << 20));
	default:
		/* The last 1..len-1 bytes fall into the PROT_NONE page. */
		return arena + 2 * PAGE - 1 - rnd_below(&rs, len > 1 ? len - 1 : 1);
	}
}

static uint64_t pick_id(void)
{
	return ids[rnd_below(&rs, NIDS)];
}

static uint64_t pick_timeout(void)
{
	switch (rnd_below(&rs, 8)) {
	case 0: return 0;
	case 1: return rnd_next(&rs);
	case 2: return TWHEEL_MAX_TIMEOUT_NS + rnd_below(&rs, 3) - 1;
	case 3: return rnd_below(&rs, 3600000000000ULL);
	default: return rnd_below(&rs, 20 * NSEC_PER_MSEC);
	}
}

static void fill_op(struct twheel_op *op)
{
	unsigned int r = rnd_below(&rs, 100);

	fill_pattern((uint8_t *)op, sizeof(*op));
	op->id = pick_id();
	op->op = r < 90 ? 1 + rnd_below(&rs, 4) : (uint32_t)rnd_next(&rs);
	op->flags = rnd_below(&rs, 100) < 85 ? rnd_below(&rs, 4) : (uint32_t)rnd_next(&rs);
	op->timeout_ns = op->flags & TWHEEL_OPF_TIMEOUT || rnd_below(&rs, 10) == 0 ? pick_timeout() : 0;
	op->slot = rnd_below(&rs, 100) < 92 ? 0 : (uint32_t)rnd_next(&rs);
	op->result = 0x5a5a5a5a;
}

static int pick_wheel(void)
{
	return wfd[rnd_below(&rs, NWHEELS)];
}

/* Check one struct twheel_op after the kernel wrote it back (or should have). */
static void check_op(const struct twheel_op *b, const struct twheel_op *a, int written,
		     int expect_err, uint64_t t1, const char *what)
{
	static const int res_ok[] = { 0, -EEXIST, -ENOENT, -ENOSPC, -ENOMEM, -EINVAL };
	int i, ok = 0;

	if (!written) {
		if (memcmp(a, b, sizeof(*a)))
			report(R_STRAY, "%s: op changed though not written back", what);
		return;
	}
	if (a->id != b->id || a->timeout_ns != b->timeout_ns || a->op != b->op ||
	    a->flags != b->flags || a->slot != b->slot)
		report(R_STRAY, "%s: input fields changed", what);
	for (i = 0; i < 6; i++)
		ok |= a->result == res_ok[i];
	if (!ok)
		report(R_OPFIELD, "%s: result %d", what, a->result);
	if (expect_err != 1 && a->result != expect_err)
		report(R_OPFIELD, "%s: result %d but ioctl said %d", what, a->result, expect_err);
	if (a->result) {
		if (a->deadline_ns || a->remaining_ns)
			report(R_OPFIELD, "%s: failed op has deadline %llu remaining %llu", what,
			       (unsigned long long)a->deadline_ns, (unsigned long long)a->remaining_ns);
	} else {
		if (a->deadline_ns + 2000000000ULL < start_ns ||
		    a->deadline_ns > t1 + TWHEEL_MAX_TIMEOUT_NS + TWHEEL_TICK_MAX_NS ||
		    a->remaining_ns > a->deadline_ns)
			report(R_OPFIELD, "%s: implausible deadline %llu remaining %llu", what,
			       (unsigned long long)a->deadline_ns, (unsigned long long)a->remaining_ns);
	}
	/* The 64-bit fields; result shares a word with the caller's pad. */
	scan_kptr((const uint8_t *)b, (const uint8_t *)a, offsetof(struct twheel_op, op), what);
}

static void do_setup(void)
{
	/* ENOSPC, ENOMEM: a touch table past the user's limit or memory. */
	static const int errs[] = { EINVAL, EFAULT, EBUSY, ENOSPC, ENOMEM };
	struct twheel_setup_args args;
	enum ptr_kind kind;
	uint8_t *p = pick_ptr(sizeof(args), &kind);
	int fd = pick_wheel(), ret, err;
	static const uint64_t ticks[] = { NSEC_PER_MSEC, TWHEEL_TICK_MIN_NS, TWHEEL_TICK_MIN_NS - 1,
					  TWHEEL_TICK_MAX_NS, TWHEEL_TICK_MAX_NS + 1, 0 };

	memset(&args, 0, sizeof(args));
	args.tick_ns = rnd_below(&rs, 10) ? ticks[rnd_below(&rs, 6)] : rnd_next(&rs);
	args.default_timeout_ns = pick_timeout();
	args.clockid = rnd_below(&rs, 10) ? (rnd_below(&rs, 2) ? CLOCK_MONOTONIC : CLOCK_BOOTTIME)
					  : (uint32_t)rnd_next(&rs);
	args.max_entries = rnd_below(&rs, 4) ? rnd_below(&rs, 2) * 4096 : (uint32_t)rnd_next(&rs);
	args.flags = rnd_below(&rs, 10) ? 0 : (uint32_t)rnd_next(&rs);
	args.touch_slots = rnd_below(&rs, 10) ? 0 : (uint32_t)rnd_next(&rs);
	if (kind == P_VALID) {
		fill_pattern(p, CHECK_LEN);
		memcpy(p, &args, sizeof(args));
		memcpy(saved, p, CHECK_LEN);
	}
	ret = ioctl(fd, TWHEEL_IOC_SETUP, p);
	err = errno;
	calls++;
	check_errno(ret, err, errs, 5, "SETUP");
	if (ret > 0)
		report(R_ERRNO, "SETUP returned %d", ret);
	if (kind == P_VALID && memcmp(p, saved, CHECK_LEN))
		report(R_STRAY, "SETUP wrote into its (input-only) argument");
}

static void do_op(void)
{
	static const int errs[] = { EBADFD, EFAULT, EEXIST, ENOENT, ENOSPC, ENOMEM, EINVAL };
	struct twheel_op before, *op = NULL;
	enum ptr_kind kind;
	uint8_t *p = pick_ptr(sizeof(*op), &kind);
	int fd = pick_wheel(), ret, err, written;
	uint64_t t1;

	if (kind == P_VALID) {
		fill_pattern(p, CHECK_LEN);
		op = (struct twheel_op *)p;
		fill_op(op);
		memcpy(saved, p, CHECK_LEN);
		before = *op;
	}
	ret = ioctl(fd, TWHEEL_IOC_OP, p);
	err = errno;
	t1 = mono_ns();
	calls++;
	check_errno(ret, err, errs, 7, "OP");
	if (ret > 0)
		report(R_ERRNO, "OP returned %d", ret);
	if (kind != P_VALID)
		return;
	written = !(ret < 0 && (err == EBADFD || err == EFAULT));
	check_op(&before, op, written, ret < 0 ? -err : 0, t1, "OP");
	if (memcmp(p + sizeof(*op), saved + sizeof(*op), CHECK_LEN - sizeof(*op)))
		report(R_STRAY, "OP wrote past its struct");
}

static void do_batch(void)
{
	static const int errs[] = { EBADFD, EFAULT, EINVAL };
	static const uint32_t counts[] = { 0, 1, 2, 16, 17, 33, 0xffffffffU, 0x80000000U,
					   0x7fffffffU, 1000 };
	const uint32_t cap = BATCH_PAGES * PAGE / sizeof(struct twheel_op);
	struct twheel_batch_args args, args_before;
	struct twheel_op *ops = (struct twheel_op *)batch_region;
	enum ptr_kind akind, okind;
	uint8_t *ap = pick_ptr(sizeof(args), &akind);
	uint8_t *opp = pick_ptr(sizeof(*ops), &okind);
	int fd = pick_wheel(), err;
	uint32_t i, n;
	long ret;
	uint64_t t1;

	/* Valid op arrays live in their own region, guarded at its end. */
	if (okind == P_VALID)
		opp = batch_region;
	args.ops = (uintptr_t)opp;
	args.count = rnd_below(&rs, 3) ? counts[rnd_below(&rs, 10)] : rnd_below(&rs, cap + 20);
	args.flags = rnd_below(&rs, 12) ? 0 : (uint32_t)rnd_next(&rs);
	n = args.count < cap ? args.count : cap;
	if (okind == P_VALID) {
		for (i = 0; i < n; i++)
			fill_op(&ops[i]);
		memcpy(saved, batch_region, n * sizeof(*ops));
	}
	if (akind == P_VALID) {
		memcpy(ap, &args, sizeof(args));
		args_before = args;
	}
	ret = ioctl(fd, TWHEEL_IOC_BATCH, ap);
	err = errno;
	t1 = mono_ns();
	calls++;
	check_errno(ret, err, errs, 3, "BATCH");
	if (ret > (long)args.count || (okind == P_VALID && ret > (long)cap))
		report(R_ERRNO, "BATCH returned %ld for count %u", ret, args.count);
	if (akind == P_VALID && memcmp(ap, &args_before, sizeof(args)))
		report(R_STRAY, "BATCH wrote into its (input-only) argument");
	if (akind != P_VALID || okind != P_VALID)
		return;
	for (i = 0; i < n; i++) {
		int done = ret > 0 && i < (uint32_t)ret;

		check_op((struct twheel_op *)saved + i, &ops[i], done, 1, t1, "BATCH op");
		if (done && ops[i].result && errno_in(-ops[i].result, errs, 0))
			report(R_OPFIELD, "BATCH op %u result %d", i, ops[i].result);
	}
}

static void do_read(void)
{
	static const int errs[] = { EAGAIN, EINVAL, EBADFD, EFAULT };
	static const size_t sizes[] = { 0, 1, 23, 24, 25, 47, 48, 240, 4096, 1UL << 30,
					SIZE_MAX, 0x7ffff000 };
	enum ptr_kind kind;
	uint8_t *p = pick_ptr(48, &kind);
	size_t size = sizes[rnd_below(&rs, 12)];
	struct twheel_event *ev;
	size_t i, len = 2 * PAGE;
	ssize_t ret;
	uint64_t t1;
	int err;

	if (kind == P_VALID) {
		p = arena;
		fill_pattern(arena, len);
		memcpy(saved, arena, len);
	}
	ret = read(pick_wheel(), p, size);
	err = errno;
	t1 = mono_ns();
	calls++;
	check_errno(ret, err, errs, 4, "read");
	if (ret == 0 || (ret > 0 && (ret % sizeof(*ev) || (size_t)ret > size)))
		report(R_ERRNO, "read of %zu returned %zd", size, ret);
	if (kind != P_VALID)
		return;
	if (ret < 0)
		ret = 0;
	if ((size_t)ret > len) {
		report(R_STRAY, "read returned %zd, more than 64 wheels' worth", ret);
		return;
	}
	/*
	 * Past the count only a record cut by the arena's guard page may be
	 * partly written (uapi: it is not counted and comes again).
	 */
	if (size > len && (size_t)ret + sizeof(*ev) > len)
		memcpy(arena + ret, saved + ret, len - ret);
	if (memcmp(arena + ret, saved + ret, len - ret))
		report(R_STRAY, "read changed bytes past the %zd it returned", ret);
	scan_kptr(saved, arena, ret, "read");
	ev = (struct twheel_event *)arena;
	for (i = 0; i < (size_t)ret / sizeof(*ev); i++) {
		if (!in_pool(ev[i].id) || ev[i].expired_ns < ev[i].deadline_ns ||
		    ev[i].expired_ns > t1 || ev[i].deadline_ns + 2000000000ULL < start_ns)
			report(R_EVENT, "id %#llx deadline %llu expired %llu",
			       (unsigned long long)ev[i].id, (unsigned long long)ev[i].deadline_ns,
			       (unsigned long long)ev[i].expired_ns);
		if (i && ev[i].deadline_ns < ev[i - 1].deadline_ns)
			report(R_EVENT, "deadline %llu after %llu in one read",
			       (unsigned long long)ev[i].deadline_ns,
			       (unsigned long long)ev[i - 1].deadline_ns);
	}
}

/* ioctl types the VFS answers itself (FIONBIO, FICLONE, FIFREEZE...): skipped. */
static int vfs_generic(uint32_t cmd)
{
	uint32_t type = _IOC_TYPE(cmd);

	return type == 'T' || type == 'X' || type == 'f' || type == 0x94 || type == 0 ||
	       type == 0x15;
}

static void do_random_ioctl(void)
{
	static const int errs[] = { ENOTTY };
	enum ptr_kind kind;
	uint8_t *p = pick_ptr(64, &kind);
	uint32_t cmd;
	int ret, err;

	do {
		if (rnd_below(&rs, 2))
			cmd = _IOC(rnd_below(&rs, 4), TWHEEL_IOC_MAGIC, rnd_below(&rs, 8) < 6 ?
				   rnd_below(&rs, 4) : rnd_below(&rs, 256), rnd_below(&rs, 4) ?
				   8 * rnd_below(&rs, 8) : rnd_below(&rs, 1 << 14));
		else
			cmd = rnd_next(&rs);
	} while (vfs_generic(cmd) || cmd == TWHEEL_IOC_SETUP || cmd == TWHEEL_IOC_OP ||
		 cmd == TWHEEL_IOC_BATCH || cmd == TWHEEL_IOC_DUMP);
	if (kind == P_VALID) {
		fill_pattern(p, CHECK_LEN);
		memcpy(saved, p, CHECK_LEN);
	}
	ret = ioctl(pick_wheel(), cmd, rnd_below(&rs, 8) ? (unsigned long)p : rnd_next(&rs));
	err = errno;
	calls++;
	if (ret >= 0)
		report(R_ERRNO, "ioctl %#x returned %d, not ENOTTY", cmd, ret);
	else
		check_errno(ret, err, errs, 1, "unknown ioctl");
	if (kind == P_VALID && memcmp(p, saved, CHECK_LEN))
		report(R_STRAY, "unknown ioctl %#x wrote into its argument", cmd);
}

static void do_poll(void)
{
	struct pollfd p[NWHEELS];
	int i, ret;

	for (i = 0; i < NWHEELS; i++) {
		p[i].fd = wfd[i];
		p[i].events = POLLIN | POLLOUT | POLLPRI;
		p[i].revents = 0;
	}
	ret = poll(p, NWHEELS, 0);
	calls++;
	if (ret < 0)
		report(R_ERRNO, "poll: %s", strerror(errno));
	for (i = 0; i < NWHEELS; i++)
		if (p[i].revents & ~(POLLIN | POLLRDNORM))
			report(R_ERRNO, "poll revents %#x", p[i].revents);
}

static void reopen(int i)
{
	int fd;

	close(wfd[i]);
	calls++;
	fd = open(TWHEEL_DEVICE, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	calls++;
	if (fd < 0) {
		report(R_ERRNO, "open: %s", strerror(errno));
		return;
	}
	wfd[i] = fd;
	/* Most wheels get a working setup, so the ops go deep. */
	if (rnd_below(&rs, 4)) {
		raw_setup(fd, rnd_below(&rs, 2) ? NSEC_PER_MSEC : TWHEEL_TICK_MIN_NS,
			  rnd_below(&rs, 5 * NSEC_PER_MSEC), rnd_below(&rs, 2) ? 4096 : 0);
		calls++;
	}
}

static void do_fd_games(void);

static void one_call(void)
{
	unsigned int r = rnd_below(&rs, 100);

	if (r < 8)
		do_setup();
	else if (r < 40)
		do_op();
	else if (r < 55)
		do_batch();
	else if (r < 75)
		do_read();
	else if (r < 87)
		do_random_ioctl();
	else if (r < 93)
		do_poll();
	else
		do_fd_games();
}

static void do_fd_games(void)
{
	unsigned int r = rnd_below(&rs, 100);
	int i = rnd_below(&rs, NWHEELS), j = rnd_below(&rs, NWHEELS), fd, status;
	pid_t pid;
	uint64_t k;

	if (r < 45) {
		reopen(i);
	} else if (r < 85 || is_child) {
		/* Two slots share one wheel: dup, close the old one. */
		fd = dup(wfd[j]);
		calls++;
		if (fd >= 0 && i != j) {
			close(wfd[i]);
			wfd[i] = fd;
		} else if (fd >= 0) {
			close(fd);
		}
	} else {
		pid = fork();
		calls++;
		if (pid == 0) {
			is_child = 1;
			memset(reports, 0, sizeof(reports));
			rs ^= 0x9e3779b97f4a7c15ULL;
			for (k = 0; k < 300; k++)
				one_call();
			for (k = 0, status = 0; k < R_NR; k++)
				status += reports[k];
			_exit(status > 250 ? 250 : status);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			report(R_CHILD, "child %d: status %#x", pid, pid > 0 ? status : -1);
		else
			calls += 300;
	}
}

/* After the storm: a fresh wheel and an old one still do their job. */
static int usable(int fd, int fresh)
{
	struct twheel_event ev;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint64_t id = ids[5];
	long long tick;
	int ret;

	if (fresh && raw_setup(fd, NSEC_PER_MSEC, 0, 0))
		return 0;
	raw_op1(fd, TWHEEL_OP_CANCEL, id, UINT64_MAX);
	/* Drain what is already queued, then our own event must come. */
	while (read(fd, &ev, sizeof(ev)) > 0)
		;
	ret = raw_op1(fd, TWHEEL_OP_ADD, id, 2 * NSEC_PER_MSEC);
	if (ret == -ENOSPC)
		return 1;	/* a full old wheel of huge timeouts is fine */
	if (ret)
		return 0;
	/*
	 * The storm may have set this wheel up with a tick of up to an hour:
	 * then the id's expiry is a tick away, and being live must do.
	 */
	tick = fdinfo_get(fd, "tick_ns");
	if (tick < 0)
		return 0;
	if ((unsigned long long)tick > 1000 * NSEC_PER_MSEC)
		return raw_op1(fd, TWHEEL_OP_CANCEL, id, UINT64_MAX) == 0;
	for (;;) {
		if (poll(&p, 1, 5000 + (int)(2 * (unsigned long long)tick / NSEC_PER_MSEC)) != 1)
			return 0;
		if (read(fd, &ev, sizeof(ev)) != sizeof(ev))
			return 0;
		if (ev.id == id)
			return 1;
	}
}

/*
 * The longest timeout the ABI accepts, given to a wheel whose clock has
 * not run for a while (an idle wheel arms no timer), must still not fire
 * early: deadline_ns >= time of the call + timeout. Both for ADD and for
 * REFRESH, at the smallest tick (where the bound is TWHEEL_MAX_TIMEOUT_TICKS
 * ticks) and at 1 ms. Returns the number of early deadlines.
 */
static int longest_timeouts(void)
{
	static const uint64_t ticks[] = { TWHEEL_TICK_MIN_NS, NSEC_PER_MSEC };
	int i, early = 0;

	for (i = 0; i < 2; i++) {
		uint64_t max = ticks[i] * TWHEEL_MAX_TIMEOUT_TICKS, t0;
		int fd = open(TWHEEL_DEVICE, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		struct twheel_op op;
		int code;

		if (fd < 0)
			return 1;
		if (raw_setup(fd, ticks[i], 0, 0)) {
			close(fd);
			return 1;
		}
		sleep_ns(200 * NSEC_PER_MSEC);	/* the wheel's clock stays where setup left it */
		for (code = TWHEEL_OP_ADD; code <= TWHEEL_OP_REFRESH; code++) {
			if (code == TWHEEL_OP_REFRESH)
				sleep_ns(200 * NSEC_PER_MSEC);
			op_init(&op, code, 1, TWHEEL_OPF_TIMEOUT, max);
			t0 = mono_ns();
			if (raw_op(fd, &op) || op.deadline_ns < t0 + max) {
				printf("# tick %llu ns, %s with the longest timeout %llu: result %d, deadline %llu is %lld ns early\n",
				       (unsigned long long)ticks[i], code == TWHEEL_OP_ADD ? "ADD" : "REFRESH",
				       (unsigned long long)max, op.result,
				       (unsigned long long)op.deadline_ns,
				       (long long)(t0 + max - op.deadline_ns));
				early++;
			}
		}
		close(fd);
	}
	return early;
}

int main(int argc, char **argv)
{
	uint64_t secs = arg_or_env(argc, argv, "TWHEEL_STRESS_SECS", 60);
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x7477686565ULL;
	uint64_t end, total = 0, old_ok = 0, old_n = 0;
	int i, fd, ok;

	ksft_print_header();
	ksft_set_plan(9);
	rs = seed;
	ksft_print_msg("seed %#llx, %llu s\n", (unsigned long long)seed, (unsigned long long)secs);
	arena = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	batch_region = mmap(NULL, (BATCH_PAGES + 1) * PAGE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ro_page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unmapped = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (arena == MAP_FAILED || batch_region == MAP_FAILED || ro_page == MAP_FAILED ||
	    unmapped == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	mprotect(arena + 2 * PAGE, PAGE, PROT_NONE);
	mprotect(batch_region + BATCH_PAGES * PAGE, PAGE, PROT_NONE);
	munmap(unmapped, PAGE);
	ids[0] = 0;
	ids[1] = ~0ULL;
	for (i = 2; i < NIDS; i++)
		ids[i] = i < 32 ? (uint64_t)i : rnd_next(&rs) & 0x7fffffffffffffffULL;
	/* The read-only page holds plausible ops: the kernel may apply, not write back. */
	for (i = 0; i < (int)(PAGE / sizeof(struct twheel_op)); i++)
		fill_op((struct twheel_op *)ro_page + i);
	mprotect(ro_page, PAGE, PROT_READ);
	signal(SIGPIPE, SIG_IGN);

	for (i = 0; i < NWHEELS; i++) {
		wfd[i] = open(TWHEEL_DEVICE, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (wfd[i] < 0) {
			ksft_test_result(0, "open %s: %s\n", TWHEEL_DEVICE, strerror(errno));
			printf("fuzz-abi: calls=0 reports=1\n");
			return 1;
		}
		reopen(i);
	}
	ksft_test_result(!longest_timeouts(),
			 "the longest timeout is never early on an idle wheel\n");
	start_ns = mono_ns();
	end = start_ns + secs * 1000000000ULL;
	while (mono_ns() < end) {
		int k;

		for (k = 0; k < 64; k++)
			one_call();
	}

	for (i = 0; i < NWHEELS; i++, old_n++) {
		/* Every slot either is set up already or accepts a setup now. */
		raw_setup(wfd[i], NSEC_PER_MSEC, 0, 0);
		old_ok += usable(wfd[i], 0);
		close(wfd[i]);
	}
	fd = open(TWHEEL_DEVICE, O_RDWR | O_NONBLOCK);
	ok = fd >= 0 && usable(fd, 1);
	if (fd >= 0)
		close(fd);
	if (!ok || old_ok != old_n)
		report(R_USABLE, "fresh wheel %s, %llu of %llu fuzzed wheels usable",
		       ok ? "ok" : "broken", (unsigned long long)old_ok, (unsigned long long)old_n);

	ksft_test_result(!reports[R_ERRNO],
			 "every return value in the documented set (%llu calls)\n",
			 (unsigned long long)calls);
	ksft_test_result(!reports[R_OPFIELD], "op results and out fields well-formed\n");
	ksft_test_result(!reports[R_STRAY],
			 "no byte changed outside what the kernel reports written\n");
	ksft_test_result(!reports[R_EVENT], "events read are ours, in order, never early\n");
	ksft_test_result(!reports[R_KPTR], "no kernel-pointer-like value returned\n");
	ksft_test_result(!reports[R_CHILD], "forked children found nothing\n");
	ksft_test_result(!reports[R_USABLE], "wheels still usable after the storm\n");
	ksft_test_result(1, "no crash or hang in %llu s\n", (unsigned long long)secs);
	for (i = 0; i < R_NR; i++)
		total += reports[i];
	printf("fuzz-abi: calls=%llu reports=%llu\n", (unsigned long long)calls,
	       (unsigned long long)total);
	/* Every kind of report fails one of the tests: exit 1. */
	ksft_finished();
}
