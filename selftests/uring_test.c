// SPDX-License-Identifier: GPL-2.0
/*
 * io_uring: reads that need no worker thread, and the commands as ring
 * commands. A read with RWF_NOWAIT answers EAGAIN; readv(2) takes whole
 * records across its buffers; a ring's IORING_OP_READ of a blocking fd
 * waits for events while no io-wq worker sleeps in the device, and
 * completes when they come; IORING_OP_READ_MULTISHOT with provided
 * buffers completes batch after batch (6.7 and later). OP, BATCH,
 * REFRESH and DUMP as IORING_OP_URING_CMD (5.19 and later) complete
 * with exactly what the ioctl returns, for good arguments and for every
 * kind of bad one (a command area's pad or uring_cmd_flags set
 * included), fill the same out fields, and run without a worker; SETUP
 * as a ring command works too (from a worker); a ring command that
 * cannot be done (before 5.19 every one, since then an unknown cmd_op)
 * fails its SQE cleanly. A kernel without a feature skips its tests,
 * with the reason.
 *
 * The SQEs are filled here, with liburing for the ring: a ring command
 * is IORING_OP_URING_CMD on the wheel's fd, the ioctl's number as
 * cmd_op, and struct twheel_uring_cmd in the SQE's command area.
 *
 * Ends with "uring: kernel=K reads=N iou_wrk_threads=N cmds=N": the ring
 * reads and ring commands that completed, and the most io-wq workers
 * seen at once while a read waited, or after commands that run inline
 * (all but SETUP, which io_uring gives a worker): the process's io-wq
 * threads (iou-wrk-*) on 5.12 and later; on 5.10, where workers are
 * kernel threads, io_wqe_worker-* sleeping in the device.
 */
#include <dirent.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <liburing.h>

#include "twheel_util.h"
#include "kselftest_harness.h"

#define TICK_NS		(10 * NSEC_PER_MSEC)
/* Ids that must stay live for a test's length: far beyond any VM stall. */
#define DFLT_NS		(30 * NSEC_PER_SEC)
#define LONG_NS		(10 * NSEC_PER_SEC)
#define SHORT_NS	(30 * NSEC_PER_MSEC)
/* How long an armed read is watched before events are added. */
#define PENDING_NS	(150 * NSEC_PER_MSEC)
/* Longest wait for a completion the wheel owes within a tick or two. */
#define WAIT_NS		(10 * NSEC_PER_SEC)

/* Not in the uapi headers of Debian 12: the opcode of 6.7. */
#ifndef IORING_OP_READ_MULTISHOT
#define IORING_OP_READ_MULTISHOT	49
#endif

/* The command area of a plain SQE, which struct twheel_uring_cmd fills. */
#define SQE_CMD_BYTES	16

_Static_assert(sizeof(struct twheel_uring_cmd) == SQE_CMD_BYTES,
	       "struct twheel_uring_cmd is the command area of a plain SQE");

/* What the summary line counts, over every test (each runs in a child). */
struct tally {
	uint64_t reads;
	uint64_t cmds;
	uint64_t workers;
};

static struct tally *tally;

static void __attribute__((constructor)) tally_map(void)
{
	tally = mmap(NULL, sizeof(*tally), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (tally == MAP_FAILED)
		abort();
}

static bool has_prefix(const char *path, const char *prefix)
{
	char buf[64];

	return read_file(path, buf, sizeof(buf)) > 0 && !strncmp(buf, prefix, strlen(prefix));
}

/*
 * io-wq workers that could be doing the device's work now: this
 * process's iou-wrk-* threads, and the kernel's io_wqe_worker-* threads
 * (5.10) sleeping in the device.
 */
static int io_workers(void)
{
	char path[300], wchan[128];
	struct dirent *de;
	int n = 0;
	DIR *d;

	d = opendir("/proc/self/task");
	if (d) {
		while ((de = readdir(d))) {
			snprintf(path, sizeof(path), "/proc/self/task/%s/comm", de->d_name);
			n += de->d_name[0] != '.' && has_prefix(path, "iou-wrk");
		}
		closedir(d);
	}
	d = opendir("/proc");
	if (d) {
		while ((de = readdir(d))) {
			if (de->d_name[0] < '0' || de->d_name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
			if (!has_prefix(path, "io_wqe_worker"))
				continue;
			snprintf(path, sizeof(path), "/proc/%s/wchan", de->d_name);
			n += read_file(path, wchan, sizeof(wchan)) > 0 && strstr(wchan, "twheel");
		}
		closedir(d);
	}
	return n;
}

static void note_workers(void)
{
	uint64_t n = io_workers();

	if (n > __atomic_load_n(&tally->workers, __ATOMIC_RELAXED))
		__atomic_store_n(&tally->workers, n, __ATOMIC_RELAXED);
}

/* A ring, or the reason there is none: SKIP. 0 or -errno. */
static int ring_new(struct io_uring *ring, unsigned int entries)
{
	return io_uring_queue_init(entries, ring, 0);
}

/* An SQE: the tests never fill more than their rings hold. */
static struct io_uring_sqe *sqe_of(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		abort();
	return sqe;
}

static bool op_supported(struct io_uring *ring, int op)
{
	struct io_uring_probe *p = io_uring_get_probe_ring(ring);
	bool ok = p && io_uring_opcode_supported(p, op);

	if (p)
		io_uring_free_probe(p);
	return ok;
}

/* The next CQE within @ns: 0 with *@cqe set, or -ETIME. */
static int wait_cqe_ns(struct io_uring *ring, struct io_uring_cqe **cqe, uint64_t ns)
{
	struct __kernel_timespec ts = {
		.tv_sec = ns / NSEC_PER_SEC,
		.tv_nsec = ns % NSEC_PER_SEC,
	};

	return io_uring_wait_cqe_timeout(ring, cqe, &ts);
}

/*
 * Fill @sqe with the ring command @cmd (a TWHEEL_IOC_* number) on @fd:
 * IORING_OP_URING_CMD, cmd_op @cmd, and in the command area @arg, the
 * ioctl's argument, with @pad (0 but where a test wants it wrong).
 * Everything else 0: no flags, uring_cmd_flags 0, user_data 0.
 */
static void prep_ring_cmd_pad(struct io_uring_sqe *sqe, int fd, uint32_t cmd, void *arg,
			      uint64_t pad)
{
	struct twheel_uring_cmd area = {
		.arg = (uint64_t)(uintptr_t)arg,
		.pad = pad,
	};

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = cmd;
	memcpy(sqe->cmd, &area, sizeof(area));
}

static void prep_ring_cmd(struct io_uring_sqe *sqe, int fd, uint32_t cmd, void *arg)
{
	prep_ring_cmd_pad(sqe, fd, cmd, arg, 0);
}

/* ---- reads without io_uring: what IOCB_NOWAIT means ---- */

TEST(rwf_nowait_read_of_an_empty_blocking_wheel_is_eagain)
{
	int fd = wheel_new(O_CLOEXEC, TICK_NS, DFLT_NS, 0);
	struct twheel_event ev[2];
	struct iovec iov = { .iov_base = ev, .iov_len = sizeof(ev) };

	ASSERT_LE(0, fd) TH_LOG("wheel: %s", strerror(-fd));
	errno = 0;
	EXPECT_EQ(-1, preadv2(fd, &iov, 1, -1, RWF_NOWAIT));
	EXPECT_EQ(EAGAIN, errno);
	ASSERT_EQ(0, dev_add(fd, 7, 0));
	ASSERT_EQ(1, wait_waiting(fd, 1));
	memset(ev, JUNK, sizeof(ev));
	EXPECT_EQ(sizeof(ev[0]), preadv2(fd, &iov, 1, -1, RWF_NOWAIT));
	EXPECT_EQ(7, ev[0].id);
	close(fd);
}

/* Records are whole across the buffers of a readv(2), cut where they fall. */
TEST(readv_fills_its_buffers_with_whole_records)
{
	int fd = wheel_new(O_CLOEXEC, TICK_NS, DFLT_NS, 0);
	struct twheel_event ev[3];
	char a[30], b[40];
	struct iovec iov[2] = { { a, sizeof(a) }, { b, sizeof(b) } };
	char both[70];

	ASSERT_LE(0, fd) TH_LOG("wheel: %s", strerror(-fd));
	ASSERT_EQ(0, dev_add(fd, 1, 0));
	ASSERT_EQ(0, dev_add(fd, 2, 0));
	ASSERT_EQ(0, dev_add(fd, 3, 0));
	ASSERT_EQ(3, wait_waiting(fd, 3));
	/* 70 bytes hold two records of 24: the third stays queued. */
	memset(a, JUNK, sizeof(a));
	memset(b, JUNK, sizeof(b));
	ASSERT_EQ(2 * sizeof(ev[0]), readv(fd, iov, 2));
	memcpy(both, a, sizeof(a));
	memcpy(both + sizeof(a), b, sizeof(b));
	memcpy(ev, both, 2 * sizeof(ev[0]));
	EXPECT_NE(ev[0].id, ev[1].id);
	EXPECT_LE(ev[0].deadline_ns, ev[0].expired_ns);
	EXPECT_LE(ev[1].deadline_ns, ev[1].expired_ns);
	/* The bytes past the two records are left as they were. */
	EXPECT_EQ((char)JUNK, both[2 * sizeof(ev[0])]);
	EXPECT_EQ((char)JUNK, both[sizeof(both) - 1]);
	EXPECT_EQ(1, fdinfo_get(fd, "events_waiting"));
	EXPECT_EQ(1, dev_read_events(fd, &ev[2], 1));
	EXPECT_EQ(6, ev[0].id + ev[1].id + ev[2].id);
	close(fd);
}

/* ---- reads through a ring ---- */

FIXTURE(ring) {
	struct io_uring ring;
	bool have_ring;
	int fd;
};

FIXTURE_SETUP(ring)
{
	int ret = ring_new(&self->ring, 16);

	self->have_ring = !ret;
	self->fd = -1;
	if (ret == -ENOSYS || ret == -EPERM)
		SKIP(return, "no io_uring here (io_uring_setup: %s)", strerror(-ret));
	ASSERT_EQ(0, ret) TH_LOG("io_uring_queue_init: %s", strerror(-ret));
	/* Blocking: the case io_uring used to hand to a worker thread. */
	self->fd = wheel_new(O_CLOEXEC, TICK_NS, DFLT_NS, 0);
	ASSERT_LE(0, self->fd) TH_LOG("wheel: %s", strerror(-self->fd));
}

FIXTURE_TEARDOWN(ring)
{
	if (self->fd >= 0)
		close(self->fd);
	if (self->have_ring)
		io_uring_queue_exit(&self->ring);
}

/*
 * Round after round: a read armed before any event waits with no worker
 * in the device and no completion, then completes with the ids added
 * meanwhile, each exactly once, whole records, never early.
 */
TEST_F(ring, read_waits_without_a_worker_and_completes_with_the_events)
{
	enum { ROUNDS = 6, IDS = 3 };
	struct twheel_event ev[16];
	struct io_uring_cqe *cqe;
	int round, seen, i;

	for (round = 0; round < ROUNDS; round++) {
		unsigned int mask = 0;

		for (seen = 0; seen < IDS;) {
			struct io_uring_sqe *sqe = sqe_of(&self->ring);

			memset(ev, JUNK, sizeof(ev));
			io_uring_prep_read(sqe, self->fd, ev, sizeof(ev), 0);
			ASSERT_EQ(1, io_uring_submit(&self->ring));
			if (!seen) {
				sleep_ns(PENDING_NS);
				EXPECT_EQ(-EAGAIN, io_uring_peek_cqe(&self->ring, &cqe))
					TH_LOG("round %d: the read completed with nothing to read",
					       round);
				note_workers();
				EXPECT_EQ(0, io_workers())
					TH_LOG("round %d: a worker waits", round);
				for (i = 0; i < IDS; i++)
					ASSERT_EQ(0, dev_add(self->fd, 100 * round + i, SHORT_NS));
			}
			ASSERT_EQ(0, wait_cqe_ns(&self->ring, &cqe, WAIT_NS))
				TH_LOG("round %d: no completion", round);
			ASSERT_LT(0, cqe->res) TH_LOG("res %d", cqe->res);
			EXPECT_EQ(0, cqe->res % sizeof(ev[0]));
			for (i = 0; i < cqe->res / (int)sizeof(ev[0]); i++, seen++) {
				unsigned int k = ev[i].id - 100 * round;

				ASSERT_GT(IDS, k) TH_LOG("stray id %llu",
							 (unsigned long long)ev[i].id);
				EXPECT_FALSE(mask & 1U << k) TH_LOG("id %llu twice",
								     (unsigned long long)ev[i].id);
				mask |= 1U << k;
				EXPECT_LE(ev[i].deadline_ns, ev[i].expired_ns);
			}
			io_uring_cqe_seen(&self->ring, cqe);
			__atomic_add_fetch(&tally->reads, 1, __ATOMIC_RELAXED);
			/*
			 * Nor did a worker do the read once events came (an
			 * io-wq thread stays some seconds after its work).
			 */
			note_workers();
			EXPECT_EQ(0, io_workers()) TH_LOG("round %d: a worker read", round);
		}
		EXPECT_EQ(IDS, seen);
	}
	EXPECT_EQ(0, fdinfo_get(self->fd, "events_waiting"));
}

/*
 * The control of the count above: a read that io_uring is told to give
 * to a worker (IOSQE_ASYNC) is seen in it, on every kernel: the worker
 * sleeps in the device (5.10), or exists as an iou-wrk thread of the
 * process, whether it sleeps there or armed a poll for the read.
 */
TEST_F(ring, read_sent_to_a_worker_is_seen_in_the_count)
{
	struct io_uring_sqe *sqe = sqe_of(&self->ring);
	struct twheel_event ev[2];
	struct io_uring_cqe *cqe;

	io_uring_prep_read(sqe, self->fd, ev, sizeof(ev), 0);
	sqe->flags |= IOSQE_ASYNC;
	ASSERT_EQ(1, io_uring_submit(&self->ring));
	sleep_ns(PENDING_NS);
	EXPECT_LE(1, io_workers()) TH_LOG("the count misses a worker of the read");
	ASSERT_EQ(0, dev_add(self->fd, 5, SHORT_NS));
	ASSERT_EQ(0, wait_cqe_ns(&self->ring, &cqe, WAIT_NS));
	EXPECT_EQ(sizeof(ev[0]), cqe->res);
	io_uring_cqe_seen(&self->ring, cqe);
}

/*
 * A ring's read of an empty O_NONBLOCK wheel: io_uring either hands the
 * EAGAIN back (as it does for O_NONBLOCK files) or, since the file can
 * wait without blocking, waits for EPOLLIN as for a blocking one. Either
 * way with no worker, and with the event when it comes.
 */
TEST_F(ring, read_of_an_empty_nonblocking_wheel_is_eagain_or_waits)
{
	int fd = wheel_new(O_CLOEXEC | O_NONBLOCK, TICK_NS, DFLT_NS, 0);
	struct io_uring_sqe *sqe = sqe_of(&self->ring);
	struct twheel_event ev[2];
	struct io_uring_cqe *cqe;

	ASSERT_LE(0, fd) TH_LOG("wheel: %s", strerror(-fd));
	memset(ev, JUNK, sizeof(ev));
	io_uring_prep_read(sqe, fd, ev, sizeof(ev), 0);
	ASSERT_EQ(1, io_uring_submit(&self->ring));
	sleep_ns(PENDING_NS);
	note_workers();
	EXPECT_EQ(0, io_workers());
	if (!io_uring_peek_cqe(&self->ring, &cqe)) {
		EXPECT_EQ(-EAGAIN, cqe->res);
	} else {
		ASSERT_EQ(0, dev_add(fd, 9, SHORT_NS));
		ASSERT_EQ(0, wait_cqe_ns(&self->ring, &cqe, WAIT_NS));
		EXPECT_EQ(sizeof(ev[0]), cqe->res);
		EXPECT_EQ(9, ev[0].id);
		__atomic_add_fetch(&tally->reads, 1, __ATOMIC_RELAXED);
	}
	io_uring_cqe_seen(&self->ring, cqe);
	note_workers();
	EXPECT_EQ(0, io_workers());
	close(fd);
}

/* A read into a buffer smaller than a record fails as read(2) does. */
TEST_F(ring, read_into_less_than_a_record_is_einval)
{
	struct io_uring_sqe *sqe = sqe_of(&self->ring);
	struct io_uring_cqe *cqe;
	char small[sizeof(struct twheel_event) - 1];

	io_uring_prep_read(sqe, self->fd, small, sizeof(small), 0);
	ASSERT_EQ(1, io_uring_submit(&self->ring));
	ASSERT_EQ(0, wait_cqe_ns(&self->ring, &cqe, WAIT_NS));
	EXPECT_EQ(-EINVAL, cqe->res);
	io_uring_cqe_seen(&self->ring, cqe);
}

#define MS_BGID		7
#define MS_BUFS		8
#define MS_RECS		4	/* records per provided buffer */

/*
 * One IORING_OP_READ_MULTISHOT, armed once, completes batch after batch
 * from provided buffers (IORING_CQE_F_MORE on each), with no worker, and
 * every id exactly once.
 */
TEST_F(ring, multishot_read_delivers_batch_after_batch)
{
	enum { BATCHES = 5, IDS = 2 };
	static struct twheel_event bufs[MS_BUFS][MS_RECS];
	struct io_uring_buf_reg reg = { 0 };
	struct io_uring_buf_ring *br;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	unsigned int mask = 0, batches = 0, got = 0;
	int i, b, ret;

	if (!op_supported(&self->ring, IORING_OP_READ_MULTISHOT))
		SKIP(return, "IORING_OP_READ_MULTISHOT is new in 6.7: not in this kernel");
	br = mmap(NULL, MS_BUFS * sizeof(struct io_uring_buf), PROT_READ | PROT_WRITE,
		  MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
	ASSERT_NE(MAP_FAILED, br);
	reg.ring_addr = (unsigned long)br;
	reg.ring_entries = MS_BUFS;
	reg.bgid = MS_BGID;
	ret = io_uring_register_buf_ring(&self->ring, &reg, 0);
	ASSERT_EQ(0, ret) TH_LOG("register_buf_ring: %s", strerror(-ret));
	io_uring_buf_ring_init(br);
	for (i = 0; i < MS_BUFS; i++)
		io_uring_buf_ring_add(br, bufs[i], sizeof(bufs[i]), i,
				      io_uring_buf_ring_mask(MS_BUFS), i);
	io_uring_buf_ring_advance(br, MS_BUFS);

	sqe = sqe_of(&self->ring);
	io_uring_prep_rw(IORING_OP_READ_MULTISHOT, sqe, self->fd, NULL, 0, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = MS_BGID;
	io_uring_sqe_set_data64(sqe, 1);
	ASSERT_EQ(1, io_uring_submit(&self->ring));

	for (b = 0; b < BATCHES; b++) {
		sleep_ns(PENDING_NS / 3);
		EXPECT_EQ(-EAGAIN, io_uring_peek_cqe(&self->ring, &cqe)) TH_LOG("batch %d", b);
		note_workers();
		EXPECT_EQ(0, io_workers()) TH_LOG("batch %d: a worker waits", b);
		for (i = 0; i < IDS; i++)
			ASSERT_EQ(0, dev_add(self->fd, IDS * b + i, SHORT_NS));
		while (got < (unsigned int)IDS * (b + 1)) {
			int bid, n;

			ASSERT_EQ(0, wait_cqe_ns(&self->ring, &cqe, WAIT_NS)) TH_LOG("batch %d", b);
			ASSERT_LT(0, cqe->res) TH_LOG("batch %d: res %d", b, cqe->res);
			ASSERT_TRUE(cqe->flags & IORING_CQE_F_MORE) TH_LOG("multishot ended");
			ASSERT_TRUE(cqe->flags & IORING_CQE_F_BUFFER);
			EXPECT_EQ(0, cqe->res % sizeof(struct twheel_event));
			bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
			ASSERT_GT(MS_BUFS, bid);
			n = cqe->res / sizeof(struct twheel_event);
			for (i = 0; i < n; i++, got++) {
				uint64_t id = bufs[bid][i].id;

				ASSERT_GT(IDS * BATCHES, id);
				EXPECT_FALSE(mask & 1U << id) TH_LOG("id %llu twice",
								     (unsigned long long)id);
				mask |= 1U << id;
				EXPECT_LE(bufs[bid][i].deadline_ns, bufs[bid][i].expired_ns);
			}
			io_uring_buf_ring_add(br, bufs[bid], sizeof(bufs[bid]), bid,
					      io_uring_buf_ring_mask(MS_BUFS), 0);
			io_uring_buf_ring_advance(br, 1);
			io_uring_cqe_seen(&self->ring, cqe);
			batches++;
			__atomic_add_fetch(&tally->reads, 1, __ATOMIC_RELAXED);
		}
	}
	EXPECT_EQ(IDS * BATCHES, got);
	EXPECT_LE(BATCHES, batches);
	note_workers();
	EXPECT_EQ(0, io_workers());

	/* Cancelled, it ends with a last CQE without F_MORE. */
	sqe = sqe_of(&self->ring);
	io_uring_prep_cancel64(sqe, 1, 0);
	io_uring_sqe_set_data64(sqe, 2);
	ASSERT_EQ(1, io_uring_submit(&self->ring));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, wait_cqe_ns(&self->ring, &cqe, WAIT_NS));
		if (cqe->user_data == 1)
			EXPECT_FALSE(cqe->flags & IORING_CQE_F_MORE);
		io_uring_cqe_seen(&self->ring, cqe);
	}
	io_uring_unregister_buf_ring(&self->ring, MS_BGID);
	munmap(br, MS_BUFS * sizeof(struct io_uring_buf));
}

/* ---- commands through a ring ---- */

FIXTURE(cmd) {
	struct io_uring ring;
	bool have_ring;
	int fd;		/* driven through the ring */
	int twin;	/* driven through ioctl(2), the same way */
};

FIXTURE_SETUP(cmd)
{
	int ret = ring_new(&self->ring, 16);

	self->have_ring = !ret;
	self->fd = self->twin = -1;
	if (ret == -ENOSYS || ret == -EPERM)
		SKIP(return, "no io_uring here (io_uring_setup: %s)", strerror(-ret));
	ASSERT_EQ(0, ret) TH_LOG("io_uring_queue_init: %s", strerror(-ret));
	if (!op_supported(&self->ring, IORING_OP_URING_CMD))
		SKIP(return, "IORING_OP_URING_CMD is new in 5.19: not in this kernel");
	self->fd = wheel_new(O_CLOEXEC, TICK_NS, DFLT_NS, 0);
	ASSERT_LE(0, self->fd) TH_LOG("wheel: %s", strerror(-self->fd));
	self->twin = wheel_new(O_CLOEXEC, TICK_NS, DFLT_NS, 0);
	ASSERT_LE(0, self->twin) TH_LOG("wheel: %s", strerror(-self->twin));
}

FIXTURE_TEARDOWN(cmd)
{
	if (self->fd >= 0)
		close(self->fd);
	if (self->twin >= 0)
		close(self->twin);
	if (self->have_ring)
		io_uring_queue_exit(&self->ring);
}

/* Submit the prepared SQE and wait for it: the CQE's res. */
static int ring_wait(struct __test_metadata *_metadata, struct io_uring *ring)
{
	struct io_uring_cqe *cqe;
	int res;

	EXPECT_EQ(1, io_uring_submit(ring));
	if (wait_cqe_ns(ring, &cqe, WAIT_NS)) {
		EXPECT_TRUE(false) TH_LOG("no completion for a ring command");
		return INT_MIN;
	}
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	__atomic_add_fetch(&tally->cmds, 1, __ATOMIC_RELAXED);
	return res;
}

/* Command @cmd with @arg on @fd through the ring: the CQE's res. */
static int ring_cmd(struct __test_metadata *_metadata, struct io_uring *ring, int fd,
		    uint32_t cmd, void *arg)
{
	prep_ring_cmd(sqe_of(ring), fd, cmd, arg);
	return ring_wait(_metadata, ring);
}

/* The same command through ioctl(2), as the ring reports it: -errno or the value. */
static int ioctl_res(int fd, uint32_t cmd, void *arg)
{
	return dev_ret(ioctl(fd, cmd, arg));
}

TEST_F(cmd, op_completes_with_the_ioctls_result_and_fills_the_op)
{
	struct twheel_op op, q;
	uint64_t before = mono_ns();

	dev_prep_add(&op, 5, LONG_NS);
	op.deadline_ns = op.remaining_ns = JUNK64;
	op.result = (int32_t)JUNK64;
	ASSERT_EQ(0, ring_cmd(_metadata, &self->ring, self->fd, TWHEEL_IOC_OP, &op));
	EXPECT_EQ(0, op.result);
	EXPECT_LE(before + LONG_NS, op.deadline_ns);
	EXPECT_GE(LONG_NS + TICK_NS, op.remaining_ns);
	/* The ioctl sees what the ring command did. */
	dev_prep_query(&q, 5);
	ASSERT_EQ(0, dev_submit_op(self->fd, &q));
	EXPECT_EQ(op.deadline_ns, q.deadline_ns);
	/* A failing op: its errno as res, in result, out fields zeroed. */
	op.deadline_ns = op.remaining_ns = JUNK64;
	EXPECT_EQ(-EEXIST, ring_cmd(_metadata, &self->ring, self->fd, TWHEEL_IOC_OP, &op));
	EXPECT_EQ(-EEXIST, op.result);
	EXPECT_EQ(0, op.deadline_ns);
	EXPECT_EQ(0, op.remaining_ns);
	note_workers();
	EXPECT_EQ(0, io_workers());
}

/* Ops of every kind, good and bad, applied to twin wheels both ways. */
static unsigned int mixed_ops(struct twheel_op *ops)
{
	unsigned int n = 0;

	dev_prep_add(&ops[n++], 1, DEV_TIMEOUT_DEFAULT);
	dev_prep_add(&ops[n++], 2, LONG_NS);
	dev_prep_add(&ops[n++], 1, LONG_NS);				/* EEXIST */
	dev_prep_refresh(&ops[n++], 3, LONG_NS, 0);			/* ENOENT */
	dev_prep_refresh(&ops[n++], 3, LONG_NS, TWHEEL_OPF_ADD_IF_ABSENT);
	dev_prep_refresh(&ops[n++], 2, 2 * LONG_NS, 0);
	dev_prep_cancel(&ops[n++], 1);
	dev_prep_cancel(&ops[n++], 1);					/* ENOENT */
	dev_prep_query(&ops[n++], 2);
	op_init(&ops[n++], 0, 4, 0, 0);					/* EINVAL: op */
	op_init(&ops[n++], TWHEEL_OP_ADD, 4, 1U << 31, 0);		/* EINVAL: flags */
	op_init(&ops[n++], TWHEEL_OP_ADD, 4, TWHEEL_OPF_TIMEOUT, UINT64_MAX); /* EINVAL */
	op_init(&ops[n++], TWHEEL_OP_ADD, 4, TWHEEL_OPF_TOUCH, 0);	/* EINVAL: no table */
	dev_prep_add(&ops[n], 4, LONG_NS);
	ops[n++].slot = 1;						/* EINVAL: slot */
	dev_prep_cancel(&ops[n], 2);
	ops[n++].flags = TWHEEL_OPF_ADD_IF_ABSENT;			/* EINVAL */
	return n;
}

TEST_F(cmd, batch_results_match_the_ioctl_op_by_op)
{
	struct twheel_op a[20], b[20];
	struct twheel_batch_args ba = { .ops = (uintptr_t)a }, bb = { .ops = (uintptr_t)b };
	unsigned int n = mixed_ops(a), i;

	mixed_ops(b);
	ba.count = bb.count = n;
	ASSERT_EQ(n, ioctl_res(self->twin, TWHEEL_IOC_BATCH, &ba));
	ASSERT_EQ(n, ring_cmd(_metadata, &self->ring, self->fd, TWHEEL_IOC_BATCH, &bb));
	for (i = 0; i < n; i++) {
		EXPECT_EQ(a[i].result, b[i].result) TH_LOG("op %u", i);
		EXPECT_EQ(!a[i].deadline_ns, !b[i].deadline_ns) TH_LOG("op %u", i);
		EXPECT_EQ(a[i].id, b[i].id);
		EXPECT_EQ(a[i].timeout_ns, b[i].timeout_ns);
	}
	EXPECT_EQ(-EEXIST, b[2].result);
	EXPECT_EQ(-EINVAL, b[n - 1].result);
	EXPECT_EQ(2, fdinfo_get(self->fd, "live"));
	EXPECT_EQ(fdinfo_get(self->twin, "live"), fdinfo_get(self->fd, "live"));
	note_workers();
	EXPECT_EQ(0, io_workers());
}

TEST_F(cmd, refresh_ids_and_failures_match_the_ioctl)
{
	uint64_t ids[] = { 10, 11, 12, 13 }, fa[4], fb[4];
	struct twheel_refresh_args ra = {
		.ids = (uintptr_t)ids, .failed = (uintptr_t)fa, .count = 4,
	}, rb = ra;
	int i;

	rb.failed = (uintptr_t)fb;
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, dev_add(i ? self->fd : self->twin, 10, LONG_NS));
		ASSERT_EQ(0, dev_add(i ? self->fd : self->twin, 12, LONG_NS));
	}
	memset(fa, JUNK, sizeof(fa));
	memset(fb, JUNK, sizeof(fb));
	ASSERT_EQ(4, ioctl_res(self->twin, TWHEEL_IOC_REFRESH, &ra));
	ASSERT_EQ(4, ring_cmd(_metadata, &self->ring, self->fd, TWHEEL_IOC_REFRESH, &rb));
	EXPECT_EQ(2, rb.nr_failed);
	EXPECT_EQ(ra.nr_failed, rb.nr_failed);
	EXPECT_EQ(11, fb[0]);
	EXPECT_EQ(13, fb[1]);
	EXPECT_EQ(0, memcmp(fa, fb, 2 * sizeof(fb[0])));
	/* With ADD_IF_ABSENT the absent ones are added, both ways. */
	ra.flags = rb.flags = TWHEEL_OPF_ADD_IF_ABSENT;
	ra.nr_failed = rb.nr_failed = JUNK;
	ASSERT_EQ(4, ioctl_res(self->twin, TWHEEL_IOC_REFRESH, &ra));
	ASSERT_EQ(4, ring_cmd(_metadata, &self->ring, self->fd, TWHEEL_IOC_REFRESH, &rb));
	EXPECT_EQ(0, ra.nr_failed);
	EXPECT_EQ(0, rb.nr_failed);
	EXPECT_EQ(4, fdinfo_get(self->fd, "live"));
	EXPECT_EQ(4, fdinfo_get(self->twin, "live"));
	note_workers();
	EXPECT_EQ(0, io_workers());
}

/*
 * A whole dump of @fd, two ids a call, through the ring or the ioctl:
 * the count listed into @e (room for @max), or -errno of a call.
 */
static int dump_all(struct __test_metadata *_metadata, struct io_uring *ring, int fd,
		    bool by_ring, struct twheel_dump_entry *e, unsigned int max)
{
	struct twheel_dump_args args = { .count = 2 };
	unsigned int got = 0, calls;
	int ret;

	for (calls = 0; args.cursor != TWHEEL_DUMP_END && calls < 1000; calls++) {
		if (got + args.count > max)
			return -ENOSPC;
		args.entries = (uintptr_t)(e + got);
		if (by_ring)
			ret = ring_cmd(_metadata, ring, fd, TWHEEL_IOC_DUMP, &args);
		else
			ret = ioctl_res(fd, TWHEEL_IOC_DUMP, &args);
		if (ret < 0)
			return ret;
		got += ret;
	}
	return args.cursor == TWHEEL_DUMP_END ? (int)got : -ETIME;
}

/* DUMP as a ring command lists what the ioctl lists, moving the cursor. */
TEST_F(cmd, dump_lists_the_live_ids_as_the_ioctl_does)
{
	enum { IDS = 5, ROOM = 16 };
	struct twheel_dump_entry ea[ROOM], eb[ROOM];
	unsigned int i, mask = 0;

	for (i = 0; i < IDS; i++)
		ASSERT_EQ(0, dev_add(self->fd, 40 + i, LONG_NS));
	memset(ea, JUNK, sizeof(ea));
	memset(eb, JUNK, sizeof(eb));
	ASSERT_EQ(IDS, dump_all(_metadata, &self->ring, self->fd, false, ea, ROOM));
	ASSERT_EQ(IDS, dump_all(_metadata, &self->ring, self->fd, true, eb, ROOM));
	/* The same order (the wheel's key), the same deadlines. */
	EXPECT_EQ(0, memcmp(ea, eb, IDS * sizeof(ea[0])));
	for (i = 0; i < IDS; i++) {
		unsigned int k = eb[i].id - 40;

		ASSERT_GT(IDS, k) TH_LOG("stray id %llu", (unsigned long long)eb[i].id);
		EXPECT_FALSE(mask & 1U << k) TH_LOG("id %u twice", 40 + k);
		mask |= 1U << k;
		EXPECT_EQ(TWHEEL_SLOT_NONE, eb[i].slot);
		EXPECT_EQ(0, eb[i].pad);
	}
	note_workers();
	EXPECT_EQ(0, io_workers());
}

/* Every kind of bad argument: the ring's res is the ioctl's -errno. */
TEST_F(cmd, errors_match_the_ioctl)
{
	long page = sysconf(_SC_PAGESIZE);
	char *ro = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *gone = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct twheel_op op, ops[2];
	struct twheel_batch_args batch = { .ops = (uintptr_t)ops, .count = 2 };
	struct twheel_refresh_args refresh = { 0 };
	struct twheel_dump_entry de[1];
	struct twheel_dump_args dump = { .entries = (uintptr_t)de };
	int fresh = dev_open(O_CLOEXEC);
	int rdonly = open(TWHEEL_DEVICE, O_RDONLY | O_CLOEXEC);
	struct {
		const char *what;
		int fd;
		uint32_t cmd;
		void *arg;
		int want;
	} cases[] = {
		{ "unknown command", self->fd, _IO(TWHEEL_IOC_MAGIC, 99), &op, -ENOTTY },
		{ "another magic", self->fd, _IOW('x', 1, struct twheel_op), &op, -ENOTTY },
		{ "NULL op", self->fd, TWHEEL_IOC_OP, NULL, -EFAULT },
		{ "unmapped op", self->fd, TWHEEL_IOC_OP, gone, -EFAULT },
		{ "read-only op", self->fd, TWHEEL_IOC_OP, ro, -EFAULT },
		{ "bad op code", self->fd, TWHEEL_IOC_OP, &op, -EINVAL },
		{ "batch flags", self->fd, TWHEEL_IOC_BATCH, &batch, -EINVAL },
		{ "refresh pad", self->fd, TWHEEL_IOC_REFRESH, &refresh, -EINVAL },
		{ "dump count 0", self->fd, TWHEEL_IOC_DUMP, &dump, -EINVAL },
		{ "op before setup", fresh, TWHEEL_IOC_OP, &op, -EBADFD },
		{ "refresh before setup", fresh, TWHEEL_IOC_REFRESH, &refresh, -EBADFD },
		{ "op on an O_RDONLY fd", rdonly, TWHEEL_IOC_OP, &op, -EBADF },
	};
	unsigned int i;

	ASSERT_NE(MAP_FAILED, ro);
	ASSERT_NE(MAP_FAILED, gone);
	ASSERT_LE(0, fresh) TH_LOG("open: %s", strerror(-fresh));
	ASSERT_LE(0, rdonly) TH_LOG("open O_RDONLY: %s", strerror(errno));
	munmap(gone, page);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		int by_ioctl, by_ring;

		op_init(&op, 0, 1, 0, 0);
		batch.flags = 1;
		refresh.pad = 1;
		by_ioctl = ioctl_res(cases[i].fd, cases[i].cmd, cases[i].arg);
		op_init(&op, 0, 1, 0, 0);
		by_ring = ring_cmd(_metadata, &self->ring, cases[i].fd, cases[i].cmd, cases[i].arg);
		EXPECT_EQ(cases[i].want, by_ioctl) TH_LOG("%s: ioctl", cases[i].what);
		EXPECT_EQ(by_ioctl, by_ring) TH_LOG("%s: ring", cases[i].what);
	}
	EXPECT_EQ(0, fdinfo_get(self->fd, "live"));
	munmap(ro, page);
	close(fresh);
	close(rdonly);
	note_workers();
	EXPECT_EQ(0, io_workers());
}

/*
 * The command area's pad, and uring_cmd_flags, must be 0: EINVAL, and
 * nothing applied. IORING_URING_CMD_FIXED needs a registered buffer for
 * io_uring to pass it on (6.1 and later; 5.19 and 6.0 refuse any flag
 * themselves, with EINVAL too).
 */
TEST_F(cmd, command_area_pad_and_flags_must_be_zero)
{
	long page = sysconf(_SC_PAGESIZE);
	/*
	 * A page of its own, anonymous: io_uring refuses a buffer on pages
	 * of a file, or of a file and not (a static one may share .data's).
	 */
	void *buf = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct iovec iov = { .iov_base = buf, .iov_len = page };
	struct io_uring_sqe *sqe;
	struct twheel_op op;
	int ret;

	ASSERT_NE(MAP_FAILED, buf);
	dev_prep_add(&op, 1, LONG_NS);
	prep_ring_cmd_pad(sqe_of(&self->ring), self->fd, TWHEEL_IOC_OP, &op, 1);
	EXPECT_EQ(-EINVAL, ring_wait(_metadata, &self->ring)) TH_LOG("pad 1");
	prep_ring_cmd_pad(sqe_of(&self->ring), self->fd, TWHEEL_IOC_OP, &op, 1ULL << 63);
	EXPECT_EQ(-EINVAL, ring_wait(_metadata, &self->ring)) TH_LOG("pad bit 63");
	EXPECT_EQ(0, fdinfo_get(self->fd, "live"));

	ret = io_uring_register_buffers(&self->ring, &iov, 1);
	ASSERT_EQ(0, ret) TH_LOG("register_buffers: %s", strerror(-ret));
	sqe = sqe_of(&self->ring);
	prep_ring_cmd(sqe, self->fd, TWHEEL_IOC_OP, &op);
	sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
	sqe->buf_index = 0;
	EXPECT_EQ(-EINVAL, ring_wait(_metadata, &self->ring)) TH_LOG("IORING_URING_CMD_FIXED");
	EXPECT_EQ(0, fdinfo_get(self->fd, "live"));
	io_uring_unregister_buffers(&self->ring);
	munmap(buf, page);

	/* The same SQE, all zero but the command: applied. */
	prep_ring_cmd(sqe_of(&self->ring), self->fd, TWHEEL_IOC_OP, &op);
	EXPECT_EQ(0, ring_wait(_metadata, &self->ring));
	EXPECT_EQ(1, fdinfo_get(self->fd, "live"));
}

/* Many ring commands, and none of them needs a worker. */
TEST_F(cmd, ring_commands_run_inline)
{
	enum { N = 13 * 16 };
	struct twheel_op ops[16];
	unsigned int i, k;

	for (i = 0; i < N; i += 16) {
		for (k = 0; k < 16; k++) {
			dev_prep_refresh(&ops[k], i + k, DEV_TIMEOUT_DEFAULT,
					 TWHEEL_OPF_ADD_IF_ABSENT);
			prep_ring_cmd(sqe_of(&self->ring), self->fd, TWHEEL_IOC_OP, &ops[k]);
		}
		ASSERT_EQ(16, io_uring_submit_and_wait(&self->ring, 16));
		for (k = 0; k < 16; k++) {
			struct io_uring_cqe *cqe;

			ASSERT_EQ(0, io_uring_peek_cqe(&self->ring, &cqe));
			EXPECT_EQ(0, cqe->res);
			io_uring_cqe_seen(&self->ring, cqe);
			__atomic_add_fetch(&tally->cmds, 1, __ATOMIC_RELAXED);
		}
		for (k = 0; k < 16; k++)
			EXPECT_EQ(0, ops[k].result) TH_LOG("op %u", i + k);
		note_workers();
		EXPECT_EQ(0, io_workers());
	}
	EXPECT_EQ(N, fdinfo_get(self->fd, "live"));
}

/*
 * A command that returns a count completes with it from an io-wq worker
 * (IOSQE_ASYNC), and inline without failing the link it heads: io_uring
 * before 6.11 lost such a CQE from a worker and took such a count for a
 * failure inline, unless the device posts it itself (compat.h).
 */
TEST_F(cmd, counts_complete_from_a_worker_and_keep_a_link)
{
	struct twheel_dump_entry de[8];
	struct twheel_dump_args da = { .entries = (uintptr_t)de, .count = 8 };
	struct twheel_batch_args ba;
	struct twheel_op ops[3], q;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	unsigned int i;

	for (i = 0; i < 3; i++)
		dev_prep_add(&ops[i], 10 + i, LONG_NS);
	ba = (struct twheel_batch_args){ .ops = (uintptr_t)ops, .count = 3 };
	sqe = sqe_of(&self->ring);
	prep_ring_cmd(sqe, self->fd, TWHEEL_IOC_BATCH, &ba);
	sqe->flags |= IOSQE_ASYNC;
	EXPECT_EQ(3, ring_wait(_metadata, &self->ring)) TH_LOG("BATCH from a worker");
	sqe = sqe_of(&self->ring);
	prep_ring_cmd(sqe, self->fd, TWHEEL_IOC_DUMP, &da);
	sqe->flags |= IOSQE_ASYNC;
	EXPECT_EQ(3, ring_wait(_metadata, &self->ring)) TH_LOG("DUMP from a worker");

	/* Inline: a BATCH of 3 heading a link, then a QUERY it links to. */
	for (i = 0; i < 3; i++)
		dev_prep_add(&ops[i], 20 + i, LONG_NS);
	dev_prep_query(&q, 20);
	sqe = sqe_of(&self->ring);
	prep_ring_cmd(sqe, self->fd, TWHEEL_IOC_BATCH, &ba);
	sqe->flags |= IOSQE_IO_LINK;
	prep_ring_cmd(sqe_of(&self->ring), self->fd, TWHEEL_IOC_OP, &q);
	ASSERT_EQ(2, io_uring_submit(&self->ring));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, wait_cqe_ns(&self->ring, &cqe, WAIT_NS)) TH_LOG("CQE %u of the link", i);
		/* The batch's count, then the query's 0, not -ECANCELED. */
		EXPECT_EQ(i ? 0 : 3, cqe->res) TH_LOG("CQE %u of the link", i);
		io_uring_cqe_seen(&self->ring, cqe);
		__atomic_add_fetch(&tally->cmds, 1, __ATOMIC_RELAXED);
	}
	EXPECT_EQ(0, q.result);
	EXPECT_EQ(6, fdinfo_get(self->fd, "live"));
}

/* SETUP as a ring command (which io_uring runs from a worker) works. */
TEST_F(cmd, setup_as_a_ring_command)
{
	struct twheel_setup_args args = {
		.tick_ns = TICK_NS, .default_timeout_ns = DFLT_NS, .clockid = CLOCK_MONOTONIC,
	};
	int fd = dev_open(O_CLOEXEC);

	ASSERT_LE(0, fd) TH_LOG("open: %s", strerror(-fd));
	EXPECT_EQ(0, ring_cmd(_metadata, &self->ring, fd, TWHEEL_IOC_SETUP, &args));
	EXPECT_EQ(TICK_NS, fdinfo_get(fd, "tick_ns"));
	EXPECT_EQ(DFLT_NS, fdinfo_get(fd, "default_timeout_ns"));
	EXPECT_EQ(-EBUSY, ring_cmd(_metadata, &self->ring, fd, TWHEEL_IOC_SETUP, &args));
	EXPECT_EQ(0, dev_add(fd, 1, DEV_TIMEOUT_DEFAULT));
	close(fd);
}

/*
 * A ring command that cannot be carried out fails its SQE and changes
 * nothing: before 5.19 every one (io_uring has no such opcode: EINVAL),
 * since then one whose cmd_op the device does not know (ENOTTY, as the
 * ioctl). Runs on every kernel: one of the two holds.
 */
TEST(ring_command_that_cannot_be_done_fails_cleanly)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	struct twheel_op op;
	int fd, ret = ring_new(&ring, 4), want;
	unsigned int cmd = TWHEEL_IOC_OP;

	if (ret)
		SKIP(return, "no io_uring here (io_uring_setup: %s)", strerror(-ret));
	want = -EINVAL;
	if (op_supported(&ring, IORING_OP_URING_CMD)) {
		cmd = _IOWR(TWHEEL_IOC_MAGIC, 99, struct twheel_op);
		want = -ENOTTY;
	}
	fd = wheel_new(O_CLOEXEC, TICK_NS, DFLT_NS, 0);
	ASSERT_LE(0, fd) TH_LOG("wheel: %s", strerror(-fd));
	dev_prep_add(&op, 1, LONG_NS);
	prep_ring_cmd(sqe_of(&ring), fd, cmd, &op);
	ASSERT_EQ(1, io_uring_submit(&ring));
	ASSERT_EQ(0, wait_cqe_ns(&ring, &cqe, WAIT_NS));
	EXPECT_EQ(want, cqe->res) TH_LOG("cmd_op %#x", cmd);
	io_uring_cqe_seen(&ring, cqe);
	EXPECT_EQ(0, fdinfo_get(fd, "live"));
	close(fd);
	io_uring_queue_exit(&ring);
}

static pid_t main_pid;

/* The harness exits when its tests are done: the line comes from atexit. */
static void summary(void)
{
	struct utsname u;

	if (getpid() != main_pid)
		return;
	uname(&u);
	printf("# uring: kernel=%s reads=%llu iou_wrk_threads=%llu cmds=%llu\n", u.release,
	       (unsigned long long)tally->reads, (unsigned long long)tally->workers,
	       (unsigned long long)tally->cmds);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	main_pid = getpid();
	atexit(summary);
	return test_harness_run(argc, argv);
}
