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
 *   ledger [SECONDS [OP_THREADS [READERS]]]	(default 20 4 3)
 *
 * SECONDS defaults to $TWHEEL_STRESS_SECS, else 20. LEDGER_DROP_EVERY=N in
 * the environment makes the readers forget every Nth event, to show the
 * checker catches a lost expiry (the run must then fail).
 *
 * Runs longer than 20 s go in rounds of 20 s (ops, drain, check), so the
 * in-memory logs stay bounded. Prints TAP and "ledger: ops=N events=N
 * violations=N"; exits 1 on any violation.
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

struct oprec {
	uint64_t t0, t1;
	uint64_t id;
	uint64_t timeout;	/* the effective timeout */
	uint64_t deadline, remaining;
	uint32_t op, flags;
	int32_t result;
	uint32_t local;		/* index of the id in its thread's range */
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

struct opthread {
	pthread_t th;
	int idx;
	struct oprec *log;
	size_t n;
	uint64_t syscall_errors;
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
/* Self-test of the checker: forget every Nth event read ($LEDGER_DROP_EVERY). */
static unsigned long drop_every;
static atomic_int stop_ops, stop_readers;
static uint64_t run_until;
static struct opthread opth[MAX_THREADS];
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

static void log_op(struct opthread *ot, const struct twheel_op *op, uint32_t local,
		   uint64_t t0, uint64_t t1)
{
	struct oprec *r = &ot->log[ot->n++];

	r->t0 = t0;
	r->t1 = t1;
	r->id = op->id;
	r->timeout = op->flags & TWHEEL_OPF_TIMEOUT ? op->timeout_ns : DEF_TIMEOUT_NS;
	r->deadline = op->deadline_ns;
	r->remaining = op->remaining_ns;
	r->op = op->op;
	r->flags = op->flags;
	r->result = op->result;
	r->local = local;
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
			uint32_t i, n = 1 + rnd_below(&rs, MAX_BATCH);
			long ret;

			for (i = 0; i < n; i++)
				make_op(&rs, ot->idx, &ops[i], &locals[i]);
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
				log_op(ot, &ops[i], locals[i], t0, t1);
		} else {
			int ret;

			make_op(&rs, ot->idx, &ops[0], &locals[0]);
			t0 = mono_ns();
			ret = twheel_submit_op(wheel_fd, &ops[0]);
			t1 = mono_ns();
			if (ret == -EFAULT || ret == -EBADFD || ret == -ENOTTY || ret != ops[0].result) {
				ot->syscall_errors++;
				continue;
			}
			log_op(ot, &ops[0], locals[0], t0, t1);
		}
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
	"deadline early or off (vs. op time + timeout)",
	"incarnation lost (never delivered, not cancelled)",
	"event unexplained (duplicate, after cancel, or phantom)",
	"events out of deadline order within one read",
	"events out of deadline order across serialised reads",
	"syscall returned an unexpected value",
	"wheel not empty after drain",
};
enum { V_RESULT, V_EARLY_EV, V_DEADLINE, V_LOST, V_EXTRA, V_ORDER_READ, V_ORDER_GLOBAL,
       V_SYSCALL, V_DRAIN };
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

/* First unmatched event of @id with deadline @dl, or -1. */
static long find_ev(uint64_t id, uint64_t dl)
{
	size_t lo = 0, hi = n_ev;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (all_ev[mid].id < id || (all_ev[mid].id == id && all_ev[mid].deadline < dl))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n_ev && all_ev[lo].id == id && all_ev[lo].deadline == dl; lo++)
		if (!ev_matched[lo])
			return lo;
	return -1;
}

struct idstate {
	int live;
	uint64_t dl;
};

static uint64_t n_delivered, n_cancelled, n_incarnations;

static void check_deadline(const struct oprec *r)
{
	uint64_t now;

	if (r->deadline < r->t0 + r->timeout) {
		violation(V_DEADLINE, "id %#llx deadline %llu < t0 %llu + timeout %llu",
			  (unsigned long long)r->id, (unsigned long long)r->deadline,
			  (unsigned long long)r->t0, (unsigned long long)r->timeout);
		return;
	}
	if (r->deadline > r->t1 + r->timeout + TICK_NS)
		violation(V_DEADLINE, "id %#llx deadline %llu > t1 %llu + timeout %llu + tick",
			  (unsigned long long)r->id, (unsigned long long)r->deadline,
			  (unsigned long long)r->t1, (unsigned long long)r->timeout);
	if (r->remaining) {
		now = r->deadline - r->remaining;
		if (now < r->t0 || now > r->t1)
			violation(V_DEADLINE, "id %#llx remaining_ns %llu puts the op outside [t0, t1]",
				  (unsigned long long)r->id, (unsigned long long)r->remaining);
	}
}

static void close_by_event(struct idstate *st, long ev)
{
	ev_matched[ev] = 1;
	st->live = 0;
	n_delivered++;
}

static void open_inc(struct idstate *st, const struct oprec *r)
{
	st->live = 1;
	st->dl = r->deadline;
	n_incarnations++;
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

#define VR(cond_msg) violation(V_RESULT, "id %#llx %s -> %d at [%llu, %llu]: %s", \
			       (unsigned long long)r->id, op_name(r), r->result, \
			       (unsigned long long)r->t0, (unsigned long long)r->t1, cond_msg)

static void replay(struct opthread *ot)
{
	struct idstate st_all[IDS_PER_THREAD] = { 0 };
	size_t i;

	for (i = 0; i < ot->n; i++) {
		const struct oprec *r = &ot->log[i];
		struct idstate *st = &st_all[r->local];
		long ev = st->live ? find_ev(r->id, st->dl) : -1;
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
					close_by_event(st, ev);
				open_inc(st, r);
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
					open_inc(st, r);
				} else if (maybe && (surely || (aia && r->deadline != st->dl))) {
					if (!aia) {
						VR("refreshed after expiry");
						continue;
					}
					close_by_event(st, ev);
					open_inc(st, r);
				} else {
					st->dl = r->deadline;
					check_deadline(r);
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
				if (!st->live)
					VR("succeeded on an id that is not live");
				else if (surely)
					VR("succeeded after its expiry");
				else if (r->deadline != st->dl)
					VR("deadline differs from the last add/refresh");
				else if (r->op == TWHEEL_OP_CANCEL) {
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
				close_by_event(st, ev);
			else
				VR("ENOENT not explained by an expiry or a cancel");
		}
	}
	/* After the drain nothing may be live: each incarnation left has its event. */
	for (i = 0; i < IDS_PER_THREAD; i++) {
		struct idstate *st = &st_all[i];
		long ev;

		if (!st->live)
			continue;
		ev = find_ev(thread_id(ot->idx, i), st->dl);
		if (ev >= 0)
			close_by_event(st, ev);
		else
			violation(V_LOST, "id %#llx deadline %llu never delivered",
				  (unsigned long long)thread_id(ot->idx, i),
				  (unsigned long long)st->dl);
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

static uint64_t total_ops, total_events, rounds;
static uint64_t total_ns;

/*
 * One round: ops and readers for @secs, drain, check. Each round starts
 * and ends with an empty wheel, so rounds are checked independently and
 * the logs are reused.
 */
static void run_round(uint64_t secs)
{
	static const char *const mode_name[] = { "read", "poll", "epoll" };
	uint64_t ops = 0, maxdl = 0, start, drain_start, sys_err = 0;
	long long live = -1, waiting = -1;
	static struct twheel_op q[MAX_THREADS * IDS_PER_THREAD];
	int i, t, nq = 0, query_ok = 1;
	size_t k;

	atomic_store(&stop_ops, 0);
	atomic_store(&stop_readers, 0);
	start = mono_ns();
	run_until = start + secs * 1000000000ULL;
	for (i = 0; i < n_rdr; i++) {
		rdr[i].nev = rdr[i].ncalls = 0;
		rdr[i].bad_returns = 0;
		atomic_store(&rdr[i].done, 0);
		pthread_create(&rdr[i].th, NULL, reader_main, &rdr[i]);
	}
	for (t = 0; t < n_opth; t++) {
		opth[t].n = 0;
		opth[t].syscall_errors = 0;
		pthread_create(&opth[t].th, NULL, op_main, &opth[t]);
	}
	for (t = 0; t < n_opth; t++) {
		pthread_join(opth[t].th, NULL);
		ops += opth[t].n;
		sys_err += opth[t].syscall_errors;
		for (k = 0; k < opth[t].n; k++)
			if (opth[t].log[k].result == 0 && opth[t].log[k].deadline > maxdl &&
			    opth[t].log[k].op != TWHEEL_OP_CANCEL)
				maxdl = opth[t].log[k].deadline;
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
		if (rounds == 0)
			ksft_print_msg("reader %d (%s): %zu reads, %zu events\n", i,
				       mode_name[rdr[i].mode], rdr[i].ncalls, rdr[i].nev);
	}
	for (t = 0; t < n_opth; t++)
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
	for (t = 0; t < n_opth; t++)
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
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	uint64_t secs = arg_or_env(argc, argv, "TWHEEL_STRESS_SECS", 20), end, total;
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
	ksft_print_header();
	ksft_set_plan(7);
	wheel_fd = wheel_new(O_CLOEXEC, TICK_NS, DEF_TIMEOUT_NS, 0);
	if (wheel_fd < 0) {
		ksft_test_result(0, "open and set up %s: %s\n", TWHEEL_DEVICE, strerror(-wheel_fd));
		printf("ledger: ops=0 events=0 violations=1\n");
		return 1;
	}
	sigaction(SIGUSR1, &sa, NULL);	/* no SA_RESTART: blocked readers get EINTR */
	ksft_print_msg("%d op threads x %d ids, %d readers (read, poll, epoll), %llu s in rounds of up to %d s, tick 1 ms, timeouts 0..50 ms\n",
		       n_opth, IDS_PER_THREAD, n_rdr, (unsigned long long)secs, ROUND_SECS);
	for (i = 0; i < n_rdr; i++) {
		rdr[i].idx = i;
		rdr[i].mode = i % 3;
		rdr[i].ev = map_array(MAX_EVENTS_PER_READER * sizeof(struct evrec));
		rdr[i].calls = map_array(MAX_CALLS_PER_READER * sizeof(struct callrec));
	}
	for (t = 0; t < n_opth; t++) {
		opth[t].idx = t;
		opth[t].log = map_array(MAX_OPS_PER_THREAD * sizeof(struct oprec));
	}
	end = mono_ns() + secs * 1000000000ULL;
	do {
		uint64_t left = (end - mono_ns()) / 1000000000ULL;

		run_round(left < 1 ? 1 : left > ROUND_SECS ? ROUND_SECS : left);
	} while (mono_ns() + 1000000000ULL < end);

	ksft_print_msg("%llu rounds, %llu ops in %.1f s of ops, %llu incarnations: %llu delivered, %llu cancelled\n",
		       (unsigned long long)rounds, (unsigned long long)total_ops, total_ns / 1e9,
		       (unsigned long long)n_incarnations, (unsigned long long)n_delivered,
		       (unsigned long long)n_cancelled);
	ksft_test_result(!v_count[V_SYSCALL], "every call returned a value the ABI allows\n");
	ksft_test_result(!v_count[V_RESULT], "every op result explained by the ledger\n");
	ksft_test_result(!v_count[V_LOST] && !v_count[V_EXTRA],
			 "every incarnation delivered exactly once or cancelled and never delivered\n");
	ksft_test_result(!v_count[V_EARLY_EV] && !v_count[V_DEADLINE],
			 "no deadline or event early\n");
	ksft_test_result(!v_count[V_ORDER_READ], "events in deadline order within each read\n");
	ksft_test_result(!v_count[V_ORDER_GLOBAL],
			 "events in deadline order across serialised reads\n");
	ksft_test_result(!v_count[V_DRAIN],
			 "wheel empty after each drain (fdinfo live 0, QUERY ENOENT)\n");
	total = 0;
	for (i = 0; i < 16; i++)
		total += v_count[i];
	printf("ledger: ops=%llu events=%llu violations=%llu\n", (unsigned long long)total_ops,
	       (unsigned long long)total_events, (unsigned long long)total);
	close(wheel_fd);
	/* Every kind of violation fails one of the tests: exit 1. */
	ksft_finished();
}
