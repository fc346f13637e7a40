// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz-abi: throw random and mutated ioctls, reads, polls, closes, dups,
 * forks, mmaps and stores into touch tables at several wheels, and check
 * every byte the kernel hands back.
 *
 * Commands are the real ones with mutated arguments (flags, slots, op
 * codes, timeouts and absolute deadlines, counts of 0, 17, INT_MAX,
 * INT_MAX + 1, 0xffffffff, dump cursors), our magic with random
 * nr/size/direction, and random numbers (minus the generic ioctls the VFS
 * handles itself, which would change the fd). Pointers are valid, NULL,
 * unmapped, read-only, kernel addresses, non-canonical, or a struct
 * straddling the end of a page into PROT_NONE. Before each call the
 * buffers are filled with a pattern; after it every return value must be
 * in the errno set documented for the call, and each byte must be
 * untouched or properly written:
 *  - SETUP, OP, BATCH, REFRESH and TOUCH_REGISTER on a descriptor opened
 *    O_RDONLY: EBADF, nothing written back;
 *  - struct twheel_op: result in the set its op code allows and equal to
 *    the ioctl's error; EINVAL exactly when the uapi says (flags, slot,
 *    timeout, deadline against the wheel's settings as fdinfo gives them);
 *    a deadline on the wheel's tick grid, never before the call's start +
 *    timeout (or the absolute deadline), remaining_ns consistent with the
 *    call's time; input fields unchanged, nothing past the count changed;
 *  - TWHEEL_IOC_REFRESH (the compact batch): EINVAL exactly when the uapi
 *    says, a count of ids processed, failures a subsequence of those ids
 *    in order and none of them live afterwards (the uapi: not refreshed
 *    means not live, or not added), nothing written past the room of
 *    what was processed;
 *  - read: events for ids we use, on the grid, with plausible times;
 *  - TWHEEL_IOC_DUMP: cursor semantics (0 begins, only the cursor field is
 *    written, it moves forward, TWHEEL_DUMP_END ends, any other value of
 *    bit 63 is EINVAL, one with another count of new keys in bits 56-62
 *    than the wheel's is ESTALE), every entry an id we use, listed once
 *    per cursor chain, deadline on the grid and plausible, slot TWHEEL_SLOT_NONE or
 *    below the table's size, pad 0, nothing past the count;
 *  - TWHEEL_IOC_NS_LIMIT (random pids, flags and limits): EINVAL, ESRCH,
 *    EPERM, EFAULT, ENOMEM only, nothing written back on failure, only
 *    the out fields on success;
 *  - TWHEEL_IOC_TOUCH_REGISTER (random slots, flags and table addresses:
 *    fresh anonymous or shared memory, misaligned, unmapped, read-only,
 *    partly PROT_NONE, kernel, another wheel's mapped table; on wheels
 *    with and without TWHEEL_SETUPF_TOUCH_USER): EINVAL, EBUSY, EFAULT
 *    exactly when the uapi says, nothing written back, fdinfo's
 *    touch_registered after a success, binding refused before it;
 *  - mmap of the wheel: the result the uapi and mmap(2) document for the
 *    wheel's state (EBADFD before setup, ENODEV without a table or with a
 *    registered one, EINVAL for offset, length, MAP_PRIVATE, PROT_EXEC,
 *    EACCES for the fd's mode...), never success where it must fail;
 *    mprotect, mremap and madvise on the mapping; the table's contents:
 *    zero when new, only what a process stored, never another wheel's,
 *    the same memory through every mapping, kept across MADV_DONTNEED;
 *  - no 8-byte value that looks like a kernel pointer anywhere the kernel
 *    wrote.
 * Every command goes now and then through io_uring instead, as an
 * IORING_OP_URING_CMD SQE with its number as cmd_op (inline, or with
 * IOSQE_ASYNC from an io-wq worker), on kernels that have ring commands,
 * and is held to the same checks: the CQE's res is the ioctl's answer.
 * Ring commands of other numbers are ENOTTY, with a non-zero pad or
 * uring_cmd_flags EINVAL (EFAULT from io_uring for a fixed buffer it
 * does not have); kernels without them fail the SQE with EINVAL.
 * Some wheels have touch tables of random sizes (1, 511, 512, 513, ...,
 * up to TWHEEL_TOUCH_MAX_SLOTS), mapped or registered. While the main
 * thread fuzzes, a stamp writer thread stores random stamps (0, ~0, the
 * present, near past and future, an hour ahead, garbage, per-wheel
 * markers) into every mapped or registered table all the time, and
 * checks what it reads there; the main thread unmaps, remaps and closes
 * under it, so its stores race munmap and the last close (a fault is
 * expected only on a mapping being unmapped).
 * A private probe wheel, whose table the writer garbles too (mapped in
 * the run's first half, registered memory in its second), checks what
 * the garbage must not do: a bound id's event or deadline never earlier
 * than its last ADD or REFRESH gave, each incarnation delivered exactly
 * once or cancelled, and every id live throughout a dump listed by it
 * exactly once with its deadline and slot.
 * Children forked midway fuzz the shared wheels and tables too and report
 * their own anomalies. Kernel-side problems (KASAN, UBSAN, lockdep, WARN)
 * are caught by the harness's scan of the kernel log, so run this on the
 * debug kernel too.
 *
 *   fuzz-abi [SECONDS [SEED]]	(SECONDS: $TWHEEL_STRESS_SECS, else 60)
 *
 * Prints TAP and "fuzz-abi: calls=N reports=N"; exits 1 if reports > 0.
 */
#include <poll.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stddef.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <liburing.h>

#include "twheel_test.h"
#include "kselftest.h"

#define NWHEELS		4
#define NIDS		64
#define PAGE		4096UL
#define BATCH_PAGES	16		/* batch array region, then a guard page */
#define CHECK_LEN	256		/* bytes checked around a struct */
#define SLOTS_PER_PAGE	(PAGE / 8)
#define KEY_LIMIT	(1ULL << 63)	/* dump cursors are keys below it, or the end */
/*
 * Bits 56-62 of a cursor: the new keys its wheel's id index took. The
 * wheels here hold at most NIDS ids, too few for a chain long enough to
 * make one take a new key: 0 throughout.
 */
#define CURSOR_KEYS(c)	((c) >> 56)

enum { R_ERRNO, R_OPFIELD, R_STRAY, R_EVENT, R_KPTR, R_CHILD, R_USABLE, R_DUMP, R_MMAP,
       R_TABLE, R_TOUCH, R_NR };
static const char *const r_name[R_NR] = {
	"errno outside the documented set", "op out fields malformed",
	"bytes changed that the kernel should not touch", "read event implausible",
	"kernel-pointer-like value returned", "forked child found anomalies",
	"wheel unusable after fuzzing", "dump entries or cursor malformed",
	"mmap outcome not as documented", "touch table memory not as documented",
	"touched id early, lost, duplicated or missed by a dump",
};
static uint64_t reports[R_NR];
static uint64_t calls;
static uint64_t rs;			/* the random state */
static int is_child;
static uint64_t start_ns;
static uint64_t time_lo;		/* stamps below it are no time of this run */
static int dev_noexec;			/* /dev is mounted noexec: PROT_EXEC is EPERM */

static int wfd[NWHEELS];
static uint64_t ids[NIDS];

static uint8_t *arena;			/* 2 RW pages + 1 PROT_NONE */
static uint8_t *ro_page;		/* PROT_READ */
static uint8_t *unmapped;		/* an address with no mapping */
static uint8_t *batch_region;		/* BATCH_PAGES RW + 1 PROT_NONE */
static uint8_t *fail_region;		/* 2 RW pages + 1 PROT_NONE: REFRESH's failures */
static uint8_t saved[BATCH_PAGES * PAGE];

enum ptr_kind { P_VALID, P_NULL, P_UNMAPPED, P_RO, P_KERNEL, P_NONCANON, P_STRADDLE, P_NR };

/* Counts of what the run reached, for the closing summary. */
static uint64_t n_touch_setups, n_maps_ok, n_maps_refused, n_dumps_ok, n_dump_entries;
static uint64_t n_probe_events, n_probe_chains, n_races;
static uint64_t n_user_setups, n_registers_ok, n_registers_refused;

/*
 * The fuzzer reaches the device through raw ioctls only, for its own
 * set-up and checks too: nothing stands between it and the ABI it checks.
 * @flags: TWHEEL_SETUPF_TOUCH or TWHEEL_SETUPF_TOUCH_USER with @slots, else 0.
 */
static int raw_setup_touch(int fd, uint64_t tick_ns, uint64_t dflt_ns, uint32_t max_entries,
			   uint32_t flags, uint32_t slots)
{
	struct twheel_setup_args a = {
		.tick_ns = tick_ns,
		.default_timeout_ns = dflt_ns,
		.clockid = CLOCK_MONOTONIC,
		.max_entries = max_entries,
		.flags = flags,
		.touch_slots = slots,
	};

	return ioctl(fd, TWHEEL_IOC_SETUP, &a) ? -errno : 0;
}

static int raw_setup(int fd, uint64_t tick_ns, uint64_t dflt_ns, uint32_t max_entries)
{
	return raw_setup_touch(fd, tick_ns, dflt_ns, max_entries, 0, 0);
}

static int raw_register(int fd, void *table, uint32_t slots)
{
	struct twheel_touch_register_args a = { .addr = (uintptr_t)table, .slots = slots };

	return ioctl(fd, TWHEEL_IOC_TOUCH_REGISTER, &a) ? -errno : 0;
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

static int pool_index(uint64_t v)
{
	int i;

	for (i = 0; i < NIDS; i++)
		if (ids[i] == v)
			return i;
	return -1;
}

static int in_pool(uint64_t v)
{
	return pool_index(v) >= 0;
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

/*
 * A command that changes the wheel, on a descriptor opened O_RDONLY:
 * EBADF before anything else (uapi). Returns 1 if the descriptor is
 * one, after checking the answer.
 */
static int refused_rdonly(int accmode, long ret, int err, const char *what)
{
	if (accmode != O_RDONLY)
		return 0;
	if (ret != -1 || err != EBADF)
		report(R_ERRNO, "%s on a descriptor opened O_RDONLY returned %ld errno %d, uapi says EBADF",
		       what, ret, ret < 0 ? err : 0);
	return 1;
}

/* ---- the way in: ioctl(2), or the same command as a ring command ---- */

static struct io_uring ring;
static int ring_cmds;			/* the kernel has IORING_OP_URING_CMD */
static uint64_t n_ring_cmds, n_ring_async, n_ring_junk;

/*
 * Command @cmd with argument @arg on @fd as an IORING_OP_URING_CMD SQE,
 * filled here by hand (no <twheel_uring.h>: nothing between the fuzzer
 * and the ABI), with @pad in the command area, @cmd_flags as
 * uring_cmd_flags and @sqe_flags; waits for its CQE and answers as
 * ioctl(2) would: the res, or -1 with errno set to -res.
 */
static long ring_cmd(int fd, unsigned int cmd, unsigned long arg, uint64_t pad,
		     uint32_t cmd_flags, uint8_t sqe_flags)
{
	struct twheel_uring_cmd area = { .arg = arg, .pad = pad };
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	struct io_uring_cqe *cqe;
	int ret;

	if (!sqe) {
		fprintf(stderr, "fuzz-abi: the ring has no free SQE\n");
		exit(2);
	}
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = cmd;
	sqe->uring_cmd_flags = cmd_flags;
	sqe->flags = sqe_flags;
	memcpy(sqe->cmd, &area, sizeof(area));
	ret = io_uring_submit(&ring);
	if (ret == 1)
		do
			ret = io_uring_wait_cqe(&ring, &cqe);
		while (ret == -EINTR);
	else if (ret >= 0)
		ret = -EIO;
	if (ret < 0) {
		fprintf(stderr, "fuzz-abi: ring submission: %s\n", strerror(-ret));
		exit(2);
	}
	ret = cqe->res;
	io_uring_cqe_seen(&ring, cqe);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return ret;
}

/*
 * ioctl(2) of @cmd, or one time in four the same command through the ring
 * (one in eight of those from an io-wq worker): where the kernel has ring
 * commands, and in the parent only, whose ring it is.
 */
static long fuzz_ioctl(int fd, unsigned int cmd, void *arg)
{
	if (!ring_cmds || is_child || rnd_below(&rs, 4))
		return ioctl(fd, cmd, arg);
	n_ring_cmds++;
	if (rnd_below(&rs, 8))
		return ring_cmd(fd, cmd, (uintptr_t)arg, 0, 0, 0);
	n_ring_async++;
	return ring_cmd(fd, cmd, (uintptr_t)arg, 0, 0, IOSQE_ASYNC);
}

/*
 * The ring, made before the fuzzer's unmapped page is unmapped: the
 * kernel must never be handed the ring's own memory as a bad pointer.
 * Returns 0 if there is no io_uring.
 */
static int ring_init(void)
{
	struct io_uring_probe *probe;

	if (io_uring_queue_init(8, &ring, 0))
		return 0;
	probe = io_uring_get_probe_ring(&ring);
	ring_cmds = probe && io_uring_opcode_supported(probe, IORING_OP_URING_CMD);
	if (probe)
		io_uring_free_probe(probe);
	return 1;
}

/*
 * Ring commands on this kernel, or a ring without them: then an SQE of
 * that opcode must fail with EINVAL (uapi).
 */
static void ring_start(int have_ring, int fd)
{
	long ret;

	if (!have_ring) {
		ksft_print_msg("ring: no io_uring here, ring commands not fuzzed\n");
		return;
	}
	if (ring_cmds)
		return;
	ret = ring_cmd(fd, TWHEEL_IOC_DUMP, 0, 0, 0, 0);
	calls++;
	if (ret != -1 || errno != EINVAL)
		report(R_ERRNO, "a ring command on a kernel without them returned %ld errno %d, uapi says EINVAL",
		       ret, ret < 0 ? errno : 0);
	ksft_print_msg("ring: this kernel has no ring commands (EINVAL), not fuzzed\n");
}

/* ---- what each wheel is, as fdinfo tells ---- */

/*
 * The settings of the wheel behind wfd[i], from its fdinfo, cached until
 * something may change them: a setup, an fd game, a child's run.
 */
struct winfo {
	int valid;
	int setup;
	int accmode;			/* O_RDONLY, O_WRONLY, O_RDWR */
	uint64_t serial;
	uint64_t tick, dflt, max_timeout;
	clockid_t clockid;
	uint32_t slots;			/* 0: no table */
	int touch_user;			/* TWHEEL_SETUPF_TOUCH_USER */
	int registered;			/* ... and its table registered */
};
static struct winfo winfo[NWHEELS];

/* A registration changes a wheel that is set up, shared maybe: forget all. */
static void winfo_forget(void)
{
	int i;

	for (i = 0; i < NWHEELS; i++)
		winfo[i].valid = 0;
}

/* A setup changes only wheels not yet set up: forget those. */
static void winfo_forget_unset(void)
{
	int i;

	for (i = 0; i < NWHEELS; i++)
		if (!winfo[i].setup)
			winfo[i].valid = 0;
}

/* The longest timeout a wheel of tick @tick accepts (uapi). */
static uint64_t max_timeout_of(uint64_t tick)
{
	if (tick > TWHEEL_MAX_TIMEOUT_NS / TWHEEL_MAX_TIMEOUT_TICKS)
		return TWHEEL_MAX_TIMEOUT_NS;
	return tick * TWHEEL_MAX_TIMEOUT_TICKS;
}

static void winfo_read(int fd, struct winfo *w)
{
	long long tick = fdinfo_get(fd, "tick_ns");

	memset(w, 0, sizeof(*w));
	w->valid = 1;
	w->serial = fdinfo_get(fd, "wheel");
	w->accmode = fcntl(fd, F_GETFL) & O_ACCMODE;
	if (tick <= 0)
		return;
	w->setup = 1;
	w->tick = tick;
	w->dflt = fdinfo_get(fd, "default_timeout_ns");
	w->clockid = fdinfo_get(fd, "clockid");
	w->slots = fdinfo_get(fd, "touch_slots");
	w->touch_user = fdinfo_get(fd, "touch_user") == 1;
	w->registered = fdinfo_get(fd, "touch_registered") == 1;
	w->max_timeout = max_timeout_of(w->tick);
}

static const struct winfo *wheel_info(int i)
{
	if (!winfo[i].valid)
		winfo_read(wfd[i], &winfo[i]);
	return &winfo[i];
}

/* Now on the wheel's clock: ops, deadlines and events are on it. */
static uint64_t wclock(const struct winfo *w)
{
	return clock_ns(w->setup && w->clockid == CLOCK_BOOTTIME ? CLOCK_BOOTTIME : CLOCK_MONOTONIC);
}

/*
 * Per wheel (by serial): the phase of its tick grid, learnt from the
 * first deadline seen, and the dump cursor chain under way.
 */
struct wstate {
	uint64_t serial;
	uint64_t phase;
	int phase_known;
	int chain_on;
	uint64_t chain_cursor;
	uint64_t chain_seen;		/* pool ids listed since the chain began */
};
static struct wstate wstates[64];

static struct wstate *wstate_of(uint64_t serial)
{
	struct wstate *s = &wstates[serial % 64];

	if (s->serial != serial) {
		memset(s, 0, sizeof(*s));
		s->serial = serial;
	}
	return s;
}

/* Deadlines are epoch + k * tick: all of one wheel share one phase. */
static int on_grid(const struct winfo *w, uint64_t deadline)
{
	struct wstate *s = wstate_of(w->serial);

	if (!w->tick)
		return 0;
	if (!s->phase_known) {
		s->phase = deadline % w->tick;
		s->phase_known = 1;
	}
	return deadline % w->tick == s->phase;
}

static enum ptr_kind pick_kind(void)
{
	return rnd_below(&rs, 100) < 55 ? P_VALID : (enum ptr_kind)(1 + rnd_below(&rs, P_NR - 1));
}

/* A pointer of kind @kind to room for @len bytes. */
static uint8_t *ptr_of_kind(enum ptr_kind kind, size_t len)
{
	switch (kind) {
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

/* A pointer of random kind to room for @len bytes; *kind says which. */
static uint8_t *pick_ptr(size_t len, enum ptr_kind *kind)
{
	*kind = pick_kind();
	return ptr_of_kind(*kind, len);
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

/* An absolute deadline: past, present, near, at and beyond the longest timeout. */
static uint64_t pick_abstime(const struct winfo *w)
{
	uint64_t now = wclock(w), max = w->setup ? w->max_timeout : TWHEEL_MAX_TIMEOUT_NS;

	switch (rnd_below(&rs, 10)) {
	case 0: return 0;
	case 1: return ~0ULL;
	case 2: return now - rnd_below(&rs, NSEC_PER_SEC);
	case 3: return now + max + rnd_below(&rs, 3) * NSEC_PER_SEC;
	case 4: return now + max - NSEC_PER_SEC;
	case 5: return rnd_next(&rs);
	default: return now + rnd_below(&rs, 20 * NSEC_PER_MSEC);
	}
}

/* A touch slot: in range, at its edges, TWHEEL_SLOT_NONE, or anything. */
static uint32_t pick_slot(uint32_t slots)
{
	switch (rnd_below(&rs, 8)) {
	case 0: return TWHEEL_SLOT_NONE;
	case 1: return slots;
	case 2: return slots ? slots - 1 : 0;
	case 3: return (uint32_t)rnd_next(&rs);
	default: return rnd_below(&rs, slots ? slots : 4);
	}
}

static void fill_op(struct twheel_op *op, const struct winfo *w)
{
	unsigned int r = rnd_below(&rs, 100);

	fill_pattern((uint8_t *)op, sizeof(*op));
	op->id = pick_id();
	op->op = r < 90 ? 1 + rnd_below(&rs, 4) : (uint32_t)rnd_next(&rs);
	op->flags = rnd_below(&rs, 100) < 85 ? rnd_below(&rs, 16) : (uint32_t)rnd_next(&rs);
	if (op->flags & TWHEEL_OPF_ABSTIME && rnd_below(&rs, 10))
		op->timeout_ns = pick_abstime(w);
	else
		op->timeout_ns = op->flags & TWHEEL_OPF_TIMEOUT || rnd_below(&rs, 10) == 0 ?
				 pick_timeout() : 0;
	if (op->flags & TWHEEL_OPF_TOUCH)
		op->slot = rnd_below(&rs, 100) < 95 ? pick_slot(w->slots) : (uint32_t)rnd_next(&rs);
	else
		op->slot = rnd_below(&rs, 100) < 92 ? 0 : (uint32_t)rnd_next(&rs);
	op->result = 0x5a5a5a5a;
}

static int pick_idx(void)
{
	return rnd_below(&rs, NWHEELS);
}

/* ---- the op oracle ---- */

enum { INVAL_NO, INVAL_MAYBE, INVAL_MUST };

/*
 * Must @op fail with EINVAL on wheel @w (set up), given as input between
 * @t0 and @t1 on the wheel's clock? The uapi's rules: op code, flags the
 * op allows, slot, timeout against the wheel's longest, an absolute
 * deadline against the present (MAYBE when the call's span straddles it).
 */
static int op_einval(const struct winfo *w, const struct twheel_op *op, uint64_t t0, uint64_t t1)
{
	const uint32_t times = TWHEEL_OPF_TIMEOUT | TWHEEL_OPF_ABSTIME;
	uint32_t allowed;

	switch (op->op) {
	case TWHEEL_OP_ADD:
		allowed = times | TWHEEL_OPF_TOUCH;
		break;
	case TWHEEL_OP_REFRESH:
		allowed = times | TWHEEL_OPF_TOUCH | TWHEEL_OPF_ADD_IF_ABSENT;
		break;
	case TWHEEL_OP_CANCEL:
	case TWHEEL_OP_QUERY:
		allowed = 0;
		break;
	default:
		return INVAL_MUST;
	}
	if (op->flags & ~allowed)
		return INVAL_MUST;
	if (op->flags & TWHEEL_OPF_TOUCH) {
		if (!w->slots || (op->slot >= w->slots && op->slot != TWHEEL_SLOT_NONE))
			return INVAL_MUST;
		/* No registered table yet to bind to. */
		if (w->touch_user && !w->registered && op->slot != TWHEEL_SLOT_NONE)
			return INVAL_MUST;
	} else if (op->slot) {
		return INVAL_MUST;
	}
	if (!(op->flags & times))
		return op->timeout_ns ? INVAL_MUST : INVAL_NO;
	if (!(op->flags & TWHEEL_OPF_ABSTIME))
		return op->timeout_ns > w->max_timeout ? INVAL_MUST : INVAL_NO;
	/* A deadline further from the present than the longest timeout. */
	if (op->timeout_ns <= t0 || op->timeout_ns - t0 <= w->max_timeout)
		return INVAL_NO;
	if (op->timeout_ns > t1 && op->timeout_ns - t1 > w->max_timeout)
		return INVAL_MUST;
	return INVAL_MAYBE;
}

/* The results other than EINVAL an op may have: by op code and flags. */
static int result_allowed(const struct twheel_op *op, int res)
{
	switch (op->op) {
	case TWHEEL_OP_ADD:
		return res == -EEXIST || res == -ENOSPC || res == -ENOMEM;
	case TWHEEL_OP_REFRESH:
		if (op->flags & TWHEEL_OPF_ADD_IF_ABSENT)
			return res == -ENOSPC || res == -ENOMEM;
		return res == -ENOENT;
	default:
		return res == -ENOENT;
	}
}

/*
 * The deadline of a successful op: on the grid, consistent with
 * remaining_ns and the call's span, and for ADD and REFRESH never before
 * the call began + its timeout (or before its absolute deadline), at most
 * a tick after the call ended + its timeout.
 */
static void check_deadline(const struct winfo *w, const struct twheel_op *in,
			   const struct twheel_op *out, uint64_t t0, uint64_t t1, const char *what)
{
	uint64_t dl = out->deadline_ns, rem = out->remaining_ns, lo, hi;

	if (!on_grid(w, dl))
		report(R_OPFIELD, "%s: deadline %llu off the grid of tick %llu (phase %llu)", what,
		       (unsigned long long)dl, (unsigned long long)w->tick,
		       (unsigned long long)wstate_of(w->serial)->phase);
	if (rem && (dl - rem < t0 || dl - rem > t1))
		report(R_OPFIELD, "%s: deadline %llu - remaining %llu is outside the call [%llu, %llu]",
		       what, (unsigned long long)dl, (unsigned long long)rem,
		       (unsigned long long)t0, (unsigned long long)t1);
	if (!rem && dl > t1)
		report(R_OPFIELD, "%s: remaining 0 but deadline %llu after the call ended at %llu",
		       what, (unsigned long long)dl, (unsigned long long)t1);
	if (in->op != TWHEEL_OP_ADD && in->op != TWHEEL_OP_REFRESH) {
		if (dl + 2000000000ULL < start_ns || dl > t1 + w->max_timeout + w->tick)
			report(R_OPFIELD, "%s: implausible deadline %llu", what,
			       (unsigned long long)dl);
		return;
	}
	if (in->flags & TWHEEL_OPF_ABSTIME) {
		lo = in->timeout_ns > t0 ? in->timeout_ns : t0;
		hi = (in->timeout_ns > t1 ? in->timeout_ns : t1) + w->tick;
	} else {
		uint64_t tmo = in->flags & TWHEEL_OPF_TIMEOUT ? in->timeout_ns : w->dflt;

		lo = t0 + tmo;
		hi = t1 + tmo + w->tick;
	}
	if (dl < lo)
		report(R_OPFIELD, "%s: op %u flags %#x timeout %llu: deadline %llu is %llu ns early",
		       what, in->op, in->flags, (unsigned long long)in->timeout_ns,
		       (unsigned long long)dl, (unsigned long long)(lo - dl));
	else if (dl > hi)
		report(R_OPFIELD, "%s: op %u flags %#x timeout %llu: deadline %llu is %llu ns past the tick after",
		       what, in->op, in->flags, (unsigned long long)in->timeout_ns,
		       (unsigned long long)dl, (unsigned long long)(dl - hi));
}

/* Check one struct twheel_op after the kernel wrote it back (or should have). */
static void check_op(const struct winfo *w, const struct twheel_op *b, const struct twheel_op *a,
		     int written, int expect_err, uint64_t t0, uint64_t t1, const char *what)
{
	static const int res_ok[] = { 0, -EEXIST, -ENOENT, -ENOSPC, -ENOMEM, -EINVAL };
	int i, ok = 0, inval;

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
	inval = op_einval(w, b, t0, t1);
	if (inval == INVAL_MUST && a->result != -EINVAL)
		report(R_OPFIELD, "%s: op %u flags %#x slot %#x timeout %llu (table %u slots): result %d, uapi says EINVAL",
		       what, b->op, b->flags, b->slot, (unsigned long long)b->timeout_ns, w->slots,
		       a->result);
	else if (inval == INVAL_NO && a->result == -EINVAL)
		report(R_OPFIELD, "%s: op %u flags %#x slot %#x timeout %llu (table %u slots): EINVAL for a valid op",
		       what, b->op, b->flags, b->slot, (unsigned long long)b->timeout_ns, w->slots);
	else if (a->result && a->result != -EINVAL && !result_allowed(b, a->result))
		report(R_OPFIELD, "%s: op %u flags %#x: result %d is not one this op can have",
		       what, b->op, b->flags, a->result);
	if (a->result) {
		if (a->deadline_ns || a->remaining_ns)
			report(R_OPFIELD, "%s: failed op has deadline %llu remaining %llu", what,
			       (unsigned long long)a->deadline_ns, (unsigned long long)a->remaining_ns);
	} else {
		check_deadline(w, b, a, t0, t1, what);
	}
	/* The 64-bit fields; result shares a word with the caller's pad. */
	scan_kptr((const uint8_t *)b, (const uint8_t *)a, offsetof(struct twheel_op, op), what);
}

/* A touch table size: the edges of a page and of the caps, or small. */
static uint32_t pick_table_slots(void)
{
	static const uint32_t edge[] = { 1, 2, SLOTS_PER_PAGE - 1, SLOTS_PER_PAGE,
					 SLOTS_PER_PAGE + 1, 2 * SLOTS_PER_PAGE, 4095, 4096,
					 4097, 65536, 0 };
	unsigned int r = rnd_below(&rs, 1000);

	if (r == 0)
		return TWHEEL_TOUCH_MAX_SLOTS;
	if (r == 1)
		return TWHEEL_TOUCH_MAX_SLOTS + 1;
	if (r < 500)
		return edge[rnd_below(&rs, sizeof(edge) / sizeof(edge[0]))];
	return 1 + rnd_below(&rs, 3 * SLOTS_PER_PAGE);
}

static void do_setup(void)
{
	/* ENOSPC, ENOMEM: a touch table past the user's limit or memory. */
	static const int errs[] = { EINVAL, EFAULT, EBUSY, ENOSPC, ENOMEM };
	struct twheel_setup_args args;
	enum ptr_kind kind;
	uint8_t *p = pick_ptr(sizeof(args), &kind);
	int wi = pick_idx(), fd = wfd[wi], ret, err;
	int accmode = wheel_info(wi)->accmode;
	static const uint64_t ticks[] = { NSEC_PER_MSEC, TWHEEL_TICK_MIN_NS, TWHEEL_TICK_MIN_NS - 1,
					  TWHEEL_TICK_MAX_NS, TWHEEL_TICK_MAX_NS + 1, 0 };

	memset(&args, 0, sizeof(args));
	args.tick_ns = rnd_below(&rs, 10) ? ticks[rnd_below(&rs, 6)] : rnd_next(&rs);
	args.default_timeout_ns = pick_timeout();
	args.clockid = rnd_below(&rs, 10) ? (rnd_below(&rs, 2) ? CLOCK_MONOTONIC : CLOCK_BOOTTIME)
					  : (uint32_t)rnd_next(&rs);
	args.max_entries = rnd_below(&rs, 4) ? rnd_below(&rs, 2) * 4096 : (uint32_t)rnd_next(&rs);
	switch (rnd_below(&rs, 10)) {
	case 0:
		args.flags = (uint32_t)rnd_next(&rs);
		args.touch_slots = (uint32_t)rnd_next(&rs);
		break;
	case 1:
	case 2:
	case 3:
		args.flags = TWHEEL_SETUPF_TOUCH;
		args.touch_slots = pick_table_slots();
		break;
	case 4:
		/* Slots without the flag. */
		args.touch_slots = pick_table_slots();
		break;
	case 5:
	case 6:
		args.flags = TWHEEL_SETUPF_TOUCH_USER;
		args.touch_slots = pick_table_slots();
		break;
	case 7:
		/* Both kinds of table at once. */
		args.flags = TWHEEL_SETUPF_TOUCH | TWHEEL_SETUPF_TOUCH_USER;
		args.touch_slots = pick_table_slots();
		break;
	}
	if (kind == P_VALID) {
		fill_pattern(p, CHECK_LEN);
		memcpy(p, &args, sizeof(args));
		memcpy(saved, p, CHECK_LEN);
	}
	ret = fuzz_ioctl(fd, TWHEEL_IOC_SETUP, p);
	err = errno;
	calls++;
	if (refused_rdonly(accmode, ret, err, "SETUP"))
		return;
	check_errno(ret, err, errs, 5, "SETUP");
	if (ret > 0)
		report(R_ERRNO, "SETUP returned %d", ret);
	if (ret == 0) {
		winfo_forget_unset();
		n_touch_setups += args.flags == TWHEEL_SETUPF_TOUCH;
		n_user_setups += args.flags == TWHEEL_SETUPF_TOUCH_USER;
	}
	if (kind == P_VALID && memcmp(p, saved, CHECK_LEN))
		report(R_STRAY, "SETUP wrote into its (input-only) argument");
	/* Flags 0, TWHEEL_SETUPF_TOUCH or TWHEEL_SETUPF_TOUCH_USER, slots with a flag only. */
	if (kind == P_VALID && ret == 0 &&
	    ((args.flags != 0 && args.flags != TWHEEL_SETUPF_TOUCH &&
	      args.flags != TWHEEL_SETUPF_TOUCH_USER) || (!args.flags != !args.touch_slots) ||
	     args.touch_slots > TWHEEL_TOUCH_MAX_SLOTS))
		report(R_ERRNO, "SETUP accepted flags %#x touch_slots %u", args.flags,
		       args.touch_slots);
}

static void do_op(void)
{
	static const int errs[] = { EBADFD, EFAULT, EEXIST, ENOENT, ENOSPC, ENOMEM, EINVAL };
	struct twheel_op before, *op = NULL;
	enum ptr_kind kind;
	uint8_t *p = pick_ptr(sizeof(*op), &kind);
	int i = pick_idx(), fd = wfd[i], ret, err, written;
	const struct winfo *w = wheel_info(i);
	uint64_t t0, t1;

	if (kind == P_VALID) {
		fill_pattern(p, CHECK_LEN);
		op = (struct twheel_op *)p;
		fill_op(op, w);
		memcpy(saved, p, CHECK_LEN);
		before = *op;
	}
	t0 = wclock(w);
	ret = fuzz_ioctl(fd, TWHEEL_IOC_OP, p);
	err = errno;
	t1 = wclock(w);
	calls++;
	if (refused_rdonly(w->accmode, ret, err, "OP")) {
		if (kind == P_VALID && memcmp(p, saved, CHECK_LEN))
			report(R_STRAY, "OP refused with EBADF wrote into its argument");
		return;
	}
	check_errno(ret, err, errs, 7, "OP");
	if (ret > 0)
		report(R_ERRNO, "OP returned %d", ret);
	if (ret < 0 && err == EBADFD && w->setup)
		report(R_ERRNO, "OP: EBADFD on a wheel that is set up");
	if (kind != P_VALID)
		return;
	written = !(ret < 0 && (err == EBADFD || err == EFAULT));
	check_op(w, &before, op, written, ret < 0 ? -err : 0, t0, t1, "OP");
	if (memcmp(p + sizeof(*op), saved + sizeof(*op), CHECK_LEN - sizeof(*op)))
		report(R_STRAY, "OP wrote past its struct");
}

static void do_batch(void)
{
	static const int errs[] = { EBADFD, EFAULT, EINVAL, ESTALE };
	static const uint32_t counts[] = { 0, 1, 2, 16, 17, 33, 0xffffffffU, 0x80000000U,
					   0x7fffffffU, 1000 };
	const uint32_t cap = BATCH_PAGES * PAGE / sizeof(struct twheel_op);
	struct twheel_batch_args args, args_before;
	struct twheel_op *ops = (struct twheel_op *)batch_region;
	enum ptr_kind akind, okind;
	uint8_t *ap = pick_ptr(sizeof(args), &akind);
	uint8_t *opp = pick_ptr(sizeof(*ops), &okind);
	int wi = pick_idx(), fd = wfd[wi], err;
	const struct winfo *w = wheel_info(wi);
	uint32_t i, n;
	long ret;
	uint64_t t0, t1;

	/* Valid op arrays live in their own region, guarded at its end. */
	if (okind == P_VALID)
		opp = batch_region;
	args.ops = (uintptr_t)opp;
	args.count = rnd_below(&rs, 3) ? counts[rnd_below(&rs, 10)] : rnd_below(&rs, cap + 20);
	args.flags = rnd_below(&rs, 12) ? 0 : (uint32_t)rnd_next(&rs);
	n = args.count < cap ? args.count : cap;
	if (okind == P_VALID) {
		for (i = 0; i < n; i++)
			fill_op(&ops[i], w);
		memcpy(saved, batch_region, n * sizeof(*ops));
	}
	if (akind == P_VALID) {
		memcpy(ap, &args, sizeof(args));
		args_before = args;
	}
	t0 = wclock(w);
	ret = fuzz_ioctl(fd, TWHEEL_IOC_BATCH, ap);
	err = errno;
	t1 = wclock(w);
	calls++;
	if (refused_rdonly(w->accmode, ret, err, "BATCH")) {
		if (okind == P_VALID && memcmp(saved, batch_region, n * sizeof(*ops)))
			report(R_STRAY, "BATCH refused with EBADF wrote into its ops");
		return;
	}
	check_errno(ret, err, errs, 3, "BATCH");
	if (ret > (long)args.count || (okind == P_VALID && ret > (long)cap))
		report(R_ERRNO, "BATCH returned %ld for count %u", ret, args.count);
	if (akind == P_VALID && memcmp(ap, &args_before, sizeof(args)))
		report(R_STRAY, "BATCH wrote into its (input-only) argument");
	if (akind != P_VALID || okind != P_VALID)
		return;
	if (w->setup && (args.flags || args.count > INT_MAX) && (ret != -1 || err != EINVAL))
		report(R_ERRNO, "BATCH flags %#x count %u returned %ld, uapi says EINVAL",
		       args.flags, args.count, ret);
	for (i = 0; i < n; i++) {
		int done = ret > 0 && i < (uint32_t)ret;

		check_op(w, (struct twheel_op *)saved + i, &ops[i], done, 1, t0, t1, "BATCH op");
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
	int wi = pick_idx();
	const struct winfo *w = wheel_info(wi);
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
	ret = read(wfd[wi], p, size);
	err = errno;
	t1 = wclock(w);
	calls++;
	/* A wheel opened write-only is read as any such file: EBADF. */
	if (ret < 0 && err == EBADF && w->accmode == O_WRONLY)
		return;
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
		    ev[i].expired_ns > t1 || ev[i].deadline_ns + 2000000000ULL < start_ns ||
		    !on_grid(w, ev[i].deadline_ns))
			report(R_EVENT, "id %#llx deadline %llu expired %llu (tick %llu)",
			       (unsigned long long)ev[i].id, (unsigned long long)ev[i].deadline_ns,
			       (unsigned long long)ev[i].expired_ns, (unsigned long long)w->tick);
		if (i && ev[i].deadline_ns < ev[i - 1].deadline_ns)
			report(R_EVENT, "deadline %llu after %llu in one read",
			       (unsigned long long)ev[i].deadline_ns,
			       (unsigned long long)ev[i - 1].deadline_ns);
	}
}

/* ---- TWHEEL_IOC_REFRESH ---- */

static void do_refresh_ids(void)
{
	static const int errs[] = { EBADFD, EFAULT, EINVAL, ESTALE };
	static const uint32_t counts[] = { 0, 1, 2, 31, 32, 33, 64, 0x7fffffffU, 0x80000000U,
					   0xffffffffU };
	const uint32_t cap = BATCH_PAGES * PAGE / 8, room = 2 * PAGE / 8;
	const uint32_t known = TWHEEL_OPF_TIMEOUT | TWHEEL_OPF_ABSTIME | TWHEEL_OPF_ADD_IF_ABSENT;
	struct twheel_refresh_args args, *ua;
	enum ptr_kind akind, ikind, fkind;
	uint8_t *ap = pick_ptr(sizeof(args), &akind);
	uint64_t *idv = (uint64_t *)batch_region, *failed = (uint64_t *)fail_region, t0, t1;
	int wi = pick_idx(), err, inval = 0;
	const struct winfo *w = wheel_info(wi);
	uint32_t i, j, n, nf;
	long ret;

	memset(&args, 0, sizeof(args));
	args.count = rnd_below(&rs, 3) ? 1 + rnd_below(&rs, 40) : counts[rnd_below(&rs, 10)];
	args.flags = rnd_below(&rs, 10) ? rnd_below(&rs, 8) & known : (uint32_t)rnd_next(&rs);
	if (args.flags & TWHEEL_OPF_ABSTIME && rnd_below(&rs, 10))
		args.timeout_ns = pick_abstime(w);
	else if (args.flags & TWHEEL_OPF_TIMEOUT || !rnd_below(&rs, 10))
		args.timeout_ns = pick_timeout();
	args.pad = rnd_below(&rs, 20) ? 0 : (uint32_t)rnd_next(&rs);
	args.nr_failed = rnd_below(&rs, 20) ? 0 : (uint32_t)rnd_next(&rs);
	/* The ids: valid, running into the guard page, or a bad pointer. */
	ikind = pick_kind();
	if (ikind == P_STRADDLE)
		idv = (uint64_t *)(batch_region + BATCH_PAGES * PAGE) - rnd_below(&rs, 40);
	else if (ikind != P_VALID)
		idv = (uint64_t *)ptr_of_kind(ikind, 8);
	/* How many ids are there to read (a read-only page has junk ones). */
	n = ikind == P_VALID ? (args.count < cap ? args.count : cap) :
	    ikind == P_STRADDLE ? (uint32_t)((uint64_t *)(batch_region + BATCH_PAGES * PAGE) - idv) :
	    ikind == P_RO ? (uint32_t)((uint64_t *)(ro_page + PAGE) - idv) : 0;
	if (n > args.count)
		n = args.count;
	for (i = 0; i < n && ikind != P_RO; i++)
		idv[i] = pick_id();
	/* Junk ids on the read-only page may be refreshed, never added. */
	if (ikind == P_RO)
		args.flags &= ~TWHEEL_OPF_ADD_IF_ABSENT;
	/* The failures: none wanted (0), room, room into the guard page, or bad. */
	fkind = rnd_below(&rs, 4) ? pick_kind() : P_NULL;
	if (fkind == P_STRADDLE)
		failed = (uint64_t *)(fail_region + 2 * PAGE) - rnd_below(&rs, 40);
	else if (fkind != P_VALID)
		failed = (uint64_t *)ptr_of_kind(fkind, 8);
	if (fkind == P_VALID || fkind == P_STRADDLE) {
		fill_pattern(fail_region, 2 * PAGE);
		memcpy(saved, fail_region, 2 * PAGE);
	}
	args.ids = (uintptr_t)idv;
	args.failed = (uintptr_t)failed;
	ua = (struct twheel_refresh_args *)ap;
	if (akind == P_VALID) {
		fill_pattern(ap, CHECK_LEN);
		memcpy(ap, &args, sizeof(args));
		memcpy(saved + BATCH_PAGES * PAGE - CHECK_LEN, ap, CHECK_LEN);
	}
	t0 = wclock(w);
	ret = fuzz_ioctl(wfd[wi], TWHEEL_IOC_REFRESH, ap);
	err = errno;
	t1 = wclock(w);
	calls++;
	if (refused_rdonly(w->accmode, ret, err, "REFRESH")) {
		if (akind == P_VALID && memcmp(ap, saved + BATCH_PAGES * PAGE - CHECK_LEN, CHECK_LEN))
			report(R_STRAY, "REFRESH refused with EBADF wrote into its argument");
		return;
	}
	check_errno(ret, err, errs, 3, "REFRESH");
	if (!w->setup) {
		if (ret != -1 || err != EBADFD)
			report(R_ERRNO, "REFRESH before setup returned %ld errno %d, uapi says EBADFD",
			       ret, ret < 0 ? err : 0);
		return;
	}
	if (akind != P_VALID) {
		if (ret >= 0)
			report(R_ERRNO, "REFRESH with an unusable argument (%d) returned %ld", akind,
			       ret);
		return;
	}
	/* nr_failed is output only: any value in is ignored. */
	if (args.pad || args.count > INT_MAX || args.flags & ~known)
		inval = 1;
	else if (!(args.flags & (TWHEEL_OPF_TIMEOUT | TWHEEL_OPF_ABSTIME)))
		inval = args.timeout_ns != 0;
	else if (!(args.flags & TWHEEL_OPF_ABSTIME))
		inval = args.timeout_ns > w->max_timeout;
	else if (args.timeout_ns > t1 && args.timeout_ns - t1 > w->max_timeout)
		inval = 1;	/* too far ahead at the call's end, so at its start too */
	else if (args.timeout_ns > t0 && args.timeout_ns - t0 > w->max_timeout)
		return;		/* too far ahead at its start only: EINVAL or done */
	if (inval) {
		if (ret != -1 || err != EINVAL)
			report(R_ERRNO, "REFRESH flags %#x timeout %llu count %u pad %#x nr_failed %u returned %ld errno %d, uapi says EINVAL",
			       args.flags, (unsigned long long)args.timeout_ns, args.count, args.pad,
			       args.nr_failed, ret, ret < 0 ? err : 0);
		return;
	}
	if (ret < 0) {
		if (err != EFAULT || (ikind == P_VALID && args.count <= n &&
				      (fkind == P_VALID || fkind == P_NULL) && args.count <= room))
			report(R_ERRNO, "REFRESH of %u ids (ids kind %d, failed kind %d): errno %d",
			       args.count, ikind, fkind, err);
		if (memcmp(ap, saved + BATCH_PAGES * PAGE - CHECK_LEN, CHECK_LEN))
			report(R_STRAY, "REFRESH failed but changed its argument");
		return;
	}
	nf = ua->nr_failed;
	if ((uint64_t)ret > args.count || nf > ret ||
	    (ret > (long)n && (ikind == P_VALID || ikind == P_STRADDLE)) ||
	    (ret > 0 && ikind != P_VALID && ikind != P_STRADDLE && ikind != P_RO) ||
	    (ret < (long)args.count && ikind == P_VALID && args.count <= n &&
	     (fkind == P_NULL || (fkind == P_VALID && args.count <= room)))) {
		report(R_ERRNO, "REFRESH of %u ids (ids kind %d, failed kind %d) returned %ld, %u failed",
		       args.count, ikind, fkind, ret, nf);
		return;
	}
	{
		struct twheel_refresh_args b;

		memcpy(&b, saved + BATCH_PAGES * PAGE - CHECK_LEN, sizeof(b));
		b.nr_failed = ua->nr_failed;
		if (memcmp(&b, ua, sizeof(b)))
			report(R_STRAY, "REFRESH changed its argument beyond nr_failed");
	}
	if (fkind != P_VALID && fkind != P_STRADDLE)
		return;
	/* Failures: a subsequence of the ids processed, none of them live now. */
	for (i = 0, j = 0; i < nf; i++, j++) {
		struct twheel_op q;

		while (j < (uint32_t)ret && idv[j] != failed[i])
			j++;
		if (j == (uint32_t)ret) {
			report(R_OPFIELD, "REFRESH failure %u is %#llx, not one of the ids in order",
			       i, (unsigned long long)failed[i]);
			break;
		}
		op_init(&q, TWHEEL_OP_QUERY, failed[i], 0, 0);
		if (raw_op(wfd[wi], &q) == 0)
			report(R_OPFIELD, "REFRESH (flags %#x, timeout %llu at [%llu, %llu]) listed id %#llx as not refreshed, but it is live (deadline %llu)",
			       args.flags, (unsigned long long)args.timeout_ns,
			       (unsigned long long)t0, (unsigned long long)t1,
			       (unsigned long long)failed[i], (unsigned long long)q.deadline_ns);
		calls++;
	}
	/*
	 * Past the failures only the room for the @count ids may be written,
	 * and only with zeros (uapi: the room of each chunk is zeroed before
	 * the chunk is applied, so the chunk that stopped the call early may
	 * have had its room zeroed too); past that nothing.
	 */
	for (i = nf * 8; i < 2 * PAGE - ((uint8_t *)failed - fail_region); i++) {
		uint8_t a = ((uint8_t *)failed)[i], b = saved[(uint8_t *)failed - fail_region + i];

		if (a != b && (a || i >= (uint64_t)args.count * 8)) {
			report(R_STRAY, "REFRESH: byte %u of the failures changed to %#x (%u processed, %u failed)",
			       i, a, (unsigned)ret, nf);
			break;
		}
	}
	/* Failures echo the ids given: only ours can be told from kernel pointers. */
	if (ikind != P_RO)
		scan_kptr(saved + ((uint8_t *)failed - fail_region), (const uint8_t *)failed, nf * 8,
			  "REFRESH");
}

/* ---- TWHEEL_IOC_DUMP ---- */

/*
 * One dump entry of wheel @w: an id of @pool (or any, if NULL), a
 * plausible deadline on the grid, a slot the table has, pad 0.
 */
static int check_dump_entry(const struct winfo *w, const struct twheel_dump_entry *e,
			    uint64_t t1, const char *what)
{
	int bad = 0;

	if (e->pad) {
		report(R_DUMP, "%s: id %#llx pad %#x", what, (unsigned long long)e->id, e->pad);
		bad = 1;
	}
	if (e->slot != TWHEEL_SLOT_NONE && e->slot >= w->slots) {
		report(R_DUMP, "%s: id %#llx slot %#x on a table of %u slots", what,
		       (unsigned long long)e->id, e->slot, w->slots);
		bad = 1;
	}
	if (!on_grid(w, e->deadline_ns) || e->deadline_ns + 2000000000ULL < start_ns ||
	    e->deadline_ns > t1 + w->max_timeout + w->tick) {
		report(R_DUMP, "%s: id %#llx implausible deadline %llu (tick %llu)", what,
		       (unsigned long long)e->id, (unsigned long long)e->deadline_ns,
		       (unsigned long long)w->tick);
		bad = 1;
	}
	return bad;
}

static uint64_t pick_cursor(struct wstate *s, int *chained)
{
	unsigned int r = rnd_below(&rs, 100);

	*chained = 0;
	if (r < 45 && s->chain_on) {
		*chained = 1;
		return s->chain_cursor;
	}
	if (r < 70) {
		*chained = 1;
		s->chain_on = 1;
		s->chain_cursor = 0;
		s->chain_seen = 0;
		return 0;
	}
	switch (r % 6) {
	case 0: return TWHEEL_DUMP_END;
	case 1: return KEY_LIMIT - 1;
	case 2: return KEY_LIMIT + rnd_below(&rs, 4);
	case 3: return rnd_next(&rs);
	default: return rnd_next(&rs) >> 1;
	}
}

static void do_dump(void)
{
	static const int errs[] = { EBADFD, EFAULT, EINVAL, ESTALE };
	static const uint32_t counts[] = { 0, 1, 2, 15, 16, 17, 64, 0x7fffffffU, 0x80000000U,
					   0xffffffffU };
	const size_t esz = sizeof(struct twheel_dump_entry);
	const size_t room = 2 * NIDS;	/* a pool wheel lists at most NIDS ids */
	struct twheel_dump_args args, *ua;
	struct twheel_dump_entry *ent = (struct twheel_dump_entry *)batch_region;
	enum ptr_kind akind, ekind;
	uint8_t *ap = pick_ptr(sizeof(args), &akind);
	int wi = pick_idx(), err, chained, j;
	const struct winfo *w = wheel_info(wi);
	struct wstate *s = wstate_of(w->serial);
	uint64_t seen = 0, t1;
	size_t limit = room * esz + CHECK_LEN;
	long ret, i, n;

	ekind = pick_kind();
	memset(&args, 0, sizeof(args));
	args.cursor = pick_cursor(s, &chained);
	args.count = rnd_below(&rs, 3) ? 1 + rnd_below(&rs, 20) : counts[rnd_below(&rs, 10)];
	args.flags = rnd_below(&rs, 15) ? 0 : (uint32_t)rnd_next(&rs);
	switch (ekind) {
	case P_VALID:
		break;
	case P_STRADDLE:
		/* The array runs into the guard page after a few whole entries. */
		ent = (struct twheel_dump_entry *)(batch_region + BATCH_PAGES * PAGE -
						   esz * rnd_below(&rs, 40) - rnd_below(&rs, esz));
		limit = batch_region + BATCH_PAGES * PAGE - (uint8_t *)ent;
		break;
	default:
		ent = (struct twheel_dump_entry *)ptr_of_kind(ekind, esz);
		break;
	}
	if (ekind == P_VALID || ekind == P_STRADDLE) {
		fill_pattern((uint8_t *)ent, limit);
		memcpy(saved, ent, limit);
	}
	args.entries = (uintptr_t)ent;
	ua = (struct twheel_dump_args *)ap;
	if (akind == P_VALID) {
		fill_pattern(ap, CHECK_LEN);
		memcpy(ap, &args, sizeof(args));
		memcpy(saved + BATCH_PAGES * PAGE - CHECK_LEN, ap, CHECK_LEN);
	}
	ret = fuzz_ioctl(wfd[wi], TWHEEL_IOC_DUMP, ap);
	err = errno;
	t1 = wclock(w);
	calls++;
	check_errno(ret, err, errs, 4, "DUMP");
	if (!w->setup) {
		if (ret != -1 || err != EBADFD)
			report(R_DUMP, "DUMP before setup returned %ld errno %d, uapi says EBADFD",
			       ret, ret < 0 ? err : 0);
		return;
	}
	if (akind != P_VALID) {
		/* Unreadable, or (read-only) its cursor cannot be written back. */
		if (ret >= 0)
			report(R_DUMP, "DUMP with an unusable argument (%d) returned %ld", akind, ret);
		return;
	}
	if (ret < 0) {
		if (memcmp(ap, saved + BATCH_PAGES * PAGE - CHECK_LEN, CHECK_LEN))
			report(R_STRAY, "DUMP failed but changed its argument");
	} else {
		struct twheel_dump_args b;

		memcpy(&b, saved + BATCH_PAGES * PAGE - CHECK_LEN, sizeof(b));
		b.cursor = ua->cursor;
		if (memcmp(&b, ua, sizeof(b)) || memcmp(ap + sizeof(b),
		    saved + BATCH_PAGES * PAGE - CHECK_LEN + sizeof(b), CHECK_LEN - sizeof(b)))
			report(R_STRAY, "DUMP changed its argument beyond the cursor");
	}
	if (args.flags || !args.count || args.count > INT_MAX ||
	    (args.cursor >= KEY_LIMIT && args.cursor != TWHEEL_DUMP_END)) {
		if (ret != -1 || err != EINVAL)
			report(R_DUMP, "DUMP flags %#x count %u cursor %#llx returned %ld errno %d, uapi says EINVAL",
			       args.flags, args.count, (unsigned long long)args.cursor, ret,
			       ret < 0 ? err : 0);
		if (chained)
			s->chain_on = 0;
		return;
	}
	if (args.cursor && args.cursor != TWHEEL_DUMP_END && CURSOR_KEYS(args.cursor)) {
		if (ret != -1 || err != ESTALE)
			report(R_DUMP, "DUMP from cursor %#llx of another key returned %ld errno %d, uapi says ESTALE",
			       (unsigned long long)args.cursor, ret, ret < 0 ? err : 0);
		if (chained)
			s->chain_on = 0;
		return;
	}
	if (ret < 0) {
		/* EFAULT only: entries that cannot be written. */
		if (err != EFAULT || ekind == P_VALID)
			report(R_DUMP, "DUMP of count %u into a usable array: errno %d", args.count,
			       err);
		return;
	}
	if (ret > (long)args.count || (ekind != P_VALID && ekind != P_STRADDLE && ret)) {
		report(R_DUMP, "DUMP returned %ld for count %u, array kind %d", ret, args.count,
		       ekind);
		return;
	}
	n = ret;
	if (args.cursor == TWHEEL_DUMP_END && (n || ua->cursor != TWHEEL_DUMP_END))
		report(R_DUMP, "DUMP from the end returned %ld, cursor %#llx", n,
		       (unsigned long long)ua->cursor);
	if (ua->cursor != TWHEEL_DUMP_END &&
	    (ua->cursor >= KEY_LIMIT || CURSOR_KEYS(ua->cursor) || ua->cursor < args.cursor ||
	     (n && ua->cursor == args.cursor)))
		report(R_DUMP, "DUMP moved the cursor from %#llx to %#llx listing %ld",
		       (unsigned long long)args.cursor, (unsigned long long)ua->cursor, n);
	n_dumps_ok++;
	n_dump_entries += n;
	/* Only the counted entries are written; a cut chunk may show at the guard. */
	if (ekind == P_VALID && memcmp((uint8_t *)ent + n * esz, saved + n * esz, limit - n * esz))
		report(R_STRAY, "DUMP wrote past the %ld entries it returned", n);
	scan_kptr(saved, (const uint8_t *)ent, n * esz, "DUMP");
	for (i = 0; i < n; i++) {
		j = pool_index(ent[i].id);
		if (j < 0) {
			report(R_DUMP, "DUMP listed id %#llx, which nobody added",
			       (unsigned long long)ent[i].id);
			continue;
		}
		check_dump_entry(w, &ent[i], t1, "DUMP");
		if (seen & (1ULL << j))
			report(R_DUMP, "DUMP listed id %#llx twice in one call",
			       (unsigned long long)ent[i].id);
		if (chained && (s->chain_seen & (1ULL << j)))
			report(R_DUMP, "DUMP listed id %#llx again in one cursor chain",
			       (unsigned long long)ent[i].id);
		seen |= 1ULL << j;
	}
	if (chained) {
		s->chain_seen |= seen;
		s->chain_cursor = ua->cursor;
		s->chain_on = ua->cursor != TWHEEL_DUMP_END;
	}
}

/* ---- touch tables: mappings and the stamp writer ---- */

/*
 * Stamps the writer and the fuzzer store: 0, ~0, times of this run
 * (present, near past and future, an hour ahead, 10 s back), garbage,
 * and markers that name the wheel whose table they were stored in. A
 * table holding anything else, or another wheel's marker, was written
 * by someone else.
 */
static const uint64_t garbage[] = {
	~0ULL, 1, 1ULL << 63, 1ULL << 62, 0xdeadbeefdeadbeefULL, INT64_MAX,
	0x8000000000000001ULL, ~0ULL - 1,
};
#define MARK_TAG	0x4d41524bULL	/* "MARK" in the top half */
#define NGARBAGE	(sizeof(garbage) / sizeof(garbage[0]))

static uint64_t stamp_for(uint64_t *r, uint64_t serial)
{
	uint64_t now = mono_ns();

	switch (rnd_below(r, 12)) {
	case 0: return 0;
	case 1: return now;
	case 2: return now + rnd_below(r, 50 * NSEC_PER_MSEC);
	case 3: return now + 3600 * NSEC_PER_SEC;
	case 4: return garbage[rnd_below(r, NGARBAGE)];
	case 5: return MARK_TAG << 32 | (serial & 0xffffffff);
	case 6: return now > 10 * NSEC_PER_SEC ? now - 10 * NSEC_PER_SEC : 0;
	default: return now - rnd_below(r, now < 20 * NSEC_PER_MSEC ? now : 20 * NSEC_PER_MSEC);
	}
}

static int stamp_ok(uint64_t v, uint64_t serial)
{
	size_t i;

	if (!v)
		return 1;
	for (i = 0; i < NGARBAGE; i++)
		if (v == garbage[i])
			return 1;
	if (v >> 32 == MARK_TAG)
		return (v & 0xffffffff) == (serial & 0xffffffff);
	return v >= time_lo && v <= mono_ns() + 7200 * NSEC_PER_SEC;
}

/*
 * Mappings the writer stores into live in one reserved region, one
 * TMAP_BYTES sub-region each, PROT_NONE while unused: a store through a
 * stale pointer then faults instead of landing in other memory. Entry 0
 * is the probe wheel's table, mapped for the whole run.
 *
 * The main thread maps: fields, then live = 1 (release). It unmaps:
 * live = 0, gen + 1, then munmap and re-reserve; the writer's stores may
 * race that and fault, which is expected only there (a changed gen or
 * live 0 in the fault handler). It maps a sub-region again only once the
 * writer has left it (writer_at), so a store lands in the mapping the
 * writer looked up or faults.
 */
#define NTMAPS		8
#define TMAP_BYTES	(256 * PAGE)
struct tmap {
	atomic_int live;
	atomic_ulong gen;
	size_t len;
	uint64_t serial;
	int writable;
	int wheel_map;			/* a mapping of the wheel, not registered memory */
};
static uint8_t *tmap_region;
static struct tmap tmaps[NTMAPS];
static atomic_int writer_at = -1;
static atomic_int writer_stop;
static pthread_t writer_th;
static int writer_running;

/* What the writer saw; read by the main thread after joining it. */
static uint64_t w_stores, w_loads, w_faults_expected, w_faults_bad, w_values_bad;
static uint64_t w_bad_addr, w_bad_value, w_bad_serial;
static int w_bad_sig;

static __thread int in_writer;
static sigjmp_buf writer_jmp;
static volatile sig_atomic_t writer_armed;
static volatile int writer_idx;
static volatile unsigned long writer_gen;

static uint8_t *tmap_addr(int i)
{
	return tmap_region + (size_t)i * TMAP_BYTES;
}

static void tmap_reserve(int i)
{
	if (mmap(tmap_addr(i), TMAP_BYTES, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) == MAP_FAILED) {
		perror("fuzz-abi: re-reserving a table region");
		exit(2);
	}
}

/* Unmap entry @i under the writer's feet, maybe in two steps. */
static void tmap_drop(int i)
{
	struct tmap *m = &tmaps[i];
	size_t pages = (m->len + PAGE - 1) / PAGE;

	if (!atomic_load(&m->live))
		return;
	atomic_store(&m->live, 0);
	atomic_fetch_add(&m->gen, 1);
	if (pages > 1 && rnd_below(&rs, 3) == 0) {
		/* Split the mapping first: its pages go in two unmaps. */
		size_t k = 1 + rnd_below(&rs, pages - 1);

		if (munmap(tmap_addr(i) + k * PAGE, (pages - k) * PAGE))
			report(R_MMAP, "munmap of the tail of a table mapping: %s", strerror(errno));
		calls++;
	}
	if (munmap(tmap_addr(i), pages * PAGE))
		report(R_MMAP, "munmap of a table mapping: %s", strerror(errno));
	calls++;
	tmap_reserve(i);
}

static void tmap_wait_writer(int i)
{
	if (is_child || !writer_running)
		return;
	while (atomic_load(&writer_at) == i)
		sched_yield();
}

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr, base = (uintptr_t)tmap_region;
	int expected = 0;

	(void)uc;
	if (!in_writer || !writer_armed) {
		/* Not a race of the writer's: die of it. */
		signal(sig, SIG_DFL);
		return;
	}
	if (a >= base && a < base + NTMAPS * TMAP_BYTES &&
	    (int)((a - base) / TMAP_BYTES) == writer_idx) {
		struct tmap *m = &tmaps[writer_idx];

		expected = atomic_load(&m->gen) != writer_gen || !atomic_load(&m->live);
	}
	if (expected) {
		w_faults_expected++;
	} else if (!w_faults_bad++) {
		w_bad_addr = a;
		w_bad_sig = sig;
	}
	writer_armed = 0;
	siglongjmp(writer_jmp, 1);
}

/* Stores and loads into mapped tables, all the time, racing munmap. */
static void *writer_main(void *arg)
{
	static uint64_t r = 0x5eed5eedULL;	/* static: kept across siglongjmp */

	(void)arg;
	in_writer = 1;
	while (!atomic_load(&writer_stop)) {
		int i = rnd_below(&r, NTMAPS), k;
		struct tmap *m;
		unsigned long gen;
		uint64_t serial, *base;
		size_t nslots;
		int writable;

		/* The probe's table (0) a quarter of the time, else one of the others mapped. */
		for (k = 0; k < NTMAPS && (i == 0 || !atomic_load(&tmaps[i].live)); k++)
			i = 1 + (i + rnd_below(&r, NTMAPS - 1)) % (NTMAPS - 1);
		if (k == NTMAPS || rnd_below(&r, 4) == 0)
			i = 0;
		m = &tmaps[i];
		atomic_store(&writer_at, i);
		gen = atomic_load(&m->gen);
		if (!atomic_load_explicit(&m->live, memory_order_acquire)) {
			atomic_store(&writer_at, -1);
			sched_yield();
			continue;
		}
		nslots = m->len / 8;
		serial = m->serial;
		writable = m->writable;
		if (atomic_load(&m->gen) != gen || !nslots) {
			atomic_store(&writer_at, -1);
			continue;
		}
		base = (uint64_t *)tmap_addr(i);
		writer_idx = i;
		writer_gen = gen;
		if (sigsetjmp(writer_jmp, 1) == 0) {
			writer_armed = 1;
			for (k = 0; k < 256; k++) {
				uint64_t *p = base + rnd_below(&r, nslots);

				/*
				 * Pause inside the table now and then, so that
				 * an munmap may come between two stores even
				 * when the VM runs one thread at a time.
				 */
				if (k == 128 && rnd_below(&r, 4) == 0)
					sleep_ns(200000);
				if (writable && rnd_below(&r, 3)) {
					__atomic_store_n(p, stamp_for(&r, serial), __ATOMIC_RELAXED);
					w_stores++;
				} else {
					uint64_t v = __atomic_load_n(p, __ATOMIC_RELAXED);

					w_loads++;
					if (!stamp_ok(v, serial) && !w_values_bad++) {
						w_bad_value = v;
						w_bad_serial = serial;
					}
				}
			}
			writer_armed = 0;
		}
		atomic_store(&writer_at, -1);
		/* Share the CPU; now and then leave it to the main thread for a while. */
		if (rnd_below(&r, 16))
			sched_yield();
		else
			sleep_ns(1000000);
	}
	return NULL;
}

/* The main thread's (or a child's) own stores and checks in a live mapping. */
static void do_touch(void)
{
	int i = rnd_below(&rs, NTMAPS), k;
	struct tmap *m = &tmaps[i];
	uint64_t *base = (uint64_t *)tmap_addr(i);
	size_t nslots = m->len / 8;

	if (!atomic_load(&m->live) || !nslots)
		return;
	for (k = 0; k < 32; k++) {
		uint64_t *p = base + rnd_below(&rs, nslots), v;

		if (m->writable && rnd_below(&rs, 2)) {
			__atomic_store_n(p, stamp_for(&rs, m->serial), __ATOMIC_RELAXED);
			continue;
		}
		v = __atomic_load_n(p, __ATOMIC_RELAXED);
		if (!stamp_ok(v, m->serial))
			report(R_TABLE, "table of wheel %llu, slot %zu holds %#llx, which nobody stored there",
			       (unsigned long long)m->serial, (size_t)(p - base), (unsigned long long)v);
	}
	calls++;
}

/*
 * Wheels set up by this process since its last fork and never mapped: the
 * first mapping must show a table of zeros.
 */
static uint64_t pristine[16];

static void pristine_add(uint64_t serial)
{
	pristine[serial % 16] = serial;
}

static int pristine_take(uint64_t serial)
{
	if (pristine[serial % 16] != serial)
		return 0;
	pristine[serial % 16] = 0;
	return 1;
}

/*
 * What mmap(2) of a wheel must answer, as mmap(2) and the uapi document
 * it, in the order the kernel checks: 0 for success, else the errno.
 * *@alt: another errno the kernel may give instead (PROT_EXEC on a noexec
 * /dev), or 0.
 */
static int mmap_expect(const struct winfo *w, size_t len, uint64_t off, int prot, int flags,
		       int occupied, int *alt)
{
	int type = flags & MAP_TYPE, shared = type == MAP_SHARED || type == MAP_SHARED_VALIDATE;
	size_t table = w->slots ? (w->slots + SLOTS_PER_PAGE - 1) / SLOTS_PER_PAGE * PAGE : 0;

	*alt = 0;
	if (off & (PAGE - 1))
		return EINVAL;
	if (flags & MAP_HUGETLB)
		return EINVAL;
	if (!len)
		return EINVAL;
	if (len > (1ULL << 46))
		return ENOMEM;		/* no room in the address space, or overflow */
	if ((flags & MAP_FIXED_NOREPLACE) && occupied)
		return EEXIST;
	if (!shared && type != MAP_PRIVATE)
		return EINVAL;
	if (type == MAP_SHARED_VALIDATE && (flags & MAP_SYNC))
		return EOPNOTSUPP;
	if (shared && (prot & PROT_WRITE) && w->accmode == O_RDONLY)
		return EACCES;
	if (w->accmode == O_WRONLY)
		return EACCES;
	if (prot & PROT_EXEC && dev_noexec)
		return EPERM;
	if (flags & MAP_GROWSDOWN)
		return EINVAL;
	/* The device's own rules (uapi, "Touch table"). */
	if (!w->setup)
		return EBADFD;
	if (!w->slots || w->touch_user)
		return ENODEV;
	if (off || len > table || !shared || prot & PROT_EXEC)
		return EINVAL;
	return 0;
}

/* Check the contents of a fresh mapping of @len bytes of wheel @w. */
static void check_table(const struct winfo *w, const uint64_t *p, size_t len, int pristine_now,
			const char *what)
{
	size_t i;

	for (i = 0; i < len / 8; i++) {
		if (pristine_now ? p[i] != 0 : !stamp_ok(p[i], w->serial)) {
			report(R_TABLE, "%s: wheel %llu slot %zu holds %#llx%s", what,
			       (unsigned long long)w->serial, i, (unsigned long long)p[i],
			       pristine_now ? " in a new table (uapi: 0 at setup)" :
			       ", which nobody stored there");
			return;
		}
	}
}

/*
 * The wheels whose tables the parent's writer may be storing into while
 * a forked child runs: those it had mapped at the fork (the parent waits
 * for the child, so that set holds still). The child's own tmaps[] drift
 * from it as the child unmaps and maps, but the pages are the same.
 */
static uint64_t parent_writer_serials[NTMAPS];
static int parent_writer_maps[NTMAPS];

/*
 * Whether a writer may be storing into wheel @serial's table now: this
 * process's, or in a forked child its parent's.
 */
static int writer_maps(uint64_t serial)
{
	int i;

	for (i = 0; i < NTMAPS; i++)
		if ((atomic_load(&tmaps[i].live) && tmaps[i].serial == serial) ||
		    (is_child && parent_writer_maps[i] && parent_writer_serials[i] == serial))
			return 1;
	return 0;
}

/*
 * A throwaway mapping, no writer on it: stores through one mapping are
 * seen through another, MADV_DONTNEED keeps them (the pages are the
 * table's, not copies), mremap cannot grow it, mprotect cannot make it
 * executable, a shrink is fine.
 */
static void mm_games(const struct winfo *w, int fd, uint8_t *p, size_t len, int prot)
{
	size_t pages = (len + PAGE - 1) / PAGE, k = rnd_below(&rs, len / 8);
	uint64_t mark = MARK_TAG << 32 | (w->serial & 0xffffffff), *q;
	void *r;

	if (mprotect(p, PAGE, PROT_READ | PROT_EXEC) == 0 || errno != EACCES)
		report(R_MMAP, "mprotect(PROT_EXEC) of a table mapping: %s, uapi: not executable",
		       strerror(errno));
	r = mremap(p, pages * PAGE, (pages + 1) * PAGE, MREMAP_MAYMOVE);
	if (r != MAP_FAILED || errno != EFAULT) {
		report(R_MMAP, "mremap growing a table mapping: %s", r == MAP_FAILED ?
		       strerror(errno) : "succeeded");
		if (r != MAP_FAILED)
			munmap(r, (pages + 1) * PAGE);
		return;
	}
	calls += 2;
	if (!(prot & PROT_WRITE) || writer_maps(w->serial) || w->accmode != O_RDWR)
		return;
	q = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	calls++;
	if (q == MAP_FAILED) {
		report(R_MMAP, "a second mapping of a table: %s", strerror(errno));
		return;
	}
	k %= SLOTS_PER_PAGE;
	if (k * 8 >= len)
		k = 0;
	__atomic_store_n((uint64_t *)p + k, mark, __ATOMIC_RELAXED);
	if (q[k] != mark)
		report(R_TABLE, "a store through one mapping of wheel %llu is not seen through another",
		       (unsigned long long)w->serial);
	if (madvise(p, pages * PAGE, MADV_DONTNEED))
		report(R_MMAP, "madvise(MADV_DONTNEED) of a table mapping: %s", strerror(errno));
	if (((uint64_t *)p)[k] != mark)
		report(R_TABLE, "wheel %llu: a stamp is gone after MADV_DONTNEED (%#llx)",
		       (unsigned long long)w->serial, (unsigned long long)((uint64_t *)p)[k]);
	if (pages > 1 && mremap(p, pages * PAGE, PAGE, 0) != p)
		report(R_MMAP, "mremap shrinking a table mapping: %s", strerror(errno));
	calls += 3;
	munmap(q, PAGE);
}

/*
 * mmap a random wheel with random length, offset, protection and flags,
 * anywhere or into a sub-region of the writer's; check the outcome
 * against mmap_expect(). A mapping in a sub-region is left to the writer.
 */
static void do_mmap(void)
{
	static const int prots[] = { PROT_READ, PROT_WRITE, PROT_NONE, PROT_READ | PROT_EXEC,
				     PROT_READ | PROT_WRITE | PROT_EXEC, PROT_EXEC };
	static const int types[] = { MAP_SHARED_VALIDATE, MAP_PRIVATE, 0, 0x0f, MAP_SHARED };
	int wi = pick_idx(), fd = wfd[wi], prot, flags, ti = 0, occupied = 0, expect, alt, err;
	const struct winfo *w = wheel_info(wi);
	size_t table = w->slots ? (w->slots + SLOTS_PER_PAGE - 1) / SLOTS_PER_PAGE * PAGE : PAGE;
	size_t len;
	uint64_t off = 0;
	uint8_t *addr = NULL, *p;
	unsigned int r;

	switch (rnd_below(&rs, 12)) {
	case 0: len = 0; break;
	case 1: len = 1 + rnd_below(&rs, PAGE); break;
	case 2: len = w->slots * 8ULL; break;
	case 3: len = table + PAGE; break;
	case 4: len = table + 1; break;
	case 5: len = rnd_below(&rs, 2) ? SIZE_MAX - rnd_below(&rs, PAGE) : 1ULL << 50; break;
	case 6: len = 1 + rnd_below(&rs, 4 * PAGE); break;
	default: len = table; break;
	}
	r = rnd_below(&rs, 100);
	if (r >= 90)
		off = r < 94 ? PAGE : r < 97 ? PAGE * (1 + rnd_below(&rs, 64)) : 1 + rnd_below(&rs, PAGE - 1);
	prot = rnd_below(&rs, 10) < 7 ? PROT_READ | PROT_WRITE : prots[rnd_below(&rs, 6)];
	r = rnd_below(&rs, 100);
	flags = r < 80 ? MAP_SHARED : types[rnd_below(&rs, 5)];
	r = rnd_below(&rs, 100);
	if (r < 8)
		flags |= MAP_POPULATE;
	else if (r < 12)
		flags |= MAP_NORESERVE;
	else if (r < 14)
		flags |= MAP_HUGETLB;
	else if (r < 17)
		flags |= MAP_SYNC;
	else if (r < 18)
		flags |= MAP_GROWSDOWN;
	else if (r < 20 && len <= 16 * PAGE)
		flags |= MAP_LOCKED;
	/* Into a sub-region of the writer's (not the probe's), or anywhere. */
	if (len && len <= TMAP_BYTES && rnd_below(&rs, 10) < 3) {
		ti = 1 + rnd_below(&rs, NTMAPS - 1);
		tmap_drop(ti);
		tmap_wait_writer(ti);
		addr = tmap_addr(ti);
		r = rnd_below(&rs, 10);
		if (r < 7 || (flags & MAP_TYPE) == MAP_SHARED_VALIDATE) {
			flags |= MAP_FIXED;
		} else if (r < 8) {
			flags |= MAP_FIXED_NOREPLACE;
			occupied = 1;
		} else {
			flags |= MAP_FIXED_NOREPLACE;
			munmap(addr, TMAP_BYTES);
		}
	}
	expect = mmap_expect(w, len, off, prot, flags, occupied, &alt);
	p = mmap(addr, len, prot, flags, fd, off);
	err = errno;
	calls++;
	if (p == MAP_FAILED) {
		n_maps_refused++;
		if (expect == 0 || (err != expect && err != alt))
			report(R_MMAP, "wheel %s%s (table %u slots, fd mode %d): mmap len %zu off %#llx prot %#x flags %#x: %s, expected %s",
			       w->setup ? "set up" : "not set up",
			       w->touch_user ? " with a registered table" : w->slots ? " with a table" : "",
			       w->slots, w->accmode, len, (unsigned long long)off, prot, flags,
			       strerror(err), expect ? strerror(expect) : "success");
		if (ti)
			tmap_reserve(ti);
		return;
	}
	n_maps_ok++;
	if (expect)
		report(R_MMAP, "wheel %s%s (table %u slots, fd mode %d): mmap len %zu off %#llx prot %#x flags %#x succeeded, expected %s",
		       w->setup ? "set up" : "not set up",
		       w->touch_user ? " with a registered table" : w->slots ? " with a table" : "", w->slots,
		       w->accmode, len, (unsigned long long)off, prot, flags, strerror(expect));
	if (addr && p != addr) {
		report(R_MMAP, "mmap at a fixed address returned another one");
		munmap(p, len);
		tmap_reserve(ti);
		return;
	}
	if (expect) {
		munmap(p, len);
		if (ti)
			tmap_reserve(ti);
		return;
	}
	if (prot & (PROT_READ | PROT_WRITE))
		check_table(w, (const uint64_t *)p, len, pristine_take(w->serial), "new mapping");
	if (ti) {
		struct tmap *m = &tmaps[ti];

		m->len = len;
		m->serial = w->serial;
		m->writable = !!(prot & PROT_WRITE);
		m->wheel_map = 1;
		atomic_store_explicit(&m->live, prot & (PROT_READ | PROT_WRITE) ? 1 : 0,
				      memory_order_release);
		if (!atomic_load(&m->live)) {
			munmap(p, len);
			tmap_reserve(ti);
		}
		return;
	}
	if (prot & (PROT_READ | PROT_WRITE))
		mm_games(w, fd, p, len, prot);
	munmap(p, len);
}

/* A clean read-write mapping of wheel @wi's table into sub-region @ti, for the writer. */
static void tmap_map(int wi, int ti)
{
	const struct winfo *w = wheel_info(wi);
	size_t table, len;
	uint8_t *p;

	if (!w->slots || w->touch_user || w->accmode != O_RDWR)
		return;
	table = (w->slots + SLOTS_PER_PAGE - 1) / SLOTS_PER_PAGE * PAGE;
	len = table < TMAP_BYTES ? table : TMAP_BYTES;
	if (rnd_below(&rs, 3) == 0)
		len = 1 + rnd_below(&rs, len);
	tmap_drop(ti);
	tmap_wait_writer(ti);
	p = mmap(tmap_addr(ti), len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, wfd[wi], 0);
	calls++;
	if (p == MAP_FAILED) {
		report(R_MMAP, "mmap of a table of %u slots, len %zu: %s", w->slots, len,
		       strerror(errno));
		tmap_reserve(ti);
		return;
	}
	n_maps_ok++;
	check_table(w, (const uint64_t *)p, len, pristine_take(w->serial), "new mapping");
	tmaps[ti].len = len;
	tmaps[ti].serial = w->serial;
	tmaps[ti].writable = 1;
	tmaps[ti].wheel_map = 1;
	atomic_store_explicit(&tmaps[ti].live, 1, memory_order_release);
}

/*
 * Unmap a table under the writer, most often the one it is storing into
 * right now, and mostly map another wheel's table there.
 */
static void do_remap(void)
{
	uint64_t until = mono_ns() + 5 * NSEC_PER_MSEC;
	int i = -1, wait = !is_child && writer_running && rnd_below(&rs, 4);

	/* Catch the writer in a table, for a while at most. */
	if (wait)
		tmap_map(pick_idx(), 1 + rnd_below(&rs, NTMAPS - 1));
	while (wait && mono_ns() < until) {
		i = atomic_load(&writer_at);
		if (i > 0 && atomic_load(&tmaps[i].live))
			break;
		i = -1;
		/* The writer may share this CPU: let it run. */
		sleep_ns(50000);
	}
	if (i > 0)
		n_races++;
	else
		i = 1 + rnd_below(&rs, NTMAPS - 1);
	tmap_drop(i);
	if (rnd_below(&rs, 10) < 7)
		tmap_map(pick_idx(), i);
}

/* ---- registered tables: TWHEEL_IOC_TOUCH_REGISTER ---- */

/*
 * Memory mapped anywhere is a page longer than asked for, so that it never
 * lands in the one-page hole at `unmapped`, which must stay unmapped.
 */
#define ANYWHERE_LEN(len)	((len) + PAGE)

/*
 * Fresh anonymous memory of @len bytes (whole pages) for a table of wheel
 * @serial, at sub-region @ti of the writer's if @ti is not 0 (else
 * ANYWHERE_LEN(@len) anywhere); now and then with stamps in it already.
 * Private (which REGISTER refuses) one time in four if @private is not
 * NULL, which then says which it is; else shared. MAP_FAILED if none.
 */
static uint64_t *table_memory(size_t len, int ti, uint64_t serial, int *private)
{
	int type = private && !rnd_below(&rs, 4) ? MAP_PRIVATE : MAP_SHARED, k;
	uint64_t *t;

	if (private)
		*private = type == MAP_PRIVATE;

	if (ti) {
		tmap_drop(ti);
		tmap_wait_writer(ti);
	}
	t = mmap(ti ? tmap_addr(ti) : NULL, ti ? len : ANYWHERE_LEN(len), PROT_READ | PROT_WRITE,
		 type | MAP_ANONYMOUS | (ti ? MAP_FIXED : 0), -1, 0);
	calls++;
	if (t == MAP_FAILED) {
		if (ti)
			tmap_reserve(ti);
		return t;
	}
	if (rnd_below(&rs, 2))
		for (k = 0; k < 64; k++)
			t[rnd_below(&rs, len / 8)] = stamp_for(&rs, serial);
	return t;
}

/* Give the table of @slots slots registered from sub-region @ti to the writer. */
static void tmap_give(int ti, uint32_t slots, uint64_t serial)
{
	tmaps[ti].len = (size_t)slots * 8;
	tmaps[ti].serial = serial;
	tmaps[ti].writable = 1;
	tmaps[ti].wheel_map = 0;
	atomic_store_explicit(&tmaps[ti].live, 1, memory_order_release);
}

/* Where a table to register is: the kinds of do_touch_register(). */
enum { T_GOOD, T_MISALIGNED, T_NULL, T_UNMAPPED, T_RO, T_SHORT, T_KERNEL, T_NONCANON,
       T_WHEEL_MAP, T_NR };

/*
 * Register a table for a random wheel, with mutated arguments, and check
 * the answer against the uapi: EBADF on O_RDONLY, EBADFD before setup,
 * EFAULT for an argument that cannot be read; EINVAL for flags, a count
 * other than the wheel's touch_slots or a wheel without
 * TWHEEL_SETUPF_TOUCH_USER, then EBUSY once registered; then EINVAL for
 * an address not page-aligned or a private mapping, EFAULT for memory that cannot be pinned
 * for writing (unmapped, read-only, partly PROT_NONE), either for NULL,
 * kernel and non-canonical addresses, 0, EFAULT or EINVAL for another
 * wheel's mapped table (EINVAL: the range runs on into the private
 * reserve of its sub-region, or the writer put that reserve there). Nothing is written back; after a success fdinfo says
 * registered, and a table in a sub-region goes to the writer.
 */
static void do_touch_register(void)
{
	static const int errs[] = { EBADFD, EFAULT, EINVAL, EBUSY, ENOMEM };
	static const uint64_t kaddr[] = { 0xffff888000000000ULL, 0xffffffff81000000ULL,
					  0xffffffffffffff00ULL };
	struct twheel_touch_register_args args;
	enum ptr_kind akind;
	uint8_t *ap = pick_ptr(sizeof(args), &akind);
	int wi = pick_idx(), ti = 0, tkind, err, expect, alt = ENOMEM, alt2 = 0, k, private = 0;
	const struct winfo *w = wheel_info(wi);
	uint64_t *t = MAP_FAILED, serial = w->serial;
	size_t len;
	long ret;

	memset(&args, 0, sizeof(args));
	args.slots = w->slots;
	switch (rnd_below(&rs, 12)) {
	case 0: args.slots++; break;
	case 1: args.slots--; break;
	case 2: args.slots = rnd_below(&rs, 2) ? 0 : (uint32_t)rnd_next(&rs); break;
	case 3: args.flags = (uint32_t)rnd_next(&rs) | 1U << rnd_below(&rs, 32); break;
	}
	len = ((uint64_t)args.slots * 8 + PAGE - 1) / PAGE * PAGE;
	if (!len)
		len = PAGE;
	tkind = rnd_below(&rs, 100) < 60 ? T_GOOD : 1 + (int)rnd_below(&rs, T_NR - 1);
	/* No memory for huge tables: only addresses that fail at the first page. */
	if (len > 64 * TMAP_BYTES && (tkind == T_GOOD || tkind == T_RO || tkind == T_SHORT ||
				      tkind == T_WHEEL_MAP))
		tkind = T_UNMAPPED;
	switch (tkind) {
	case T_GOOD:
		if (len <= TMAP_BYTES && rnd_below(&rs, 2))
			ti = 1 + rnd_below(&rs, NTMAPS - 1);
		t = table_memory(len, ti, serial, &private);
		if (t == MAP_FAILED)
			return;
		args.addr = (uintptr_t)t;
		break;
	case T_MISALIGNED:
		args.addr = (uintptr_t)arena + 8 * (1 + rnd_below(&rs, SLOTS_PER_PAGE - 1));
		break;
	case T_NULL:
		break;
	case T_UNMAPPED:
		args.addr = (uintptr_t)unmapped;
		break;
	case T_RO:
		t = mmap(NULL, ANYWHERE_LEN(len), PROT_READ, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (t == MAP_FAILED)
			return;
		args.addr = (uintptr_t)t;
		break;
	case T_SHORT:
		/* The last page (the only one, for a small table) is PROT_NONE. */
		t = table_memory(len, 0, serial, &private);
		if (t == MAP_FAILED)
			return;
		mprotect((uint8_t *)t + len - PAGE, PAGE, PROT_NONE);
		args.addr = (uintptr_t)t;
		break;
	case T_KERNEL:
		args.addr = kaddr[rnd_below(&rs, 3)];
		break;
	case T_NONCANON:
		args.addr = 0x0000800000000000ULL + PAGE * rnd_below(&rs, 1 << 20);
		break;
	case T_WHEEL_MAP:
		/* Another wheel's mapped table, in a sub-region of the writer's. */
		for (k = 1; k < NTMAPS && !(atomic_load(&tmaps[k].live) && tmaps[k].wheel_map); k++)
			;
		args.addr = (uintptr_t)(k < NTMAPS ? tmap_addr(k) : unmapped);
		if (k == NTMAPS)
			tkind = T_UNMAPPED;
		break;
	}
	if (akind == P_VALID) {
		fill_pattern(ap, CHECK_LEN);
		memcpy(ap, &args, sizeof(args));
		memcpy(saved, ap, CHECK_LEN);
	}
	ret = fuzz_ioctl(wfd[wi], TWHEEL_IOC_TOUCH_REGISTER, ap);
	err = errno;
	calls++;
	if (akind == P_VALID && memcmp(ap, saved, CHECK_LEN))
		report(R_STRAY, "TOUCH_REGISTER wrote into its (input-only) argument");
	if (refused_rdonly(w->accmode, ret, err, "TOUCH_REGISTER")) {
		if (ti)
			tmap_reserve(ti);
		else if (t != MAP_FAILED)
			munmap(t, ANYWHERE_LEN(len));
		return;
	}
	if (!w->setup) {
		expect = EBADFD;
		alt = 0;
	} else if (akind != P_VALID) {
		/* Junk from a read-only page may be any refusal; the rest cannot be read. */
		expect = akind == P_RO ? -1 : EFAULT;
		alt = 0;
	} else if (args.flags || !w->touch_user || args.slots != w->slots) {
		expect = EINVAL;
		alt = 0;
	} else if (w->registered) {
		expect = EBUSY;
		alt = 0;
	} else if (private) {
		expect = EINVAL;
		alt = 0;
	} else {
		switch (tkind) {
		case T_GOOD: expect = 0; break;
		case T_MISALIGNED: expect = EINVAL; break;
		case T_NULL: case T_KERNEL: case T_NONCANON: expect = EINVAL; alt = EFAULT; break;
		case T_WHEEL_MAP: expect = 0; alt = EFAULT; alt2 = EINVAL; break;
		default: expect = EFAULT; break;
		}
	}
	check_errno(ret, err, errs, 5, "TOUCH_REGISTER");
	if (ret > 0)
		report(R_ERRNO, "TOUCH_REGISTER returned %ld", ret);
	else if (expect == -1 ? ret == 0 :
		 expect == 0 ? ret && err != alt && (!alt2 || err != alt2) :
		 ret != -1 || (err != expect && err != alt))
		report(R_ERRNO, "TOUCH_REGISTER on a wheel %s (slots %u%s%s, fd mode %d): slots %u flags %#x table kind %d, arg kind %d: %s, uapi says %s",
		       w->setup ? "set up" : "not set up", w->slots,
		       w->touch_user ? ", TOUCH_USER" : "", w->registered ? ", registered" : "",
		       w->accmode, args.slots, args.flags, tkind, akind,
		       ret ? strerror(err) : "success", expect > 0 ? strerror(expect) :
		       expect ? "a refusal" : "success");
	if (ret == 0) {
		n_registers_ok++;
		winfo_forget();
		if (fdinfo_get(wfd[wi], "touch_registered") != 1)
			report(R_ERRNO, "TOUCH_REGISTER succeeded, fdinfo says touch_registered %lld",
			       fdinfo_get(wfd[wi], "touch_registered"));
		if (ti)
			tmap_give(ti, args.slots, serial);
		else if (t != MAP_FAILED && tkind == T_GOOD)
			munmap(t, ANYWHERE_LEN(len));	/* the pages stay pinned, the wheel's */
		return;
	}
	n_registers_refused++;
	if (ti)
		tmap_reserve(ti);
	else if (t != MAP_FAILED)
		munmap(t, ANYWHERE_LEN(len));
}

/*
 * A table for wheel @wi, just set up with TWHEEL_SETUPF_TOUCH_USER and
 * @slots slots: fresh memory, registered, most often in a sub-region for
 * the writer.
 */
static void register_at_once(int wi, uint32_t slots)
{
	size_t len = ((size_t)slots * 8 + PAGE - 1) / PAGE * PAGE;
	uint64_t serial = fdinfo_get(wfd[wi], "wheel");
	int ti = len <= TMAP_BYTES && rnd_below(&rs, 4) ? 1 + rnd_below(&rs, NTMAPS - 1) : 0;
	uint64_t *t;
	int ret;

	if (len > 64 * TMAP_BYTES)
		return;
	t = table_memory(len, ti, serial, NULL);
	if (t == MAP_FAILED)
		return;
	ret = raw_register(wfd[wi], t, slots);
	calls++;
	winfo[wi].valid = 0;
	if (ret)
		report(R_ERRNO, "TOUCH_REGISTER of fresh memory for %u slots: %s", slots,
		       strerror(-ret));
	else
		n_registers_ok++;
	if (!ret && ti)
		tmap_give(ti, slots, serial);
	else if (ti)
		tmap_reserve(ti);
	else
		munmap(t, ANYWHERE_LEN(len));
}

/* ---- the probe: what garbage in a table must not do ---- */

#define PROBE_SLOTS	64
#define PROBE_STABLE	32		/* ids live all run long */
#define PROBE_IDS	256
#define PROBE_DEPTH	8		/* incarnations of one id awaiting their event */
#define PROBE_TAG	0x5052000000000000ULL

struct pinc {
	uint64_t dl;			/* the deadline its last ADD or REFRESH gave */
	int exact;			/* dl is that deadline, not a bound below it */
	int bound;			/* to a slot: touches may move it later */
	int expired;			/* known to have expired (ENOENT, or a later ADD) */
};

struct pstate {
	struct pinc q[PROBE_DEPTH];	/* oldest first; the last is the latest */
	int n;
};

static int probe_fd = -1;
static struct winfo probe_w;
static struct pstate probe[PROBE_IDS];
static uint64_t stable_dl[PROBE_STABLE];
static uint32_t stable_slot[PROBE_STABLE];
static int probe_chain_on;
static uint64_t probe_chain_cursor, probe_chain_seen[PROBE_IDS / 64];

static uint64_t probe_id(int k)
{
	return PROBE_TAG | k;
}

static int probe_k(uint64_t id)
{
	return (id & ~0xffULL) == PROBE_TAG ? (int)(id & 0xff) : -1;
}

/*
 * The probe wheel: tick 1 ms, a table of PROBE_SLOTS the writer garbles
 * (sub-region 0: the wheel's mapping, or with @user anonymous memory
 * registered as its table), PROBE_STABLE ids due after the run, each
 * bound or not, and churn ids that only the main thread operates on, so
 * that the model knows every incarnation.
 */
static int probe_start(uint64_t secs, int user)
{
	struct twheel_op op;
	uint8_t *p;
	int k;

	memset(probe, 0, sizeof(probe));
	probe_chain_on = 0;
	probe_fd = open(TWHEEL_DEVICE, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (probe_fd < 0 || raw_setup_touch(probe_fd, NSEC_PER_MSEC, 10 * NSEC_PER_MSEC, 0,
					    user ? TWHEEL_SETUPF_TOUCH_USER : TWHEEL_SETUPF_TOUCH,
					    PROBE_SLOTS))
		return -1;
	tmap_wait_writer(0);
	if (user)
		p = mmap(tmap_addr(0), PAGE, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	else
		p = mmap(tmap_addr(0), PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
			 probe_fd, 0);
	if (p == MAP_FAILED || (user && raw_register(probe_fd, p, PROBE_SLOTS)))
		return -1;
	winfo_read(probe_fd, &probe_w);
	check_table(&probe_w, (const uint64_t *)p, PAGE, 1, "probe table");
	tmaps[0].len = user ? PROBE_SLOTS * 8 : PAGE;
	tmaps[0].serial = probe_w.serial;
	tmaps[0].writable = 1;
	tmaps[0].wheel_map = !user;
	atomic_store_explicit(&tmaps[0].live, 1, memory_order_release);
	for (k = 0; k < PROBE_STABLE; k++) {
		op_init(&op, TWHEEL_OP_ADD, probe_id(k), TWHEEL_OPF_TIMEOUT,
			(secs + 3600) * NSEC_PER_SEC);
		stable_slot[k] = TWHEEL_SLOT_NONE;
		if (k % 3) {
			op.flags |= TWHEEL_OPF_TOUCH;
			op.slot = stable_slot[k] = rnd_below(&rs, PROBE_SLOTS);
		}
		if (raw_op(probe_fd, &op))
			return -1;
		stable_dl[k] = op.deadline_ns;
	}
	return 0;
}

/* Check @dl, a deadline seen for incarnation @inc, against the last arming. */
static void probe_check_dl(int k, const struct pinc *inc, uint64_t dl, const char *what)
{
	if (dl < inc->dl)
		report(R_TOUCH, "probe id %d: %s deadline %llu is %llu ns before the one its last ADD/REFRESH gave",
		       k, what, (unsigned long long)dl, (unsigned long long)(inc->dl - dl));
	else if (!inc->bound && inc->exact && dl != inc->dl)
		report(R_TOUCH, "probe id %d (unbound): %s deadline %llu, its last ADD/REFRESH gave %llu",
		       k, what, (unsigned long long)dl, (unsigned long long)inc->dl);
	if (!on_grid(&probe_w, dl))
		report(R_TOUCH, "probe id %d: %s deadline %llu off the grid", k, what,
		       (unsigned long long)dl);
}

/* Fold the result of one probe op into the model. */
static void probe_apply(int k, const struct twheel_op *op)
{
	struct pstate *st = &probe[k];
	struct pinc *last = st->n ? &st->q[st->n - 1] : NULL;
	int live = last && !last->expired;

	switch (op->result) {
	case 0:
		if (op->op == TWHEEL_OP_ADD) {
			if (live)
				last->expired = 1;	/* it expired meanwhile */
			st->q[st->n].dl = op->deadline_ns;
			st->q[st->n].exact = 1;
			st->q[st->n].bound = op->flags & TWHEEL_OPF_TOUCH &&
					     op->slot != TWHEEL_SLOT_NONE;
			st->q[st->n].expired = 0;
			st->n++;
			break;
		}
		if (!live) {
			report(R_TOUCH, "probe id %d: op %u succeeded on an id that expired or was cancelled",
			       k, op->op);
			break;
		}
		if (op->op == TWHEEL_OP_REFRESH) {
			last->dl = op->deadline_ns;
			last->exact = 1;
			if (op->flags & TWHEEL_OPF_TOUCH)
				last->bound = op->slot != TWHEEL_SLOT_NONE;
			break;
		}
		probe_check_dl(k, last, op->deadline_ns, op->op == TWHEEL_OP_CANCEL ? "CANCEL" : "QUERY");
		if (op->op == TWHEEL_OP_CANCEL)
			st->n--;
		break;
	case -EEXIST:
		if (!live)
			report(R_TOUCH, "probe id %d: EEXIST for an id that expired or was cancelled", k);
		break;
	case -ENOENT:
		if (live)
			last->expired = 1;
		break;
	}
}

/*
 * TWHEEL_IOC_REFRESH of a few churn ids: those not listed as failed were
 * live and now have a deadline of at least the call's start + timeout
 * (the call does not say which); the failed ones were not live.
 */
static void probe_refresh_ids(void)
{
	struct twheel_refresh_args a = { .flags = TWHEEL_OPF_TIMEOUT };
	uint64_t idv[8], failed[8], t0;
	struct pstate *st;
	uint32_t i, j, n = 1 + rnd_below(&rs, 8);
	long ret;

	for (i = 0; i < n; i++)
		idv[i] = probe_id(PROBE_STABLE + rnd_below(&rs, PROBE_IDS - PROBE_STABLE));
	a.ids = (uintptr_t)idv;
	a.failed = (uintptr_t)failed;
	a.count = n;
	a.timeout_ns = rnd_below(&rs, 20 * NSEC_PER_MSEC);
	t0 = mono_ns();
	ret = ioctl(probe_fd, TWHEEL_IOC_REFRESH, &a);
	calls++;
	if (ret != n || a.nr_failed > n) {
		report(R_TOUCH, "probe REFRESH of %u ids returned %ld, %u failed", n, ret, a.nr_failed);
		return;
	}
	for (i = 0, j = 0; i < n; i++) {
		struct twheel_op op;

		/* Fold each id in as a REFRESH op's result would be. */
		op_init(&op, TWHEEL_OP_REFRESH, idv[i], TWHEEL_OPF_TIMEOUT, a.timeout_ns);
		if (j < a.nr_failed && failed[j] == idv[i]) {
			op.result = -ENOENT;
			j++;
		} else {
			op.result = 0;
			op.deadline_ns = t0 + a.timeout_ns;
		}
		st = &probe[probe_k(idv[i])];
		probe_apply(probe_k(idv[i]), &op);
		if (!op.result && st->n)
			st->q[st->n - 1].exact = 0;
	}
	if (j != a.nr_failed)
		report(R_TOUCH, "probe REFRESH failures are not the ids in order");
}

static void probe_op(void)
{
	int k = PROBE_STABLE + rnd_below(&rs, PROBE_IDS - PROBE_STABLE);
	unsigned int r = rnd_below(&rs, 100);
	struct twheel_op op, before;
	uint64_t t0, t1;
	uint32_t code, flags = 0, tmo = 0;
	int ret;

	code = r < 35 ? TWHEEL_OP_ADD : r < 65 ? TWHEEL_OP_REFRESH :
	       r < 80 ? TWHEEL_OP_CANCEL : TWHEEL_OP_QUERY;
	if (code == TWHEEL_OP_ADD && probe[k].n == PROBE_DEPTH)
		code = TWHEEL_OP_QUERY;
	if (code == TWHEEL_OP_ADD || code == TWHEEL_OP_REFRESH) {
		r = rnd_below(&rs, 10);
		if (r < 8) {
			flags = TWHEEL_OPF_TIMEOUT;
			tmo = rnd_below(&rs, 20 * NSEC_PER_MSEC);
		} else if (r < 9) {
			flags = TWHEEL_OPF_ABSTIME;
		}
	}
	op_init(&op, code, probe_id(k), flags, tmo);
	if (flags & TWHEEL_OPF_ABSTIME)
		op.timeout_ns = mono_ns() + rnd_below(&rs, 25 * NSEC_PER_MSEC) - 5 * NSEC_PER_MSEC;
	if ((code == TWHEEL_OP_ADD || code == TWHEEL_OP_REFRESH) && rnd_below(&rs, 10) < 6) {
		op.flags |= TWHEEL_OPF_TOUCH;
		op.slot = rnd_below(&rs, 5) ? rnd_below(&rs, PROBE_SLOTS) : TWHEEL_SLOT_NONE;
	}
	before = op;
	t0 = mono_ns();
	ret = raw_op(probe_fd, &op);
	t1 = mono_ns();
	calls++;
	check_op(&probe_w, &before, &op, 1, ret, t0, t1, "probe op");
	probe_apply(k, &op);
}

/* Read what the probe has: each event closes its id's oldest incarnation. */
static int probe_read(void)
{
	struct twheel_event ev[64];
	int n, i, got = 0;

	while ((n = read(probe_fd, ev, sizeof(ev))) > 0) {
		calls++;
		for (i = 0; i < n / (int)sizeof(ev[0]); i++) {
			int k = probe_k(ev[i].id);
			struct pstate *st = k >= 0 ? &probe[k] : NULL;

			n_probe_events++;
			got++;
			if (!st || k < PROBE_STABLE || !st->n) {
				report(R_TOUCH, "probe event for id %#llx (deadline %llu), which has no incarnation waiting for it",
				       (unsigned long long)ev[i].id,
				       (unsigned long long)ev[i].deadline_ns);
				continue;
			}
			probe_check_dl(k, &st->q[0], ev[i].deadline_ns, "event");
			if (ev[i].expired_ns < ev[i].deadline_ns)
				report(R_TOUCH, "probe id %d: expired at %llu before its deadline %llu", k,
				       (unsigned long long)ev[i].expired_ns,
				       (unsigned long long)ev[i].deadline_ns);
			memmove(&st->q[0], &st->q[1], (st->n - 1) * sizeof(st->q[0]));
			st->n--;
		}
	}
	if (n < 0 && errno != EAGAIN)
		report(R_TOUCH, "probe read: %s", strerror(errno));
	return got;
}

/*
 * One call of a dump chain over the probe: each id listed once, the
 * stable ones (live throughout) all of them, with their deadline and slot.
 */
static void probe_dump(void)
{
	struct twheel_dump_entry *ent = (struct twheel_dump_entry *)batch_region;
	struct twheel_dump_args a = { .entries = (uintptr_t)ent, .count = 1 + rnd_below(&rs, 24) };
	uint64_t t1;
	long n, i;
	int k;

	if (!probe_chain_on) {
		probe_chain_on = 1;
		probe_chain_cursor = 0;
		memset(probe_chain_seen, 0, sizeof(probe_chain_seen));
	}
	a.cursor = probe_chain_cursor;
	n = ioctl(probe_fd, TWHEEL_IOC_DUMP, &a);
	t1 = mono_ns();
	calls++;
	if (n < 0) {
		report(R_DUMP, "probe dump: %s", strerror(errno));
		probe_chain_on = 0;
		return;
	}
	for (i = 0; i < n; i++) {
		k = probe_k(ent[i].id);
		if (k < 0) {
			report(R_DUMP, "probe dump listed id %#llx, not one of the probe's",
			       (unsigned long long)ent[i].id);
			continue;
		}
		if (probe_chain_seen[k / 64] & (1ULL << (k % 64)))
			report(R_DUMP, "probe dump listed id %d twice in one chain", k);
		probe_chain_seen[k / 64] |= 1ULL << (k % 64);
		if (k < PROBE_STABLE && (ent[i].deadline_ns != stable_dl[k] ||
					 ent[i].slot != stable_slot[k] || ent[i].pad))
			report(R_DUMP, "probe dump: stable id %d deadline %llu slot %#x pad %u, expected %llu %#x 0",
			       k, (unsigned long long)ent[i].deadline_ns, ent[i].slot, ent[i].pad,
			       (unsigned long long)stable_dl[k], stable_slot[k]);
		else if (k >= PROBE_STABLE)
			check_dump_entry(&probe_w, &ent[i], t1, "probe dump");
	}
	probe_chain_cursor = a.cursor;
	if (a.cursor != TWHEEL_DUMP_END)
		return;
	n_probe_chains++;
	probe_chain_on = 0;
	for (k = 0; k < PROBE_STABLE; k++)
		if (!(probe_chain_seen[0] & (1ULL << k)))
			report(R_DUMP, "probe dump chain ended without stable id %d, live throughout", k);
}

static void probe_step(void)
{
	int i, n = 1 + rnd_below(&rs, 4);

	for (i = 0; i < n; i++) {
		if (rnd_below(&rs, 10))
			probe_op();
		else
			probe_refresh_ids();
	}
	probe_read();
	if (rnd_below(&rs, 10) < 4)
		probe_dump();
}

/*
 * End of the run: cancel what is live; what was not cancelled has expired
 * and its event must come; the stable ids are still there as they were.
 */
static void probe_finish(void)
{
	struct twheel_op op;
	uint64_t until;
	int k, left;

	for (k = PROBE_STABLE; k < PROBE_IDS; k++) {
		op_init(&op, TWHEEL_OP_CANCEL, probe_id(k), 0, 0);
		raw_op(probe_fd, &op);
		calls++;
		probe_apply(k, &op);
	}
	until = mono_ns() + 5 * NSEC_PER_SEC;
	do {
		struct pollfd p = { .fd = probe_fd, .events = POLLIN };

		poll(&p, 1, 50);
		probe_read();
		for (k = PROBE_STABLE, left = 0; k < PROBE_IDS; k++)
			left += probe[k].n;
	} while (left && mono_ns() < until);
	for (k = PROBE_STABLE; k < PROBE_IDS; k++)
		if (probe[k].n)
			report(R_TOUCH, "probe id %d: %d incarnation(s) never delivered nor cancelled, first due %llu",
			       k, probe[k].n, (unsigned long long)probe[k].q[0].dl);
	for (k = 0; k < PROBE_STABLE; k++) {
		op_init(&op, TWHEEL_OP_QUERY, probe_id(k), 0, 0);
		if (raw_op(probe_fd, &op) || op.deadline_ns != stable_dl[k])
			report(R_TOUCH, "probe stable id %d: QUERY %d deadline %llu, expected %llu", k,
			       op.result, (unsigned long long)op.deadline_ns,
			       (unsigned long long)stable_dl[k]);
	}
	ksft_print_msg("probe (%s table): %llu events, %llu dump chains, %lld touch re-arms\n",
		       probe_w.touch_user ? "registered" : "mapped",
		       (unsigned long long)n_probe_events, (unsigned long long)n_probe_chains,
		       fdinfo_get(probe_fd, "touch_rearms"));
	close(probe_fd);
	probe_fd = -1;
}

/* ---- the rest of the storm ---- */

/* ioctl types the VFS answers itself (FIONBIO, FICLONE, FIFREEZE...): skipped. */
static int vfs_generic(uint32_t cmd)
{
	uint32_t type = _IOC_TYPE(cmd);

	return type == 'T' || type == 'X' || type == 'f' || type == 0x94 || type == 0 ||
	       type == 0x15;
}

static int is_command(uint32_t cmd)
{
	return cmd == TWHEEL_IOC_SETUP || cmd == TWHEEL_IOC_OP || cmd == TWHEEL_IOC_BATCH ||
	       cmd == TWHEEL_IOC_DUMP || cmd == TWHEEL_IOC_REFRESH ||
	       cmd == TWHEEL_IOC_TOUCH_REGISTER || cmd == TWHEEL_IOC_NS_LIMIT;
}

/*
 * TWHEEL_IOC_NS_LIMIT with random pids (ours, 0, negative, random: all
 * of the initial user namespace here, or none), flags and limits, on any
 * descriptor: only the uapi's errnos, and nothing written back but on
 * success, then only the out fields.
 */
static void do_ns_limit(void)
{
	static const int errs[] = { EINVAL, ESRCH, EPERM, EFAULT, ENOMEM };
	struct twheel_ns_limit_args args, before;
	enum ptr_kind kind;
	uint8_t *p = pick_ptr(sizeof(args), &kind);
	int err;
	long ret;

	memset(&args, 0, sizeof(args));
	switch (rnd_below(&rs, 4)) {
	case 0: args.pid = getpid(); break;
	case 1: args.pid = -(int32_t)rnd_below(&rs, 3); break;
	default: args.pid = (int32_t)rnd_next(&rs); break;
	}
	if (rnd_below(&rs, 2))
		args.flags = rnd_below(&rs, 3) ? TWHEEL_NS_LIMITF_SET : (uint32_t)rnd_next(&rs);
	if (rnd_below(&rs, 2))
		args.limit = rnd_below(&rs, 2) ? rnd_below(&rs, 1000) : rnd_next(&rs);
	args.entries = rnd_next(&rs);
	before = args;
	if (kind == P_VALID)
		memcpy(p, &args, sizeof(args));
	ret = ioctl(wfd[pick_idx()], TWHEEL_IOC_NS_LIMIT, p);
	err = errno;
	calls++;
	check_errno(ret, err, errs, 5, "NS_LIMIT");
	if (kind != P_VALID)
		return;
	memcpy(&args, p, sizeof(args));
	if (ret < 0 && memcmp(&args, &before, sizeof(args)))
		report(R_STRAY, "NS_LIMIT that failed (errno %d) wrote into its argument", err);
	if (!ret && (args.pid != before.pid || args.flags != before.flags))
		report(R_STRAY, "NS_LIMIT wrote into its in fields");
}

/*
 * Ring commands the device must refuse, untouched: another number, any
 * at all (no VFS between: FIONBIO and the like are the device's too),
 * ENOTTY; a non-zero pad in the command area EINVAL, whatever the
 * number; uring_cmd_flags EINVAL (EFAULT from io_uring for
 * IORING_URING_CMD_FIXED without registered buffers).
 */
static void do_ring_junk(void)
{
	static const int commands[] = { TWHEEL_IOC_SETUP, TWHEEL_IOC_OP, TWHEEL_IOC_BATCH,
					TWHEEL_IOC_DUMP, TWHEEL_IOC_REFRESH,
					TWHEEL_IOC_TOUCH_REGISTER };
	enum ptr_kind kind;
	uint8_t *p = pick_ptr(64, &kind);
	unsigned int r = rnd_below(&rs, 3);
	uint32_t cmd, cmd_flags = 0;
	uint64_t pad = 0;
	int fd = wfd[pick_idx()], err;
	long ret;

	if (r == 0) {
		do
			cmd = rnd_below(&rs, 2) ? _IOC(rnd_below(&rs, 4), TWHEEL_IOC_MAGIC,
						      rnd_below(&rs, 16), 8 * rnd_below(&rs, 8)) :
						  rnd_next(&rs);
		while (is_command(cmd));
	} else {
		cmd = commands[rnd_below(&rs, 6)];
		if (r == 1)
			pad = rnd_next(&rs) | 1ULL << rnd_below(&rs, 64);
		else
			cmd_flags = (uint32_t)rnd_next(&rs) | 1U << rnd_below(&rs, 32);
	}
	if (kind == P_VALID) {
		fill_pattern(p, CHECK_LEN);
		memcpy(saved, p, CHECK_LEN);
	}
	ret = ring_cmd(fd, cmd, (uintptr_t)p, pad, cmd_flags, rnd_below(&rs, 4) ? 0 : IOSQE_ASYNC);
	err = errno;
	calls++;
	n_ring_junk++;
	if (ret != -1 || (err != (r ? EINVAL : ENOTTY) && !(r == 2 && err == EFAULT)))
		report(R_ERRNO, "ring command %#x pad %#llx uring_cmd_flags %#x returned %ld errno %d, uapi says %s",
		       cmd, (unsigned long long)pad, cmd_flags, ret, ret < 0 ? err : 0,
		       r ? "EINVAL" : "ENOTTY");
	if (kind == P_VALID && memcmp(p, saved, CHECK_LEN))
		report(R_STRAY, "refused ring command %#x wrote into its argument", cmd);
}

static void do_random_ioctl(void)
{
	static const int errs[] = { ENOTTY };
	enum ptr_kind kind;
	uint8_t *p = pick_ptr(64, &kind);
	uint32_t cmd;
	int ret, err;

	if (ring_cmds && !is_child && rnd_below(&rs, 3) == 0) {
		do_ring_junk();
		return;
	}
	if (rnd_below(&rs, 8) == 0) {
		do_ns_limit();
		return;
	}
	do {
		if (rnd_below(&rs, 2))
			cmd = _IOC(rnd_below(&rs, 4), TWHEEL_IOC_MAGIC, rnd_below(&rs, 8) < 6 ?
				   rnd_below(&rs, 4) : rnd_below(&rs, 256), rnd_below(&rs, 4) ?
				   8 * rnd_below(&rs, 8) : rnd_below(&rs, 1 << 14));
		else
			cmd = rnd_next(&rs);
	} while (vfs_generic(cmd) || is_command(cmd));
	if (kind == P_VALID) {
		fill_pattern(p, CHECK_LEN);
		memcpy(saved, p, CHECK_LEN);
	}
	ret = ioctl(wfd[pick_idx()], cmd, rnd_below(&rs, 8) ? (unsigned long)p : rnd_next(&rs));
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

/*
 * Close slot @i's descriptor (its wheel lives on if shared or mapped) and
 * open a new wheel there, mostly read-write, mostly set up, some with a
 * touch table, some of those mapped for the writer at once.
 */
static void reopen(int i)
{
	static const int errs[] = { EINVAL, ENOSPC, ENOMEM };
	unsigned int r = rnd_below(&rs, 100);
	int mode = r < 88 ? O_RDWR : r < 97 ? O_RDONLY : O_WRONLY, fd, ret;
	uint32_t slots = 0, flags = 0;

	close(wfd[i]);
	calls++;
	winfo[i].valid = 0;
	fd = open(TWHEEL_DEVICE, mode | O_NONBLOCK | O_CLOEXEC);
	calls++;
	if (fd < 0) {
		report(R_ERRNO, "open: %s", strerror(errno));
		fd = open(TWHEEL_DEVICE, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			exit(2);
	}
	wfd[i] = fd;
	/* Most wheels get a working setup, so the ops go deep. */
	if (!rnd_below(&rs, 4))
		return;
	r = rnd_below(&rs, 10);
	if (r < 5) {
		slots = pick_table_slots();
		flags = r < 3 ? TWHEEL_SETUPF_TOUCH : TWHEEL_SETUPF_TOUCH_USER;
	}
	ret = raw_setup_touch(fd, rnd_below(&rs, 2) ? NSEC_PER_MSEC : TWHEEL_TICK_MIN_NS,
			      rnd_below(&rs, 5 * NSEC_PER_MSEC), rnd_below(&rs, 2) ? 4096 : 0,
			      flags, slots);
	calls++;
	if (refused_rdonly(mode, ret < 0 ? -1 : ret, -ret, "SETUP with a table"))
		return;
	check_errno(ret, -ret, errs, 3, "SETUP with a table");
	if (ret || !slots)
		return;
	if (flags == TWHEEL_SETUPF_TOUCH_USER) {
		n_user_setups++;
		/* Most at once, the rest (maybe) by do_touch_register() later. */
		if (mode == O_RDWR && rnd_below(&rs, 3))
			register_at_once(i, slots);
		return;
	}
	n_touch_setups++;
	pristine_add(fdinfo_get(fd, "wheel"));
	if (rnd_below(&rs, 2))
		tmap_map(i, 1 + rnd_below(&rs, NTMAPS - 1));
}

static void do_fd_games(void);

static void one_call(void)
{
	unsigned int r = rnd_below(&rs, 100);

	if (r < 6)
		do_setup();
	else if (r < 32)
		do_op();
	else if (r < 44)
		do_batch();
	else if (r < 56)
		do_read();
	else if (r < 58)
		do_touch_register();
	else if (r < 68)
		do_random_ioctl();
	else if (r < 72)
		do_poll();
	else if (r < 79)
		do_dump();
	else if (r < 81)
		do_refresh_ids();
	else if (r < 87)
		do_mmap();
	else if (r < 91)
		do_remap();
	else if (r < 94)
		do_touch();
	else if (r < 98 || is_child)
		do_fd_games();
	else
		probe_step();
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
			winfo[i] = winfo[j];
		} else if (fd >= 0) {
			close(fd);
		}
	} else {
		/* The child shares the wheels and the mapped tables. */
		fflush(stdout);
		pid = fork();
		calls++;
		if (pid == 0) {
			is_child = 1;
			for (k = 0; k < NTMAPS; k++) {
				parent_writer_maps[k] = writer_running && atomic_load(&tmaps[k].live);
				parent_writer_serials[k] = tmaps[k].serial;
			}
			writer_running = 0;
			memset(reports, 0, sizeof(reports));
			memset(pristine, 0, sizeof(pristine));
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
		/* The child may have set up, registered, mapped and stored into any of them. */
		winfo_forget();
		memset(pristine, 0, sizeof(pristine));
	}
}

/* Why a wheel failed usable(): the step, its answer, and its fdinfo. */
static int not_usable(int fd, const char *why, long long ret)
{
	char path[64], line[128];
	FILE *f;

	printf("# unusable: %s (%lld)\n", why, ret);
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		printf("#   %s", line);
	fclose(f);
	return 0;
}

/* After the storm: a fresh wheel and an old one still do their job. */
static int usable(int fd, int fresh)
{
	struct twheel_event ev;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint64_t id = ids[5];
	long long tick, t0;
	int ret, wait_ms;

	if (fresh && raw_setup(fd, NSEC_PER_MSEC, 0, 0))
		return not_usable(fd, "setup of a fresh wheel", -errno);
	/* Opened read-only: never set up, it does its job by refusing all. */
	if ((fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY) {
		ret = raw_op1(fd, TWHEEL_OP_ADD, id, 2 * NSEC_PER_MSEC);
		if (ret != -EBADF)
			return not_usable(fd, "ADD on a read-only wheel", ret);
		if (fdinfo_get(fd, "tick_ns") >= 0)
			return not_usable(fd, "read-only wheel set up", 0);
		return 1;
	}
	tick = fdinfo_get(fd, "tick_ns");
	if (tick < 0)
		return not_usable(fd, "no tick_ns in fdinfo", tick);
	raw_op1(fd, TWHEEL_OP_CANCEL, id, UINT64_MAX);
	/*
	 * The storm may have set this wheel up with a tick of up to an hour:
	 * then the id's expiry may be a tick away, and being live must do. A
	 * wheel opened write-only cannot be read: being live must do too.
	 * Such an id gets a timeout of a minute (the longest one at the
	 * smallest tick is 429 s): a 2 ms one may pass on a slow machine
	 * before the CANCEL that checks it is live.
	 */
	if ((unsigned long long)tick > 1000 * NSEC_PER_MSEC ||
	    (fcntl(fd, F_GETFL) & O_ACCMODE) == O_WRONLY) {
		ret = raw_op1(fd, TWHEEL_OP_ADD, id, 60 * NSEC_PER_SEC);
		if (ret == -ENOSPC)
			return 1;	/* a full old wheel of huge timeouts is fine */
		if (ret)
			return not_usable(fd, "ADD", ret);
		ret = raw_op1(fd, TWHEEL_OP_CANCEL, id, UINT64_MAX);
		return ret ? not_usable(fd, "CANCEL of the id just added", ret) : 1;
	}
	/* Drain what is already queued, then our own event must come. */
	while (read(fd, &ev, sizeof(ev)) > 0)
		;
	ret = raw_op1(fd, TWHEEL_OP_ADD, id, 2 * NSEC_PER_MSEC);
	if (ret == -ENOSPC)
		return 1;
	if (ret)
		return not_usable(fd, "ADD", ret);
	wait_ms = 5000 + (int)(2 * (unsigned long long)tick / NSEC_PER_MSEC);
	for (;;) {
		t0 = mono_ns();
		ret = poll(&p, 1, wait_ms);
		if (ret != 1)
			return not_usable(fd, ret ? "poll" : "no event in the wait",
					ret ? -errno : (long long)(mono_ns() - t0));
		ret = read(fd, &ev, sizeof(ev));
		if (ret != sizeof(ev))
			return not_usable(fd, "read", ret < 0 ? -errno : ret);
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

/*
 * A wheel opened read-only cannot be set up (uapi: SETUP is EBADF on a
 * descriptor without write access), so it has no table to map: mmap is
 * EBADFD. Returns 0 if that is so.
 */
static int rdonly_never_set_up(void)
{
	int fd = open(TWHEEL_DEVICE, O_RDONLY | O_CLOEXEC), ret = 1, err;
	void *p;

	if (fd < 0) {
		printf("# open of a read-only wheel: %s\n", strerror(errno));
		return 1;
	}
	err = -raw_setup_touch(fd, NSEC_PER_MSEC, 0, 0, TWHEEL_SETUPF_TOUCH, 8);
	p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, 0);
	if (err != EBADF)
		printf("# SETUP of a wheel opened O_RDONLY: %s\n", err ? strerror(err) : "succeeded");
	else if (p != MAP_FAILED || errno != EBADFD)
		printf("# mmap(PROT_READ, MAP_SHARED) of a wheel opened O_RDONLY: %s\n",
		       p == MAP_FAILED ? strerror(errno) : "succeeded");
	else
		ret = 0;
	if (p != MAP_FAILED)
		munmap(p, PAGE);
	close(fd);
	if (ret)
		report(R_MMAP, "a wheel opened read-only was set up or mapped");
	return ret;
}

static void writer_start(void)
{
	struct sigaction sa = { .sa_sigaction = on_fault, .sa_flags = SA_SIGINFO | SA_NODEFER };
	int i;

	tmap_region = mmap(NULL, NTMAPS * TMAP_BYTES, PROT_NONE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (tmap_region == MAP_FAILED) {
		perror("fuzz-abi: reserving table regions");
		exit(2);
	}
	for (i = 0; i < NTMAPS; i++)
		atomic_init(&tmaps[i].live, 0);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
}

/* Stop the writer, take over what it saw, and unmap every table. */
static void writer_finish(void)
{
	int i;

	atomic_store(&writer_stop, 1);
	if (writer_running)
		pthread_join(writer_th, NULL);
	writer_running = 0;
	if (w_faults_bad)
		report(R_TABLE, "the writer faulted %llu times on live mappings, first at %#llx (signal %d)",
		       (unsigned long long)w_faults_bad, (unsigned long long)w_bad_addr, w_bad_sig);
	if (w_values_bad)
		report(R_TABLE, "the writer read %llu values nobody stored, first %#llx in the table of wheel %llu",
		       (unsigned long long)w_values_bad, (unsigned long long)w_bad_value,
		       (unsigned long long)w_bad_serial);
	for (i = 0; i < NTMAPS; i++)
		tmap_drop(i);
	ksft_print_msg("touch: %llu tables set up, %llu mappings made, %llu refused; writer: %llu stores, %llu loads; %llu unmaps under its stores, %llu faults of its racing them\n",
		       (unsigned long long)n_touch_setups, (unsigned long long)n_maps_ok,
		       (unsigned long long)n_maps_refused, (unsigned long long)w_stores,
		       (unsigned long long)w_loads, (unsigned long long)n_races,
		       (unsigned long long)w_faults_expected);
	ksft_print_msg("dump: %llu calls answered, %llu entries checked\n",
		       (unsigned long long)n_dumps_ok, (unsigned long long)n_dump_entries);
	ksft_print_msg("register: %llu wheels set up for a registered table, %llu tables registered, %llu registrations refused\n",
		       (unsigned long long)n_user_setups, (unsigned long long)n_registers_ok,
		       (unsigned long long)n_registers_refused);
	if (ring_cmds)
		ksft_print_msg("ring: %llu commands through the ring (%llu with IOSQE_ASYNC), %llu refused ring commands\n",
			       (unsigned long long)n_ring_cmds, (unsigned long long)n_ring_async,
			       (unsigned long long)n_ring_junk);
}

static void result(int kind, const char *what)
{
	ksft_test_result(!reports[kind], "%s (%llu reports)\n", what,
			 (unsigned long long)reports[kind]);
}

int main(int argc, char **argv)
{
	uint64_t secs = arg_or_env(argc, argv, "TWHEEL_STRESS_SECS", 60);
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x7477686565ULL;
	uint64_t end, total = 0, old_ok = 0, old_n = 0;
	struct statvfs sv;
	int i, fd, ok, half, have_ring;

	ksft_print_header();
	ksft_set_plan(14);
	rs = seed;
	ksft_print_msg("seed %#llx, %llu s\n", (unsigned long long)seed, (unsigned long long)secs);
	arena = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	batch_region = mmap(NULL, (BATCH_PAGES + 1) * PAGE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fail_region = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ro_page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unmapped = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (arena == MAP_FAILED || batch_region == MAP_FAILED || ro_page == MAP_FAILED ||
	    unmapped == MAP_FAILED || fail_region == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	mprotect(arena + 2 * PAGE, PAGE, PROT_NONE);
	mprotect(batch_region + BATCH_PAGES * PAGE, PAGE, PROT_NONE);
	mprotect(fail_region + 2 * PAGE, PAGE, PROT_NONE);
	have_ring = ring_init();
	munmap(unmapped, PAGE);
	dev_noexec = !statvfs(TWHEEL_DEVICE, &sv) && (sv.f_flag & ST_NOEXEC);
	ids[0] = 0;
	ids[1] = ~0ULL;
	for (i = 2; i < NIDS; i++)
		ids[i] = i < 32 ? (uint64_t)i : rnd_next(&rs) & 0x7fffffffffffffffULL;
	/* The read-only page holds plausible ops: the kernel may apply, not write back. */
	for (i = 0; i < (int)(PAGE / sizeof(struct twheel_op)); i++)
		fill_op((struct twheel_op *)ro_page + i, &winfo[0]);
	mprotect(ro_page, PAGE, PROT_READ);
	signal(SIGPIPE, SIG_IGN);
	writer_start();

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
	ksft_test_result(!rdonly_never_set_up(),
			 "a wheel opened read-only is never set up, nor mapped\n");
	start_ns = mono_ns();
	time_lo = start_ns > 30 * NSEC_PER_SEC ? start_ns - 30 * NSEC_PER_SEC : 0;
	if (probe_start(secs, 0)) {
		ksft_test_result(0, "set up the probe wheel: %s\n", strerror(errno));
		printf("fuzz-abi: calls=0 reports=1\n");
		return 1;
	}
	ring_start(have_ring, wfd[0]);
	if (pthread_create(&writer_th, NULL, writer_main, NULL) == 0)
		writer_running = 1;
	/* The first half with a mapped probe table, the second with a registered one. */
	for (half = 1; half <= 2; half++) {
		end = start_ns + half * secs * 1000000000ULL / 2;
		while (mono_ns() < end) {
			int k;

			for (k = 0; k < 64; k++)
				one_call();
		}
		probe_finish();
		if (half == 2)
			break;
		tmap_drop(0);
		if (probe_start(secs, 1)) {
			ksft_test_result(0, "set up the probe wheel with a registered table: %s\n",
					 strerror(errno));
			printf("fuzz-abi: calls=%llu reports=1\n", (unsigned long long)calls);
			return 1;
		}
	}
	writer_finish();

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
			 "every return value in the documented set (%llu calls, %llu reports)\n",
			 (unsigned long long)calls, (unsigned long long)reports[R_ERRNO]);
	result(R_OPFIELD, "op results and out fields as the uapi says");
	result(R_STRAY, "no byte changed outside what the kernel reports written");
	result(R_EVENT, "events read are ours, on the grid, in order, never early");
	result(R_DUMP, "dump entries and cursors as the uapi says");
	result(R_MMAP, "mmap, mprotect, mremap, madvise of tables as documented");
	result(R_TABLE, "tables zero when new, hold only what was stored, shared by every mapping");
	result(R_TOUCH, "garbage stamps make nothing early, lost or doubled");
	result(R_KPTR, "no kernel-pointer-like value returned");
	result(R_CHILD, "forked children found nothing");
	result(R_USABLE, "wheels still usable after the storm");
	ksft_test_result(1, "no crash or hang in %llu s\n", (unsigned long long)secs);
	for (i = 0; i < R_NR; i++)
		total += reports[i];
	printf("fuzz-abi: calls=%llu reports=%llu\n", (unsigned long long)calls,
	       (unsigned long long)total);
	/* Every kind of report fails one of the tests: exit 1. */
	ksft_finished();
}
