// SPDX-License-Identifier: GPL-2.0
/*
 * ledger: prove that one shared wheel neither loses, duplicates, invents
 * nor fires early any expiry under concurrent operations and readers.
 *
 * Op threads do random ADD / REFRESH / REFRESH|ADD_IF_ABSENT / CANCEL /
 * QUERY, single and in batches, on a 1 ms wheel with timeouts of 0..50 ms
 * over a small id space, so that operations keep colliding with expiries.
 * Each op thread owns a disjoint id range, so the operations on one id are
 * sequential and the ledger is decidable; readers (blocking read, poll +
 * read, epoll + read) are shared. Every call is logged in memory with
 * CLOCK_MONOTONIC stamps taken before and after it. After the run the ops
 * stop, the wheel is drained, and a checker replays each id's operations
 * against the events read: an event's expired_ns is stamped by the kernel
 * under the wheel's lock, so an expiry stamped before an op's start
 * happened before the op, one stamped after its end happened after it,
 * and the op's result decides the cases in between. Every incarnation
 * (a successful add to its cancel or its event) must be delivered exactly
 * once, or cancelled and never delivered; no event may be early or out of
 * deadline order; every ENOENT must be explained by an expiry.
 *
 * Rounds alternate between a wheel without a touch table and one with a
 * table. On the latter two more op threads bind their ids to touch slots
 * (ADD or REFRESH with TWHEEL_OPF_TOUCH: their own slot, another id's, or
 * none), with relative and absolute deadlines, and for each a toucher
 * thread stores the present time into those slots in bursts and pauses
 * (an id touched for 0-60 ms, then left alone for 0-120 ms), logging each
 * stamp s and the time c just after its store was made visible (a full
 * fence). The kernel reads a slot when the id's deadline comes, at or
 * after the expiry time E it stamps on the event, so the checker explains
 * each deadline a bound incarnation shows (QUERY, CANCEL, its event):
 *  - never early: not before its last ioctl arming's deadline, nor before
 *    grid(s + T) for the last stamp s stored visibly before E (c < E -
 *    VISIBLE_SLACK_NS) and after the arming call returned (T: the timeout
 *    a touch re-arms with, grid(x): the first tick end at or after x);
 *  - never later than a touch explains: not after grid(s + T) for the
 *    last stamp s taken before E, if any came after the arming began;
 *  - never going back between two ioctl armings; an unbound id's deadline
 *    is exactly its arming's.
 * Every deadline must also lie on the wheel's one tick grid.
 *
 *   ledger [SECONDS [OP_THREADS [READERS]]]	(default 20 4 3)
 *
 * SECONDS defaults to $TWHEEL_STRESS_SECS, else 20. Two self-tests of the
 * checker, each of which must make the run fail:
 *   LEDGER_DROP_EVERY=N		the readers forget every Nth event (a lost
 *				expiry);
 *   LEDGER_TOUCH_LIE_EVERY=N	every Nth touch is a lie: alternately the
 *				toucher logs a stamp it never stored (the
 *				kernel then expires an id the log says was
 *				touched) and stores a stamp a second ahead of
 *				the one it logs (the kernel then keeps an id
 *				longer than the log explains).
 *
 * Runs go in rounds of at most 20 s (ops, drain, check), at least one of
 * each kind, so the in-memory logs stay bounded. Prints TAP and "ledger:
 * ops=N events=N violations=N"; exits 1 on any violation.
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/mman.h>

#include "twheel_test.h"
#include "kselftest.h"

#define TICK_NS		(1 * NSEC_PER_MSEC)
#define DEF_TIMEOUT_NS	(10 * NSEC_PER_MSEC)
#define MAX_TIMEOUT_NS	(50 * NSEC_PER_MSEC)
#define IDS_PER_THREAD	256		/* small: ops on one id collide with its expiry */
#define MAX_BATCH	32
#define MAX_OPS_PER_THREAD	(1U << 20)
#define MAX_EVENTS_PER_READER	(1U << 21)
#define MAX_CALLS_PER_READER	(1U << 20)
#define READ_MAX	64		/* events per read(2), at most */
#define MAX_THREADS	16
#define TOUCH_THREADS	2		/* op threads binding ids, and as many touchers */
#define SLOTS_PER_THREAD IDS_PER_THREAD	/* each pair has its own range of slots */
#define MAX_TOUCHES	(1U << 21)	/* per toucher and round */
/*
 * A store the toucher saw visible at c counts as visible to a look that
 * read its clock at E > c + this. The fence orders the store before c;
 * the kernel reads the slot after E, but reading a clock is no ordering
 * point on every CPU, so a little slack stands in for one.
 */
#define VISIBLE_SLACK_NS	(100 * 1000ULL)
/* How much later than its logged stamp a lying toucher's store is. */
#define LIE_AHEAD_NS		NSEC_PER_SEC

struct oprec {
	uint64_t t0, t1;
	uint64_t id;
	uint64_t timeout;	/* the effective timeout: what a touch re-arms with */
	uint64_t abs;		/* the deadline asked for, with TWHEEL_OPF_ABSTIME */
	uint64_t deadline, remaining;
	uint32_t op, flags;
	int32_t result;
	uint32_t local;		/* index of the id in its thread's range */
	uint32_t slot;		/* with TWHEEL_OPF_TOUCH */
	uint32_t batch;		/* ops in its batch; 1 alone */
};

struct evrec {
	uint64_t id, deadline, expired;
	uint32_t call;		/* index in the reader's call log */
	uint32_t reader;
};

struct callrec {
	uint64_t t0, t1;
	uint64_t min_dl, max_dl;
	uint32_t nev;
	uint32_t reader;
};

/* One store into a touch slot: stamp s, visible by s + dc (the next clock read). */
struct touchrec {
	uint64_t s;
	uint32_t dc;
	uint32_t slot;		/* within the toucher's range */
};

struct opthread {
	pthread_t th;
	int idx;
	int touch;		/* binds its ids to the slots of toucher idx - n_opth */
	struct oprec *log;
	size_t n;
	uint64_t syscall_errors;
};

struct toucher {
	pthread_t th;
	int idx;
	struct touchrec *log;
	size_t n;
	uint64_t lies;
	int full;
	/* The checker's view: the log sorted by slot. */
	uint32_t first[SLOTS_PER_THREAD + 1];
	struct touchrec *by_slot;
};

struct reader {
	pthread_t th;
	int idx, mode;		/* 0 blocking read, 1 poll + read, 2 epoll + read */
	struct evrec *ev;
	size_t nev;
	struct callrec *calls;
	size_t ncalls;
	uint64_t bad_returns;
	atomic_int done;
};

static int wheel_fd;
static int touch_round;		/* this round's wheel has a touch table */
static struct twheel_touch table;
/* Self-tests of the checker: $LEDGER_DROP_EVERY, $LEDGER_TOUCH_LIE_EVERY. */
static unsigned long drop_every, lie_every;
static atomic_int stop_ops, stop_readers;
static uint64_t run_until;
static struct opthread opth[MAX_THREADS + TOUCH_THREADS];
static struct toucher tch[TOUCH_THREADS];
static struct reader rdr[MAX_THREADS];
static int n_opth = 4, n_rdr = 3;

static void *map_array(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	return p;
}

static uint64_t thread_id(int t, uint32_t local)
{
	/* Spread over the 64-bit space: 0 and high values included. */
	return local == 0 && t == 0 ? 0 : ((uint64_t)t << 58) ^ ((uint64_t)local * 0x9E3779B97F4A7C15ULL);
}

/* Op threads in this round: the plain ones, and the binding ones on a touch wheel. */
static int nr_opthreads(void)
{
	return n_opth + (touch_round ? TOUCH_THREADS : 0);
}

static void make_op(uint64_t *rs, int t, struct twheel_op *op, uint32_t *local)
{
	unsigned int r = rnd_below(rs, 100);
	uint32_t code, flags = 0;
	uint64_t timeout = 0;

	*local = rnd_below(rs, IDS_PER_THREAD);
	if (r < 35) {
		code = TWHEEL_OP_ADD;
	} else if (r < 55) {
		code = TWHEEL_OP_REFRESH;
	} else if (r < 75) {
		code = TWHEEL_OP_REFRESH;
		flags = TWHEEL_OPF_ADD_IF_ABSENT;
	} else if (r < 87) {
		code = TWHEEL_OP_CANCEL;
	} else {
		code = TWHEEL_OP_QUERY;
	}
	if ((code == TWHEEL_OP_ADD || code == TWHEEL_OP_REFRESH) && rnd_below(rs, 10)) {
		flags |= TWHEEL_OPF_TIMEOUT;
		timeout = rnd_below(rs, MAX_TIMEOUT_NS + 1);
	}
	op_init(op, code, thread_id(t, *local), flags, timeout);
}

/*
 * An op of a binding thread: as make_op(), with absolute deadlines too,
 * and ADD and REFRESH binding the id to its own slot, to another slot of
 * the range (slots are shared and reused), or to none.
 */
static void make_touch_op(uint64_t *rs, int t, struct twheel_op *op, uint32_t *local)
{
	uint32_t base = (t - n_opth) * SLOTS_PER_THREAD;
	unsigned int r;

	make_op(rs, t, op, local);
	if (op->op != TWHEEL_OP_ADD && op->op != TWHEEL_OP_REFRESH)
		return;
	if (rnd_below(rs, 10) == 0) {
		op->flags = (op->flags & ~TWHEEL_OPF_TIMEOUT) | TWHEEL_OPF_ABSTIME;
		op->timeout_ns = mono_ns() + rnd_below(rs, MAX_TIMEOUT_NS + 5 * NSEC_PER_MSEC) -
				 5 * NSEC_PER_MSEC;
	}
	r = rnd_below(rs, 100);
	if (op->op == TWHEEL_OP_ADD ? r < 85 : r < 25) {
		op->flags |= TWHEEL_OPF_TOUCH;
		r = rnd_below(rs, 100);
		op->slot = r < 70 ? base + *local : r < 85 ? base + rnd_below(rs, SLOTS_PER_THREAD)
							 : TWHEEL_SLOT_NONE;
	}
}

static void log_op(struct opthread *ot, const struct twheel_op *op, uint32_t local,
		   uint64_t t0, uint64_t t1, uint32_t batch)
{
	struct oprec *r = &ot->log[ot->n++];

	r->t0 = t0;
	r->t1 = t1;
	r->id = op->id;
	r->timeout = op->flags & TWHEEL_OPF_TIMEOUT && !(op->flags & TWHEEL_OPF_ABSTIME) ?
		     op->timeout_ns : DEF_TIMEOUT_NS;
	r->abs = op->flags & TWHEEL_OPF_ABSTIME ? op->timeout_ns : 0;
	r->deadline = op->deadline_ns;
	r->remaining = op->remaining_ns;
	r->op = op->op;
	r->flags = op->flags;
	r->result = op->result;
	r->local = local;
	r->slot = op->slot;
	r->batch = batch;
}

static void *op_main(void *arg)
{
	struct opthread *ot = arg;
	uint64_t rs = 0x1234567ULL * (ot->idx + 1);
	struct twheel_op ops[MAX_BATCH];
	uint32_t locals[MAX_BATCH];

	while (!atomic_load(&stop_ops) && mono_ns() < run_until &&
	       ot->n + MAX_BATCH < MAX_OPS_PER_THREAD) {
		uint64_t t0, t1;

		if (rnd_below(&rs, 100) < 12) {
			uint32_t i, n = 1 + rnd_below(&rs, ot->touch ? 8 : MAX_BATCH);
			long ret;

			for (i = 0; i < n; i++) {
				uint32_t j;

				if (ot->touch)
					make_touch_op(&rs, ot->idx, &ops[i], &locals[i]);
				else
					make_op(&rs, ot->idx, &ops[i], &locals[i]);
				/*
				 * One op per id in a batch: the lock may be
				 * dropped between ops of a batch, and an
				 * expiry in between could not be placed.
				 */
				for (j = 0; j < i && locals[j] != locals[i]; j++)
					;
				if (j < i)
					i--;
			}
			t0 = mono_ns();
			ret = twheel_batch(wheel_fd, ops, n);
			t1 = mono_ns();
			if (ret != (long)n) {
				/* No signal reaches op threads: a batch is whole. */
				ot->syscall_errors++;
				if (ret < 0)
					continue;
				n = ret;
			}
			for (i = 0; i < n; i++)
				log_op(ot, &ops[i], locals[i], t0, t1, n);
		} else {
			int ret;

			if (ot->touch)
				make_touch_op(&rs, ot->idx, &ops[0], &locals[0]);
			else
				make_op(&rs, ot->idx, &ops[0], &locals[0]);
			t0 = mono_ns();
			ret = twheel_submit_op(wheel_fd, &ops[0]);
			t1 = mono_ns();
			if (ret == -EFAULT || ret == -EBADFD || ret == -ENOTTY || ret != ops[0].result) {
				ot->syscall_errors++;
				continue;
			}
			log_op(ot, &ops[0], locals[0], t0, t1, 1);
		}
		/*
		 * Binding threads go slower, so that their ids live long
		 * enough between ops for touches to keep them or not.
		 */
		if (ot->touch)
			sleep_ns(50000 + rnd_below(&rs, 200000));
	}
	return NULL;
}

/*
 * Touch the slots of one range: each slot touched for 0-60 ms (every
 * other sweep of about 2 ms), then left alone for 0-120 ms, so that its
 * ids are kept alive for a while and then expire. Logs every stamp and
 * when its store was visible.
 */
static void *toucher_main(void *arg)
{
	struct toucher *tc = arg;
	uint64_t rs = 0x70c4ULL * (tc->idx + 3), until[SLOTS_PER_THREAD] = { 0 };
	uint32_t base = tc->idx * SLOTS_PER_THREAD, l;
	uint8_t active[SLOTS_PER_THREAD] = { 0 };
	uint64_t count = 0;

	while (!atomic_load(&stop_ops) && mono_ns() < run_until) {
		uint64_t now = mono_ns();

		for (l = 0; l < SLOTS_PER_THREAD; l++) {
			struct touchrec *t;
			uint64_t s, c;

			if (now >= until[l]) {
				active[l] = !active[l];
				until[l] = now + rnd_below(&rs, (active[l] ? 60 : 120) * NSEC_PER_MSEC);
			}
			if (!active[l] || rnd_below(&rs, 2))
				continue;
			if (tc->n == MAX_TOUCHES) {
				tc->full = 1;
				return NULL;
			}
			s = mono_ns();
			if (lie_every && ++count % lie_every == 0) {
				/*
				 * The self-test: a touch logged unlike what was
				 * stored. A stamp from the future is left alone
				 * until it is past, so that it shows.
				 */
				if (tc->lies++ % 2) {
					twheel_touch_at(&table, base + l, s + LIE_AHEAD_NS);
					active[l] = 0;
					until[l] = s + LIE_AHEAD_NS + 100 * NSEC_PER_MSEC;
				}
			} else {
				twheel_touch_at(&table, base + l, s);
			}
			atomic_thread_fence(memory_order_seq_cst);
			c = mono_ns();
			t = &tc->log[tc->n++];
			t->s = s;
			t->dc = c - s > UINT32_MAX ? UINT32_MAX : c - s;
			t->slot = l;
		}
		sleep_ns(2 * NSEC_PER_MSEC);
	}
	return NULL;
}

static void on_signal(int sig)
{
	(void)sig;
}

/* One read(2) of a random size; logs what it got. */
static void reader_read(struct reader *rd, uint64_t *rs)
{
	struct twheel_event buf[READ_MAX + 1];
	size_t want = 1 + rnd_below(rs, READ_MAX);
	size_t bytes = want * sizeof(buf[0]) + rnd_below(rs, sizeof(buf[0]));
	uint64_t t0, t1;
	ssize_t n;
	size_t i, k;
	struct callrec *c;

	if (rd->nev + READ_MAX > MAX_EVENTS_PER_READER || rd->ncalls + 1 > MAX_CALLS_PER_READER) {
		/* Out of log: stop the ops, keep draining without logging. */
		atomic_store(&stop_ops, 1);
		rd->bad_returns++;
		return;
	}
	t0 = mono_ns();
	n = read(wheel_fd, buf, bytes);
	t1 = mono_ns();
	if (n < 0) {
		if (errno != EINTR && errno != EAGAIN)
			rd->bad_returns++;
		return;
	}
	if (n == 0 || n % sizeof(buf[0]) || (size_t)n > want * sizeof(buf[0])) {
		rd->bad_returns++;
		return;
	}
	k = n / sizeof(buf[0]);
	c = &rd->calls[rd->ncalls];
	c->t0 = t0;
	c->t1 = t1;
	c->nev = 0;
	c->reader = rd->idx;
	c->min_dl = UINT64_MAX;
	c->max_dl = 0;
	for (i = 0; i < k; i++) {
		static atomic_ulong seen;
		struct evrec *e;

		if (drop_every && atomic_fetch_add(&seen, 1) % drop_every == drop_every - 1)
			continue;
		e = &rd->ev[rd->nev++];

		c->nev++;
		e->id = buf[i].id;
		e->deadline = buf[i].deadline_ns;
		e->expired = buf[i].expired_ns;
		e->call = rd->ncalls;
		e->reader = rd->idx;
		if (e->deadline < c->min_dl)
			c->min_dl = e->deadline;
		if (e->deadline > c->max_dl)
			c->max_dl = e->deadline;
	}
	rd->ncalls++;
}

static void *reader_main(void *arg)
{
	struct reader *rd = arg;
	uint64_t rs = 0xABCDEF1ULL * (rd->idx + 7);
	int epfd = -1;

	if (rd->mode == 2) {
		struct epoll_event ee = { .events = EPOLLIN };

		epfd = epoll_create1(EPOLL_CLOEXEC);
		if (epfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, wheel_fd, &ee))
			rd->bad_returns++;
	}
	while (!atomic_load(&stop_readers)) {
		if (rd->mode == 1) {
			struct pollfd p = { .fd = wheel_fd, .events = POLLIN };
			int r = poll(&p, 1, 100);

			if (r < 0 && errno != EINTR)
				rd->bad_returns++;
			if (r <= 0)
				continue;
			if (p.revents != POLLIN)
				rd->bad_returns++;
		} else if (rd->mode == 2) {
			struct epoll_event ee;
			int r = epoll_wait(epfd, &ee, 1, 100);

			if (r < 0 && errno != EINTR)
				rd->bad_returns++;
			if (r <= 0)
				continue;
		}
		reader_read(rd, &rs);
	}
	if (epfd >= 0)
		close(epfd);
	atomic_store(&rd->done, 1);
	return NULL;
}

/* ---- the checker ---- */

static struct evrec *all_ev;
static size_t n_ev;
static uint8_t *ev_matched;
static uint64_t v_count[16];
static const char *const v_name[16] = {
	"result not explained by the ledger",
	"event early (expired_ns < deadline_ns)",
	"deadline early or off (vs. op time + timeout, or off the tick grid)",
	"incarnation lost (never delivered, not cancelled)",
	"event unexplained (duplicate, after cancel, or phantom)",
	"events out of deadline order within one read",
	"events out of deadline order across serialised reads",
	"syscall returned an unexpected value",
	"wheel not empty after drain",
	"touched id expired before a touch visible in time allowed",
	"deadline not explained by its last arming or its touches",
};
enum { V_RESULT, V_EARLY_EV, V_DEADLINE, V_LOST, V_EXTRA, V_ORDER_READ, V_ORDER_GLOBAL,
       V_SYSCALL, V_DRAIN, V_TOUCH_IGNORED, V_TOUCH_UNEXPLAINED };
static int v_printed;

static void __attribute__((format(printf, 2, 3))) violation(int kind, const char *fmt, ...)
{
	va_list ap;

	v_count[kind]++;
	if (v_printed++ >= 30)
		return;
	printf("# violation: %s: ", v_name[kind]);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static int ev_cmp(const void *a, const void *b)
{
	const struct evrec *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	if (x->deadline != y->deadline)
		return x->deadline < y->deadline ? -1 : 1;
	if (x->expired != y->expired)
		return x->expired < y->expired ? -1 : 1;
	return 0;
}

/*
 * The ledger's state of one id: its live incarnation, and on a touch
 * wheel how its last ioctl arming left it.
 */
struct idstate {
	int live;
	uint64_t dl;		/* the deadline its last ADD or REFRESH gave */
	uint64_t seen_dl;	/* the latest deadline QUERY or CANCEL showed since */
	uint32_t slot;		/* bound to (global), or TWHEEL_SLOT_NONE */
	uint64_t tmo;		/* what a touch re-arms it with */
	uint64_t arm_t0, arm_t1;	/* the span of that arming call */
};

static uint64_t n_delivered, n_cancelled, n_incarnations;
static uint64_t n_bound, n_touch_kept;
static uint64_t grid_phase;	/* deadline % TICK_NS of this round's wheel */
static int grid_known;

/* The first tick end at or after @x: the deadline a touch at x - T gives. */
static uint64_t grid_up(uint64_t x)
{
	uint64_t r = (x + TICK_NS - grid_phase % TICK_NS) % TICK_NS;

	return r ? x + TICK_NS - r : x;
}

static void check_grid(uint64_t id, uint64_t dl, const char *what)
{
	if (!grid_known) {
		grid_phase = dl % TICK_NS;
		grid_known = 1;
	}
	if (dl % TICK_NS != grid_phase)
		violation(V_DEADLINE, "id %#llx %s deadline %llu off the tick grid (phase %llu)",
			  (unsigned long long)id, what, (unsigned long long)dl,
			  (unsigned long long)grid_phase);
}

static void check_deadline(const struct oprec *r)
{
	uint64_t now, lo, hi;

	check_grid(r->id, r->deadline, "armed");
	if (r->flags & TWHEEL_OPF_ABSTIME) {
		/* The first tick end at or after the later of the deadline and now. */
		lo = r->abs > r->t0 ? r->abs : r->t0;
		hi = (r->abs > r->t1 ? r->abs : r->t1) + TICK_NS;
	} else {
		lo = r->t0 + r->timeout;
		hi = r->t1 + r->timeout + TICK_NS;
	}
	if (r->deadline < lo) {
		violation(V_DEADLINE, "id %#llx deadline %llu < %llu (t0 %llu, timeout %llu, abs %llu)",
			  (unsigned long long)r->id, (unsigned long long)r->deadline,
			  (unsigned long long)lo, (unsigned long long)r->t0,
			  (unsigned long long)r->timeout, (unsigned long long)r->abs);
		return;
	}
	if (r->deadline > hi)
		violation(V_DEADLINE, "id %#llx deadline %llu > %llu (t1 %llu, timeout %llu, abs %llu)",
			  (unsigned long long)r->id, (unsigned long long)r->deadline,
			  (unsigned long long)hi, (unsigned long long)r->t1,
			  (unsigned long long)r->timeout, (unsigned long long)r->abs);
	if (r->remaining) {
		now = r->deadline - r->remaining;
		if (now < r->t0 || now > r->t1)
			violation(V_DEADLINE, "id %#llx remaining_ns %llu puts the op outside [t0, t1]",
				  (unsigned long long)r->id, (unsigned long long)r->remaining);
	}
}

/* ---- touches of one slot ---- */

/* Sort each toucher's log by slot, keeping each slot's touches in time order. */
static void index_touches(struct toucher *tc)
{
	uint32_t pos[SLOTS_PER_THREAD], l;
	size_t i;

	memset(tc->first, 0, sizeof(tc->first));
	for (i = 0; i < tc->n; i++)
		tc->first[tc->log[i].slot + 1]++;
	for (l = 0; l < SLOTS_PER_THREAD; l++) {
		tc->first[l + 1] += tc->first[l];
		pos[l] = tc->first[l];
	}
	for (i = 0; i < tc->n; i++)
		tc->by_slot[pos[tc->log[i].slot]++] = tc->log[i];
}

/* The touches of global slot @slot, in time order: *@n of them. */
static const struct touchrec *slot_touches(uint32_t slot, size_t *n)
{
	struct toucher *tc = &tch[slot / SLOTS_PER_THREAD];
	uint32_t l = slot % SLOTS_PER_THREAD;

	*n = tc->first[l + 1] - tc->first[l];
	return tc->by_slot + tc->first[l];
}

/* The last touch of @slot with a stamp below @t, or NULL. */
static const struct touchrec *last_stamp_before(uint32_t slot, uint64_t t)
{
	size_t n, lo = 0, hi;
	const struct touchrec *v = slot_touches(slot, &n);

	hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (v[mid].s < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &v[lo - 1] : NULL;
}

/* The last touch of @slot whose store was visible before @t, or NULL. */
static const struct touchrec *last_visible_before(uint32_t slot, uint64_t t)
{
	size_t n, lo = 0, hi;
	const struct touchrec *v = slot_touches(slot, &n);

	/* s + dc grows with s: one toucher, one clock, stores in order. */
	hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (v[mid].s + v[mid].dc < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &v[lo - 1] : NULL;
}

/*
 * The latest deadline the touches of a bound incarnation can explain by
 * time @t: its arming's, or grid(s + T) for the last stamp s taken
 * before @t, if that came after the arming began (the kernel counts a
 * stamp only if it is later than its arming, and takes a stamp from the
 * future as the time it looks, which is before @t).
 */
static uint64_t touch_explains(const struct idstate *st, uint64_t t)
{
	const struct touchrec *v = last_stamp_before(st->slot, t);
	uint64_t hi = st->dl;

	if (v && v->s > st->arm_t0 && grid_up(v->s + st->tmo) > hi)
		hi = grid_up(v->s + st->tmo);
	return hi;
}

/*
 * The event of the incarnation @st of @id, if it has one: the first
 * unmatched event of @id with the deadline its last arming gave, or, if
 * it is bound, with a deadline at or after that which its touches can
 * explain. Later incarnations have later deadlines than this one's event.
 */
static long find_ev(uint64_t id, const struct idstate *st)
{
	size_t lo = 0, hi = n_ev;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (all_ev[mid].id < id || (all_ev[mid].id == id && all_ev[mid].deadline < st->dl))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n_ev && all_ev[lo].id == id; lo++) {
		if (ev_matched[lo])
			continue;
		if (st->slot == TWHEEL_SLOT_NONE)
			return all_ev[lo].deadline == st->dl ? (long)lo : -1;
		return all_ev[lo].deadline <= touch_explains(st, all_ev[lo].expired) ? (long)lo : -1;
	}
	return -1;
}

/*
 * A deadline @dl that a bound incarnation showed at time @t (a QUERY or
 * CANCEL answer, or its event's): not before what it showed last, nor
 * later than its touches explain.
 */
static void check_touched_dl(struct idstate *st, uint64_t id, uint64_t dl, uint64_t t,
			     const char *what)
{
	uint64_t hi = touch_explains(st, t);

	if (dl < st->seen_dl)
		violation(V_TOUCH_UNEXPLAINED, "id %#llx %s deadline %llu went back from %llu without an ioctl",
			  (unsigned long long)id, what, (unsigned long long)dl,
			  (unsigned long long)st->seen_dl);
	else if (dl > hi)
		violation(V_TOUCH_UNEXPLAINED, "id %#llx slot %u %s deadline %llu at %llu: its arming (%llu at [%llu, %llu], timeout %llu) and its touches explain %llu at most",
			  (unsigned long long)id, st->slot, what, (unsigned long long)dl,
			  (unsigned long long)t, (unsigned long long)st->dl,
			  (unsigned long long)st->arm_t0, (unsigned long long)st->arm_t1,
			  (unsigned long long)st->tmo, (unsigned long long)hi);
	if (dl > st->seen_dl)
		st->seen_dl = dl;
}

/*
 * A bound incarnation expired with deadline @dl at @e: the last touch
 * visible before @e that came after its arming must not ask for more.
 */
static void check_touched_expiry(struct idstate *st, uint64_t id, uint64_t dl, uint64_t e)
{
	const struct touchrec *v;

	check_touched_dl(st, id, dl, e, "event");
	if (e < VISIBLE_SLACK_NS)
		return;
	v = last_visible_before(st->slot, e - VISIBLE_SLACK_NS);
	if (v && v->s > st->arm_t1 && grid_up(v->s + st->tmo) > dl)
		violation(V_TOUCH_IGNORED, "id %#llx slot %u expired at %llu with deadline %llu, but a touch at %llu (visible by %llu) asks for %llu (timeout %llu)",
			  (unsigned long long)id, st->slot, (unsigned long long)e,
			  (unsigned long long)dl, (unsigned long long)v->s,
			  (unsigned long long)(v->s + v->dc),
			  (unsigned long long)grid_up(v->s + st->tmo), (unsigned long long)st->tmo);
	if (dl > st->dl)
		n_touch_kept++;
}

static void close_by_event(struct idstate *st, uint64_t id, long ev)
{
	const struct evrec *e = &all_ev[ev];

	ev_matched[ev] = 1;
	st->live = 0;
	n_delivered++;
	check_grid(id, e->deadline, "event");
	if (st->slot != TWHEEL_SLOT_NONE)
		check_touched_expiry(st, id, e->deadline, e->expired);
	else if (e->deadline != st->dl)
		violation(V_TOUCH_UNEXPLAINED, "unbound id %#llx event deadline %llu, its last arming gave %llu",
			  (unsigned long long)id, (unsigned long long)e->deadline,
			  (unsigned long long)st->dl);
}

/* The ADD or REFRESH @r armed the id: its deadline, binding and touch timeout. */
static void arm(struct idstate *st, const struct oprec *r, int fresh)
{
	if (fresh) {
		st->live = 1;
		st->slot = TWHEEL_SLOT_NONE;
		n_incarnations++;
	}
	if (r->flags & TWHEEL_OPF_TOUCH)
		st->slot = r->slot;
	st->dl = st->seen_dl = r->deadline;
	st->tmo = r->timeout;
	st->arm_t0 = r->t0;
	st->arm_t1 = r->t1;
	n_bound += fresh && st->slot != TWHEEL_SLOT_NONE;
	check_deadline(r);
}

static const char *op_name(const struct oprec *r)
{
	switch (r->op) {
	case TWHEEL_OP_ADD: return "ADD";
	case TWHEEL_OP_REFRESH:
		return r->flags & TWHEEL_OPF_ADD_IF_ABSENT ? "REFRESH|AIA" : "REFRESH";
	case TWHEEL_OP_CANCEL: return "CANCEL";
	default: return "QUERY";
	}
}

#define VR(cond_msg) violation(V_RESULT, "id %#llx %s -> %d deadline %llu at [%llu, %llu] (batch of %u): %s%s", \
			       (unsigned long long)r->id, op_name(r), r->result, \
			       (unsigned long long)r->deadline, (unsigned long long)r->t0, \
			       (unsigned long long)r->t1, r->batch, cond_msg, \
			       ev_context(st, ev))

/* What the ledger thinks of an id, for a violation message. */
static const char *ev_context(const struct idstate *st, long ev)
{
	static char buf[200];

	snprintf(buf, sizeof(buf), " (live %d, armed deadline %llu, slot %#x; candidate event %s%llu expired %llu)",
		 st->live, (unsigned long long)st->dl, st->slot, ev < 0 ? "none " : "deadline ",
		 ev < 0 ? 0ULL : (unsigned long long)all_ev[ev].deadline,
		 ev < 0 ? 0ULL : (unsigned long long)all_ev[ev].expired);
	return buf;
}

static void replay(struct opthread *ot)
{
	static struct idstate st_all[IDS_PER_THREAD];
	size_t i;

	memset(st_all, 0, sizeof(st_all));
	for (i = 0; i < ot->n; i++) {
		const struct oprec *r = &ot->log[i];
		struct idstate *st = &st_all[r->local];
		long ev = st->live ? find_ev(r->id, st) : -1;
		int surely = ev >= 0 && all_ev[ev].expired < r->t0;	/* expired before the op */
		int maybe = ev >= 0 && all_ev[ev].expired <= r->t1;	/* may have */
		int aia = r->flags & TWHEEL_OPF_ADD_IF_ABSENT;

		switch (r->op) {
		case TWHEEL_OP_ADD:
			if (r->result == 0) {
				if (st->live && !maybe) {
					VR("added while live and not expired");
					continue;
				}
				if (st->live)
					close_by_event(st, r->id, ev);
				arm(st, r, 1);
			} else if (r->result == -EEXIST) {
				if (!st->live)
					VR("EEXIST but no incarnation is live");
				else if (surely)
					VR("EEXIST after its expiry was delivered");
			} else {
				VR("unexpected result");
			}
			break;
		case TWHEEL_OP_REFRESH:
			if (r->result == 0) {
				if (!st->live && !aia) {
					VR("refreshed an id that is not live");
				} else if (!st->live) {
					arm(st, r, 1);
				} else if (maybe && (surely || (st->slot == TWHEEL_SLOT_NONE ?
						aia && r->deadline != st->dl :
						all_ev[ev].deadline < r->deadline))) {
					/*
					 * An expiry processed before the refresh
					 * has a deadline before the one the
					 * refresh gives. One after it has the
					 * refresh's deadline, or a later one if
					 * a touch moved it.
					 */
					if (!aia) {
						VR("refreshed after expiry");
						continue;
					}
					close_by_event(st, r->id, ev);
					arm(st, r, 1);
				} else {
					arm(st, r, 0);
				}
				break;
			}
			if (r->result == -ENOENT && !aia)
				goto enoent;
			VR("unexpected result");
			break;
		case TWHEEL_OP_CANCEL:
		case TWHEEL_OP_QUERY:
			if (r->result == 0) {
				if (!st->live) {
					VR("succeeded on an id that is not live");
					break;
				}
				if (surely) {
					VR("succeeded after its expiry");
					break;
				}
				check_grid(r->id, r->deadline, op_name(r));
				if (st->slot != TWHEEL_SLOT_NONE)
					check_touched_dl(st, r->id, r->deadline, r->t1, op_name(r));
				else if (r->deadline != st->dl)
					VR("deadline differs from the last add/refresh");
				if (r->op == TWHEEL_OP_CANCEL) {
					st->live = 0;
					n_cancelled++;
				}
				break;
			}
			if (r->result == -ENOENT)
				goto enoent;
			VR("unexpected result");
			break;
		}
		continue;
enoent:
		if (st->live) {
			if (maybe)
				close_by_event(st, r->id, ev);
			else
				VR("ENOENT not explained by an expiry or a cancel");
		}
	}
	/* After the drain nothing may be live: each incarnation left has its event. */
	for (i = 0; i < IDS_PER_THREAD; i++) {
		struct idstate *st = &st_all[i];
		uint64_t id = thread_id(ot->idx, i);
		long ev;

		if (!st->live)
			continue;
		ev = find_ev(id, st);
		if (ev >= 0)
			close_by_event(st, id, ev);
		else
			violation(V_LOST, "id %#llx deadline %llu never delivered",
				  (unsigned long long)id, (unsigned long long)st->dl);
	}
}

static int call_t0_cmp(const void *a, const void *b)
{
	const struct callrec *x = a, *y = b;

	return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

static int call_t1_cmp(const void *a, const void *b)
{
	const struct callrec *x = a, *y = b;

	return x->t1 < y->t1 ? -1 : x->t1 > y->t1;
}

/* Reads that did not overlap in time were serialised: deadlines must not go back. */
static void check_global_order(void)
{
	size_t n = 0, i, j = 0;
	struct callrec *by_t0, *by_t1;
	uint64_t max_before = 0;
	int r;

	for (r = 0; r < n_rdr; r++)
		n += rdr[r].ncalls;
	by_t0 = calloc(n ? n : 1, sizeof(*by_t0));
	by_t1 = calloc(n ? n : 1, sizeof(*by_t1));
	n = 0;
	for (r = 0; r < n_rdr; r++) {
		memcpy(by_t0 + n, rdr[r].calls, rdr[r].ncalls * sizeof(*by_t0));
		n += rdr[r].ncalls;
	}
	memcpy(by_t1, by_t0, n * sizeof(*by_t0));
	qsort(by_t0, n, sizeof(*by_t0), call_t0_cmp);
	qsort(by_t1, n, sizeof(*by_t1), call_t1_cmp);
	for (i = 0; i < n; i++) {
		while (j < n && by_t1[j].t1 < by_t0[i].t0) {
			if (by_t1[j].max_dl > max_before)
				max_before = by_t1[j].max_dl;
			j++;
		}
		if (by_t0[i].min_dl < max_before)
			violation(V_ORDER_GLOBAL, "read at %llu (reader %u) returned deadline %llu after an earlier read returned %llu",
				  (unsigned long long)by_t0[i].t0, by_t0[i].reader,
				  (unsigned long long)by_t0[i].min_dl,
				  (unsigned long long)max_before);
	}
	free(by_t0);
	free(by_t1);
}

static void check_events(void)
{
	int r;
	size_t i;

	for (r = 0; r < n_rdr; r++) {
		struct reader *rd = &rdr[r];

		for (i = 0; i < rd->nev; i++) {
			struct evrec *e = &rd->ev[i];
			struct callrec *c = &rd->calls[e->call];

			if (e->expired < e->deadline)
				violation(V_EARLY_EV, "id %#llx deadline %llu expired %llu",
					  (unsigned long long)e->id, (unsigned long long)e->deadline,
					  (unsigned long long)e->expired);
			if (e->expired > c->t1)
				violation(V_EARLY_EV, "id %#llx expired_ns %llu after the read returned at %llu",
					  (unsigned long long)e->id, (unsigned long long)e->expired,
					  (unsigned long long)c->t1);
			if (i > 0 && rd->ev[i - 1].call == e->call && rd->ev[i - 1].deadline > e->deadline)
				violation(V_ORDER_READ, "reader %d: deadline %llu after %llu in one read",
					  r, (unsigned long long)e->deadline,
					  (unsigned long long)rd->ev[i - 1].deadline);
		}
	}
	check_global_order();
}

#define ROUND_SECS	20	/* a round's ops fit the in-memory logs */

static uint64_t total_ops, total_events, total_touches, total_lies, rounds, touch_rounds;
static uint64_t total_ns, touch_rearms;

/* This round's wheel: with a table of TOUCH_THREADS ranges of slots on touch rounds. */
static void open_wheel(void)
{
	struct twheel_setup_args a = {
		.tick_ns = TICK_NS,
		.default_timeout_ns = DEF_TIMEOUT_NS,
		.clockid = CLOCK_MONOTONIC,
	};
	int ret;

	wheel_fd = twheel_open(O_CLOEXEC);
	if (wheel_fd < 0) {
		ksft_exit_fail_msg("open %s: %s\n", TWHEEL_DEVICE, strerror(-wheel_fd));
	}
	if (touch_round) {
		a.flags = TWHEEL_SETUPF_TOUCH;
		a.touch_slots = TOUCH_THREADS * SLOTS_PER_THREAD;
	}
	ret = twheel_setup_params(wheel_fd, &a);
	if (!ret && touch_round)
		ret = twheel_touch_map(wheel_fd, a.touch_slots, CLOCK_MONOTONIC, &table);
	if (ret)
		ksft_exit_fail_msg("set up the %s wheel: %s\n", touch_round ? "touch" : "plain",
				   strerror(-ret));
}

/*
 * One round: ops and readers (and on a touch wheel, binding threads and
 * touchers) for @secs, drain, check. Each round has a wheel of its own,
 * which starts and ends empty, so rounds are checked independently and
 * the logs are reused.
 */
static void run_round(uint64_t secs)
{
	static const char *const mode_name[] = { "read", "poll", "epoll" };
	uint64_t ops = 0, maxdl = 0, start, drain_start, sys_err = 0;
	long long live = -1, waiting = -1;
	static struct twheel_op q[(MAX_THREADS + TOUCH_THREADS) * IDS_PER_THREAD];
	int i, t, nq = 0, query_ok = 1, nt = nr_opthreads();
	size_t k;

	open_wheel();
	atomic_store(&stop_ops, 0);
	atomic_store(&stop_readers, 0);
	grid_known = 0;
	start = mono_ns();
	run_until = start + secs * 1000000000ULL;
	for (i = 0; i < n_rdr; i++) {
		rdr[i].nev = rdr[i].ncalls = 0;
		rdr[i].bad_returns = 0;
		atomic_store(&rdr[i].done, 0);
		pthread_create(&rdr[i].th, NULL, reader_main, &rdr[i]);
	}
	for (t = 0; t < nt; t++) {
		opth[t].n = 0;
		opth[t].syscall_errors = 0;
		opth[t].touch = t >= n_opth;
		pthread_create(&opth[t].th, NULL, op_main, &opth[t]);
	}
	for (t = 0; touch_round && t < TOUCH_THREADS; t++) {
		tch[t].n = 0;
		tch[t].lies = 0;
		tch[t].full = 0;
		pthread_create(&tch[t].th, NULL, toucher_main, &tch[t]);
	}
	for (t = 0; t < nt; t++) {
		pthread_join(opth[t].th, NULL);
		ops += opth[t].n;
		sys_err += opth[t].syscall_errors;
		for (k = 0; k < opth[t].n; k++)
			if (opth[t].log[k].result == 0 && opth[t].log[k].deadline > maxdl &&
			    opth[t].log[k].op != TWHEEL_OP_CANCEL)
				maxdl = opth[t].log[k].deadline;
	}
	atomic_store(&stop_ops, 1);
	for (t = 0; touch_round && t < TOUCH_THREADS; t++) {
		pthread_join(tch[t].th, NULL);
		total_touches += tch[t].n;
		total_lies += tch[t].lies;
		if (tch[t].full)
			ksft_print_msg("toucher %d: log full, stopped touching early\n", t);
	}

	/* Drain: every deadline passed, the readers have taken everything. */
	drain_start = mono_ns();
	while (mono_ns() < drain_start + 30000000000ULL) {
		if (mono_ns() > maxdl + 20 * NSEC_PER_MSEC) {
			live = fdinfo_get(wheel_fd, "live");
			waiting = fdinfo_get(wheel_fd, "events_waiting");
			if (live == 0 && waiting == 0)
				break;
		}
		sleep_ns(20 * NSEC_PER_MSEC);
	}
	atomic_store(&stop_readers, 1);
	for (i = 0; i < n_rdr; i++) {
		while (!atomic_load(&rdr[i].done)) {
			pthread_kill(rdr[i].th, SIGUSR1);
			sleep_ns(5 * NSEC_PER_MSEC);
		}
		pthread_join(rdr[i].th, NULL);
		sys_err += rdr[i].bad_returns;
		if (rounds < 2)
			ksft_print_msg("%s round, reader %d (%s): %zu reads, %zu events\n",
				       touch_round ? "touch" : "plain", i, mode_name[rdr[i].mode],
				       rdr[i].ncalls, rdr[i].nev);
	}
	for (t = 0; t < nt; t++)
		for (k = 0; k < IDS_PER_THREAD; k++, nq++)
			op_init(&q[nq], TWHEEL_OP_QUERY, thread_id(t, k), 0, 0);
	if (twheel_batch(wheel_fd, q, nq) != nq)
		query_ok = 0;
	for (i = 0; i < nq; i++)
		if (q[i].result != -ENOENT)
			query_ok = 0;
	if (live || waiting || !query_ok)
		violation(V_DRAIN, "after the drain: live %lld, events_waiting %lld, query all ENOENT: %s",
			  live, waiting, query_ok ? "yes" : "no");
	if (sys_err)
		violation(V_SYSCALL, "%llu calls returned something outside the ABI",
			  (unsigned long long)sys_err);
	if (touch_round) {
		touch_rearms += fdinfo_get(wheel_fd, "touch_rearms");
		twheel_touch_unmap(&table);
	}
	close(wheel_fd);

	/* Check. */
	n_ev = 0;
	for (i = 0; i < n_rdr; i++)
		n_ev += rdr[i].nev;
	all_ev = malloc((n_ev ? n_ev : 1) * sizeof(*all_ev));
	ev_matched = calloc(n_ev ? n_ev : 1, 1);
	n_ev = 0;
	for (i = 0; i < n_rdr; i++) {
		memcpy(all_ev + n_ev, rdr[i].ev, rdr[i].nev * sizeof(*all_ev));
		n_ev += rdr[i].nev;
	}
	qsort(all_ev, n_ev, sizeof(*all_ev), ev_cmp);
	check_events();
	for (t = 0; touch_round && t < TOUCH_THREADS; t++)
		index_touches(&tch[t]);
	for (t = 0; t < nt; t++)
		replay(&opth[t]);
	for (k = 0; k < n_ev; k++)
		if (!ev_matched[k])
			violation(V_EXTRA, "id %#llx deadline %llu expired %llu",
				  (unsigned long long)all_ev[k].id,
				  (unsigned long long)all_ev[k].deadline,
				  (unsigned long long)all_ev[k].expired);
	free(all_ev);
	free(ev_matched);
	total_ops += ops;
	total_events += n_ev;
	total_ns += drain_start - start;
	rounds++;
	touch_rounds += touch_round;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	uint64_t secs = arg_or_env(argc, argv, "TWHEEL_STRESS_SECS", 20), end, total, nrounds;
	int i, t;

	if (argc > 2)
		n_opth = atoi(argv[2]);
	if (argc > 3)
		n_rdr = atoi(argv[3]);
	if (n_opth < 1 || n_opth > MAX_THREADS || n_rdr < 1 || n_rdr > MAX_THREADS) {
		fprintf(stderr, "usage: ledger [SECONDS [OP_THREADS (1-16) [READERS (1-16)]]]\n");
		return 2;
	}
	if (getenv("LEDGER_DROP_EVERY"))
		drop_every = strtoul(getenv("LEDGER_DROP_EVERY"), NULL, 0);
	if (getenv("LEDGER_TOUCH_LIE_EVERY"))
		lie_every = strtoul(getenv("LEDGER_TOUCH_LIE_EVERY"), NULL, 0);
	ksft_print_header();
	ksft_set_plan(9);
	sigaction(SIGUSR1, &sa, NULL);	/* no SA_RESTART: blocked readers get EINTR */
	/* Rounds of up to ROUND_SECS, a plain and a touch one at least, alternating. */
	nrounds = (secs + ROUND_SECS - 1) / ROUND_SECS;
	if (nrounds < 2)
		nrounds = 2;
	ksft_print_msg("%d op threads x %d ids, %d readers (read, poll, epoll), %llu s in %llu rounds, plain and touch wheels in turn, tick 1 ms, timeouts 0..50 ms\n",
		       n_opth, IDS_PER_THREAD, n_rdr, (unsigned long long)secs,
		       (unsigned long long)nrounds);
	ksft_print_msg("touch rounds: %d more op threads binding ids to slots, %d touchers%s\n",
		       TOUCH_THREADS, TOUCH_THREADS, lie_every ? ", touchers lying" : "");
	for (i = 0; i < n_rdr; i++) {
		rdr[i].idx = i;
		rdr[i].mode = i % 3;
		rdr[i].ev = map_array(MAX_EVENTS_PER_READER * sizeof(struct evrec));
		rdr[i].calls = map_array(MAX_CALLS_PER_READER * sizeof(struct callrec));
	}
	for (t = 0; t < n_opth + TOUCH_THREADS; t++) {
		opth[t].idx = t;
		opth[t].log = map_array(MAX_OPS_PER_THREAD * sizeof(struct oprec));
	}
	for (t = 0; t < TOUCH_THREADS; t++) {
		tch[t].idx = t;
		tch[t].log = map_array(MAX_TOUCHES * sizeof(struct touchrec));
		tch[t].by_slot = map_array(MAX_TOUCHES * sizeof(struct touchrec));
	}
	end = mono_ns() + secs * 1000000000ULL;
	do {
		uint64_t now = mono_ns(), left = now < end ? (end - now) / 1000000000ULL : 0;
		uint64_t todo = nrounds > rounds ? nrounds - rounds : 1;
		uint64_t len = (left + todo - 1) / todo;

		touch_round = rounds % 2;
		run_round(len < 1 ? 1 : len > ROUND_SECS ? ROUND_SECS : len);
	} while (rounds < nrounds || mono_ns() + 1000000000ULL < end);

	ksft_print_msg("%llu rounds (%llu with touches), %llu ops in %.1f s of ops, %llu incarnations: %llu delivered, %llu cancelled\n",
		       (unsigned long long)rounds, (unsigned long long)touch_rounds,
		       (unsigned long long)total_ops, total_ns / 1e9,
		       (unsigned long long)n_incarnations, (unsigned long long)n_delivered,
		       (unsigned long long)n_cancelled);
	ksft_print_msg("touches: %llu stores (%llu lies), %llu bound incarnations, %llu expired later than their arming said, %llu re-arms by touch (fdinfo)\n",
		       (unsigned long long)total_touches, (unsigned long long)total_lies,
		       (unsigned long long)n_bound, (unsigned long long)n_touch_kept,
		       (unsigned long long)touch_rearms);
	ksft_test_result(!v_count[V_SYSCALL], "every call returned a value the ABI allows\n");
	ksft_test_result(!v_count[V_RESULT], "every op result explained by the ledger\n");
	ksft_test_result(!v_count[V_LOST] && !v_count[V_EXTRA],
			 "every incarnation delivered exactly once or cancelled and never delivered\n");
	ksft_test_result(!v_count[V_EARLY_EV] && !v_count[V_DEADLINE],
			 "no deadline or event early, every deadline on the tick grid\n");
	ksft_test_result(!v_count[V_ORDER_READ], "events in deadline order within each read\n");
	ksft_test_result(!v_count[V_ORDER_GLOBAL],
			 "events in deadline order across serialised reads\n");
	ksft_test_result(!v_count[V_DRAIN],
			 "wheel empty after each drain (fdinfo live 0, QUERY ENOENT)\n");
	ksft_test_result(!v_count[V_TOUCH_IGNORED],
			 "no touched id expired while a touch visible in time asked for later\n");
	ksft_test_result(!v_count[V_TOUCH_UNEXPLAINED] && touch_rounds && n_touch_kept,
			 "every deadline explained by its arming or its touches (%llu kept alive by a touch)\n",
			 (unsigned long long)n_touch_kept);
	total = 0;
	for (i = 0; i < 16; i++)
		total += v_count[i];
	printf("ledger: ops=%llu events=%llu violations=%llu\n", (unsigned long long)total_ops,
	       (unsigned long long)total_events, (unsigned long long)total);
	/* Every kind of violation fails one of the tests: exit 1. */
	ksft_finished();
}
