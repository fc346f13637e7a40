// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmark of the wheel core against the timer heaps of libuv and
 * libevent, side by side in one run, through their public APIs, and
 * against libuv's heap with the id map a user with ids must keep
 * (libuv-map: uthash, id -> timer).
 *
 * For each n (default 10^3 .. 10^7, or the one given on the command
 * line), each implementation gets the same workload, generated once:
 *   add      n entries with random timeouts, uniform 1 .. 30000 ms (one
 *            tick of the wheel is 1 ms);
 *   refresh  n refreshes of random existing entries to new random
 *            timeouts (at most OPS_SAMPLE of them, n entries present);
 *   cancel   n entries cancelled, in random order (at most OPS_SAMPLE;
 *            then they are added again, untimed);
 *   expire   all n made due and drained: ns per expired entry, the
 *            callback or pop included.
 * and the best of a few repetitions (fewer as n grows) is printed as
 *   bench: impl=NAME n=N op=OP ns=X
 *   bench: impl=NAME n=N bytes_per_entry=B
 * with extra lines starting with '#' (RSS measured, checksums).
 *
 * twheel: entries come from one big array (slab-like, no malloc per
 * entry), ids are 64-bit, and every add, refresh and cancel goes through
 * tw_lookup() by id, as the device does. The bare heaps are handed the
 * timer object itself, so they do less; libuv-map does what a user with
 * ids does: finds the timer by id (refresh, cancel), enters it in the map
 * (add) and takes it out (cancel, and in the expiry callback).
 * Expiry advances the wheel in one call sequence with a budget of 4096.
 *
 * BENCH_REPS and BENCH_IMPLS (e.g. "twheel libuv-map") in the
 * environment set the repetitions and the implementations run, for
 * profiles (make bench-profile).
 *
 * The heaps cannot be told what time it is, so their deadlines are put in
 * the past instead of waiting 30 s: libuv's loop time is read with
 * uv_update_time() and then set back 31 s by writing loop->time (a field
 * of uv_loop_t that uv_timer_start() adds the timeout to), and libevent
 * gets relative timeouts of (timeout - 31 s), which event_add() adds to
 * its monotonic clock. Deadlines keep their spread and order, so the
 * heaps do the same work as for real 1 .. 30 s timers, and the first
 * uv_run(UV_RUN_NOWAIT) / event_base_loop(EVLOOP_NONBLOCK | EVLOOP_ONCE)
 * finds them all due.
 */
#include <malloc.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <uthash.h>
#include <uv.h>

#include "core_util.h"
#include "twheel_test.h"

unsigned long tw_host_fail_alloc;

#define TIMEOUT_MS	30000u
#define PAST_MS		31000u
/* Refreshes and cancels per n: enough for a stable mean, fewer for time. */
#define OPS_SAMPLE	1000000u

enum { OP_ADD, OP_REFRESH, OP_CANCEL, OP_EXPIRE, NR_OPS };
static const char *const op_name[NR_OPS] = { "add", "refresh", "cancel", "expire" };

/* The workload, the same for every implementation at one n. */
static struct {
	size_t n;
	size_t ops;		/* refreshes and cancels: min(n, OPS_SAMPLE) */
	u32 *to_add;		/* timeout of entry i, ms */
	u32 *ref_idx;		/* entry of refresh j */
	u32 *to_ref;		/* its new timeout */
	u32 *perm;		/* cancel order */
} wl;

#define UTHASH_STR_(x)	#x
#define UTHASH_STR(x)	UTHASH_STR_(x)

static uint64_t rng = 0x853c49e6748fea9bull;

static u64 rnd(void)
{
	return rnd_next(&rng);
}

/*
 * The figures are CLOCK_MONOTONIC. The machine may be shared, so each
 * interval also reads the thread's CPU time, printed on '#' lines: the
 * two agree on an idle machine, CPU time leaves out time preempted.
 */
static u64 cpu_t0;

static u64 ns_now_start(void)
{
	cpu_t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	return mono_ns();
}

static u64 cpu_ns;

static u64 ns_now_end(void)
{
	u64 t = mono_ns();

	cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu_t0;
	return t;
}

static long rss_bytes(void)
{
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	return rss * sysconf(_SC_PAGESIZE);
}

static void *xmalloc(size_t size)
{
	void *p = malloc(size);

	if (!p) {
		fprintf(stderr, "bench: out of memory (%zu bytes)\n", size);
		exit(1);
	}
	return p;
}

static void workload_make(size_t n)
{
	size_t i;

	wl.n = n;
	wl.ops = n < OPS_SAMPLE ? n : OPS_SAMPLE;
	wl.to_add = xmalloc(n * sizeof(u32));
	wl.ref_idx = xmalloc(n * sizeof(u32));
	wl.to_ref = xmalloc(n * sizeof(u32));
	wl.perm = xmalloc(n * sizeof(u32));
	for (i = 0; i < n; i++) {
		wl.to_add[i] = 1 + rnd() % TIMEOUT_MS;
		wl.ref_idx[i] = rnd() % n;
		wl.to_ref[i] = 1 + rnd() % TIMEOUT_MS;
		wl.perm[i] = i;
	}
	for (i = n - 1; i > 0; i--) {
		size_t j = rnd() % (i + 1);
		u32 t = wl.perm[i];

		wl.perm[i] = wl.perm[j];
		wl.perm[j] = t;
	}
}

static void workload_free(void)
{
	free(wl.to_add);
	free(wl.ref_idx);
	free(wl.to_ref);
	free(wl.perm);
}

/* Best (lowest) ns per entry of each op over the repetitions. */
struct result {
	double ns[NR_OPS];
	double cpu[NR_OPS];
	double bytes;
	long rss_delta;
};

static void result_take(struct result *r, int op, u64 t0, u64 t1)
{
	size_t count = op == OP_REFRESH || op == OP_CANCEL ? wl.ops : wl.n;
	double ns = (double)(t1 - t0) / count, cpu = (double)cpu_ns / count;

	if (r->ns[op] == 0 || ns < r->ns[op])
		r->ns[op] = ns;
	if (r->cpu[op] == 0 || cpu < r->cpu[op])
		r->cpu[op] = cpu;
}

static void result_print(const char *impl, const struct result *r)
{
	int op;

	for (op = 0; op < NR_OPS; op++)
		printf("bench: impl=%s n=%zu op=%s ns=%.1f\n", impl, wl.n,
		       op_name[op], r->ns[op]);
	printf("bench: impl=%s n=%zu bytes_per_entry=%.1f\n", impl, wl.n, r->bytes);
	printf("# cpu: impl=%s n=%zu", impl, wl.n);
	for (op = 0; op < NR_OPS; op++)
		printf(" %s=%.1f", op_name[op], r->cpu[op]);
	printf("\n");
	if (wl.n >= 100000)
		printf("# rss: impl=%s n=%zu rss_bytes_per_entry=%.1f\n", impl,
		       wl.n, (double)r->rss_delta / wl.n);
	fflush(stdout);
}

/* ---- twheel ------------------------------------------------------------ */

static u64 tw_id(size_t i)
{
	return (u64)i * 0x9e3779b97f4a7c15ull + 12345;
}

static void tw_release_none(struct tw_entry *e, void *arg)
{
	(void)e;
	(void)arg;
}

/*
 * Each timed phase is a function of its own, never inlined, so that a
 * profile (callgrind, cachegrind: see docs/bench-core.md) gives its cost
 * per operation directly.
 */
static __attribute__((noinline)) void tw_phase_add(struct tw_wheel *w, struct tw_entry *ents)
{
	size_t i;

	for (i = 0; i < wl.n; i++) {
		struct tw_entry *e = &ents[i];

		e->id = tw_id(i);
		if (tw_lookup(w, e->id) || tw_test_add(w, e, w->clk + wl.to_add[i]))
			abort();
	}
}

static __attribute__((noinline)) void tw_phase_refresh(struct tw_wheel *w)
{
	size_t i;

	for (i = 0; i < wl.ops; i++) {
		struct tw_entry *e = tw_lookup(w, tw_id(wl.ref_idx[i]));

		tw_rearm(w, e, w->clk + wl.to_ref[i]);
	}
}

static __attribute__((noinline)) void tw_phase_cancel(struct tw_wheel *w)
{
	size_t i;

	for (i = 0; i < wl.ops; i++)
		tw_remove(w, tw_lookup(w, tw_id(wl.perm[i])));
}

static __attribute__((noinline)) size_t tw_phase_expire(struct tw_wheel *w, u64 *sum)
{
	struct tw_entry *e;
	size_t got = 0;

	for (;;) {
		bool done = tw_advance(w, TIMEOUT_MS, 4096, TIMEOUT_MS);

		while ((e = tw_pop_expired(w))) {
			*sum += e->id;
			got++;
		}
		if (done)
			return got;
	}
}

static void bench_twheel(struct result *r, struct tw_entry *ents, bool first)
{
	static struct tw_wheel w;
	size_t n = wl.n, i, got;
	u64 t0, t1, sum = 0;
	long rss0 = rss_bytes();

	tw_init(&w, 0, &tw_test_key);
	t0 = ns_now_start();
	tw_phase_add(&w, ents);
	t1 = ns_now_end();
	result_take(r, OP_ADD, t0, t1);
	if (first) {
		size_t buckets = (1ul << w.index.cur_bits) +
				 (w.index.old ? 1ul << w.index.old_bits : 0);

		r->bytes = sizeof(struct tw_entry) +
			   (double)(buckets * sizeof(void *) + sizeof(w)) / n;
		r->rss_delta = rss_bytes() - rss0;
	}

	t0 = ns_now_start();
	tw_phase_refresh(&w);
	t1 = ns_now_end();
	result_take(r, OP_REFRESH, t0, t1);

	t0 = ns_now_start();
	tw_phase_cancel(&w);
	t1 = ns_now_end();
	result_take(r, OP_CANCEL, t0, t1);
	if (w.nr_live != n - wl.ops)
		abort();

	/*
	 * Cancelling every entry (n <= OPS_SAMPLE) leaves the index asking to
	 * shrink, a move that takes thousands of index operations. Start it
	 * and finish its move first (untimed), so that the re-adds, which
	 * only set up the expiry phase, leave the phases before unaffected.
	 */
	tw_test_prepare(&w);
	while (w.index.old)
		tw_lookup(&w, 0);
	for (i = 0; i < wl.ops; i++)
		if (tw_test_add(&w, &ents[wl.perm[i]], w.clk + wl.to_add[wl.perm[i]]))
			abort();

	t0 = ns_now_start();
	got = tw_phase_expire(&w, &sum);
	t1 = ns_now_end();
	result_take(r, OP_EXPIRE, t0, t1);
	if (got != n || w.nr_live)
		abort();
	if (first)
		printf("# twheel n=%zu expired=%zu idsum=%llx\n", n, got,
		       (unsigned long long)sum);
	tw_destroy(&w, tw_release_none, NULL);
}

/* ---- libuv ------------------------------------------------------------- */

static size_t uv_fired;

static void uv_fire(uv_timer_t *t)
{
	(void)t;
	uv_fired++;
}

static __attribute__((noinline)) void uv_phase_add(uv_timer_t *timers)
{
	size_t i;

	for (i = 0; i < wl.n; i++)
		uv_timer_start(&timers[i], uv_fire, wl.to_add[i], 0);
}

static __attribute__((noinline)) void uv_phase_refresh(uv_timer_t *timers)
{
	size_t i;

	for (i = 0; i < wl.ops; i++)
		uv_timer_start(&timers[wl.ref_idx[i]], uv_fire, wl.to_ref[i], 0);
}

static __attribute__((noinline)) void uv_phase_cancel(uv_timer_t *timers)
{
	size_t i;

	for (i = 0; i < wl.ops; i++)
		uv_timer_stop(&timers[wl.perm[i]]);
}

static __attribute__((noinline)) unsigned int uv_phase_expire(uv_loop_t *loop)
{
	unsigned int runs = 0;

	uv_fired = 0;
	while (uv_fired < wl.n) {
		uv_run(loop, UV_RUN_NOWAIT);
		if (++runs > 1000000)
			abort();
	}
	return runs;
}

static void bench_libuv(struct result *r, uv_timer_t *timers, bool first)
{
	size_t n = wl.n, i;
	uv_loop_t loop;
	u64 t0, t1;
	long rss0 = rss_bytes();
	unsigned int runs;

	if (uv_loop_init(&loop))
		abort();
	for (i = 0; i < n; i++)
		uv_timer_init(&loop, &timers[i]);
	/* Fake time: deadlines 1 .. 30 s after a loop time 31 s ago. */
	uv_update_time(&loop);
	loop.time -= PAST_MS;

	t0 = ns_now_start();
	uv_phase_add(timers);
	t1 = ns_now_end();
	result_take(r, OP_ADD, t0, t1);
	if (first) {
		r->bytes = sizeof(uv_timer_t);
		r->rss_delta = rss_bytes() - rss0;
	}

	t0 = ns_now_start();
	uv_phase_refresh(timers);
	t1 = ns_now_end();
	result_take(r, OP_REFRESH, t0, t1);

	t0 = ns_now_start();
	uv_phase_cancel(timers);
	t1 = ns_now_end();
	result_take(r, OP_CANCEL, t0, t1);

	for (i = 0; i < wl.ops; i++)
		uv_timer_start(&timers[wl.perm[i]], uv_fire,
			       wl.to_add[wl.perm[i]], 0);

	t0 = ns_now_start();
	runs = uv_phase_expire(&loop);
	t1 = ns_now_end();
	result_take(r, OP_EXPIRE, t0, t1);
	if (first)
		printf("# libuv n=%zu fired=%zu uv_run calls=%u\n", n, uv_fired, runs);

	for (i = 0; i < n; i++)
		uv_close((uv_handle_t *)&timers[i], NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	if (uv_loop_close(&loop))
		abort();
}

/* ---- libuv + an id map ------------------------------------------------ */

/*
 * What a libuv user with ids keeps: a map id -> timer (uthash, keyed by
 * the 64-bit id, its default Jenkins hash), found on every refresh and
 * cancel, entered on add and left on cancel and expiry, the timer and its
 * map handle in one allocation (one array, as for twheel).
 */
struct uvm_timer {
	uv_timer_t timer;
	u64 id;
	UT_hash_handle hh;
};

static struct uvm_timer *uvm_map;
static size_t uvm_fired;

static void uvm_fire(uv_timer_t *t)
{
	struct uvm_timer *u = container_of(t, struct uvm_timer, timer);

	HASH_DEL(uvm_map, u);
	uvm_fired++;
}

static struct uvm_timer *uvm_find(u64 id)
{
	struct uvm_timer *u;

	HASH_FIND(hh, uvm_map, &id, sizeof(id), u);
	if (!u)
		abort();
	return u;
}

static __attribute__((noinline)) void uvm_phase_add(struct uvm_timer *ut)
{
	size_t i;

	for (i = 0; i < wl.n; i++) {
		struct uvm_timer *u = &ut[i], *dup;

		u->id = tw_id(i);
		HASH_FIND(hh, uvm_map, &u->id, sizeof(u->id), dup);
		if (dup)
			abort();
		HASH_ADD(hh, uvm_map, id, sizeof(u->id), u);
		uv_timer_start(&u->timer, uvm_fire, wl.to_add[i], 0);
	}
}

static __attribute__((noinline)) void uvm_phase_refresh(void)
{
	size_t i;

	for (i = 0; i < wl.ops; i++)
		uv_timer_start(&uvm_find(tw_id(wl.ref_idx[i]))->timer, uvm_fire,
			       wl.to_ref[i], 0);
}

static __attribute__((noinline)) void uvm_phase_cancel(void)
{
	size_t i;

	for (i = 0; i < wl.ops; i++) {
		struct uvm_timer *u = uvm_find(tw_id(wl.perm[i]));

		uv_timer_stop(&u->timer);
		HASH_DEL(uvm_map, u);
	}
}

static __attribute__((noinline)) unsigned int uvm_phase_expire(uv_loop_t *loop)
{
	unsigned int runs = 0;

	uvm_fired = 0;
	while (uvm_fired < wl.n) {
		uv_run(loop, UV_RUN_NOWAIT);
		if (++runs > 1000000)
			abort();
	}
	return runs;
}

static void bench_libuv_map(struct result *r, struct uvm_timer *ut, bool first)
{
	size_t n = wl.n, i;
	uv_loop_t loop;
	u64 t0, t1;
	long rss0 = rss_bytes();
	unsigned int runs;

	if (uv_loop_init(&loop))
		abort();
	for (i = 0; i < n; i++)
		uv_timer_init(&loop, &ut[i].timer);
	uv_update_time(&loop);
	loop.time -= PAST_MS;

	t0 = ns_now_start();
	uvm_phase_add(ut);
	t1 = ns_now_end();
	result_take(r, OP_ADD, t0, t1);
	if (first) {
		/* The entry, and the map's buckets and table, per entry. */
		r->bytes = sizeof(struct uvm_timer) +
			   (double)(uvm_map->hh.tbl->num_buckets * sizeof(UT_hash_bucket) +
				    sizeof(UT_hash_table)) / n;
		r->rss_delta = rss_bytes() - rss0;
	}

	t0 = ns_now_start();
	uvm_phase_refresh();
	t1 = ns_now_end();
	result_take(r, OP_REFRESH, t0, t1);

	t0 = ns_now_start();
	uvm_phase_cancel();
	t1 = ns_now_end();
	result_take(r, OP_CANCEL, t0, t1);
	if (HASH_COUNT(uvm_map) != n - wl.ops)
		abort();

	for (i = 0; i < wl.ops; i++) {
		struct uvm_timer *u = &ut[wl.perm[i]];

		HASH_ADD(hh, uvm_map, id, sizeof(u->id), u);
		uv_timer_start(&u->timer, uvm_fire, wl.to_add[wl.perm[i]], 0);
	}

	t0 = ns_now_start();
	runs = uvm_phase_expire(&loop);
	t1 = ns_now_end();
	result_take(r, OP_EXPIRE, t0, t1);
	if (HASH_COUNT(uvm_map))
		abort();
	if (first)
		printf("# libuv-map n=%zu fired=%zu uv_run calls=%u\n", n, uvm_fired, runs);

	HASH_CLEAR(hh, uvm_map);
	for (i = 0; i < n; i++)
		uv_close((uv_handle_t *)&ut[i].timer, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	if (uv_loop_close(&loop))
		abort();
}

/* ---- libevent ---------------------------------------------------------- */

static size_t ev_fired;

static void ev_fire(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	ev_fired++;
}

/* A relative timeout that lands @ms - 31 s from now, i.e. in the past. */
static struct timeval past_tv(u32 ms)
{
	long long us = ((long long)ms - PAST_MS) * 1000;
	struct timeval tv;

	tv.tv_sec = us / 1000000;
	tv.tv_usec = us % 1000000;
	if (tv.tv_usec < 0) {
		tv.tv_sec--;
		tv.tv_usec += 1000000;
	}
	return tv;
}

/* libevent's min-heap array doubles from 8 slots: its capacity for @n. */
static size_t ev_heap_capacity(size_t n)
{
	size_t a = 8;

	while (a < n)
		a *= 2;
	return a;
}

static __attribute__((noinline)) void ev_phase_add(struct event **evs)
{
	struct timeval tv;
	size_t i;

	for (i = 0; i < wl.n; i++) {
		tv = past_tv(wl.to_add[i]);
		evtimer_add(evs[i], &tv);
	}
}

static __attribute__((noinline)) void ev_phase_refresh(struct event **evs)
{
	struct timeval tv;
	size_t i;

	for (i = 0; i < wl.ops; i++) {
		tv = past_tv(wl.to_ref[i]);
		evtimer_add(evs[wl.ref_idx[i]], &tv);
	}
}

static __attribute__((noinline)) void ev_phase_cancel(struct event **evs)
{
	size_t i;

	for (i = 0; i < wl.ops; i++)
		evtimer_del(evs[wl.perm[i]]);
}

static __attribute__((noinline)) unsigned int ev_phase_expire(struct event_base *base)
{
	unsigned int loops = 0;

	ev_fired = 0;
	while (ev_fired < wl.n) {
		event_base_loop(base, EVLOOP_NONBLOCK | EVLOOP_ONCE);
		if (++loops > 1000000)
			abort();
	}
	return loops;
}

static void bench_libevent(struct result *r, struct event **evs, bool first)
{
	size_t n = wl.n, i;
	struct event_base *base = event_base_new();
	struct timeval tv;
	u64 t0, t1;
	long rss0;
	unsigned int loops;

	if (!base)
		abort();
	rss0 = rss_bytes();
	for (i = 0; i < n; i++) {
		evs[i] = evtimer_new(base, ev_fire, NULL);
		if (!evs[i])
			abort();
	}

	t0 = ns_now_start();
	ev_phase_add(evs);
	t1 = ns_now_end();
	result_take(r, OP_ADD, t0, t1);
	if (first) {
		r->bytes = event_get_struct_event_size() +
			   (double)ev_heap_capacity(n) * sizeof(void *) / n;
		r->rss_delta = rss_bytes() - rss0;
	}

	t0 = ns_now_start();
	ev_phase_refresh(evs);
	t1 = ns_now_end();
	result_take(r, OP_REFRESH, t0, t1);

	t0 = ns_now_start();
	ev_phase_cancel(evs);
	t1 = ns_now_end();
	result_take(r, OP_CANCEL, t0, t1);

	for (i = 0; i < wl.ops; i++) {
		tv = past_tv(wl.to_add[wl.perm[i]]);
		evtimer_add(evs[wl.perm[i]], &tv);
	}

	t0 = ns_now_start();
	loops = ev_phase_expire(base);
	t1 = ns_now_end();
	result_take(r, OP_EXPIRE, t0, t1);
	if (first)
		printf("# libevent n=%zu fired=%zu loops=%u\n", n, ev_fired, loops);

	for (i = 0; i < n; i++)
		event_free(evs[i]);
	event_base_free(base);
	malloc_trim(0);
}

static int reps_for(size_t n)
{
	const char *env = getenv("BENCH_REPS");

	if (env && atoi(env) > 0)
		return atoi(env);
	if (n <= 10000)
		return 5;
	if (n <= 100000)
		return 3;
	if (n <= 1000000)
		return 2;
	return 1;
}

/* BENCH_IMPLS="twheel libuv-map ..." runs only those (for profiles). */
static bool impl_wanted(const char *impl)
{
	const char *env = getenv("BENCH_IMPLS"), *p;
	size_t len = strlen(impl);

	if (!env || !*env)
		return true;
	for (p = strstr(env, impl); p; p = strstr(p + 1, impl))
		if ((p == env || p[-1] == ' ' || p[-1] == ',') &&
		    (p[len] == 0 || p[len] == ' ' || p[len] == ','))
			return true;
	return false;
}

static void bench_n(size_t n)
{
	struct result r;
	int rep, reps = reps_for(n);
	void *mem;

	workload_make(n);

	if (impl_wanted("twheel")) {
		memset(&r, 0, sizeof(r));
		mem = xmalloc(n * sizeof(struct tw_entry));
		for (rep = 0; rep < reps; rep++)
			bench_twheel(&r, mem, rep == 0);
		free(mem);
		result_print("twheel", &r);
	}

	if (impl_wanted("libuv")) {
		memset(&r, 0, sizeof(r));
		mem = xmalloc(n * sizeof(uv_timer_t));
		for (rep = 0; rep < reps; rep++)
			bench_libuv(&r, mem, rep == 0);
		free(mem);
		result_print("libuv", &r);
	}

	if (impl_wanted("libuv-map")) {
		memset(&r, 0, sizeof(r));
		mem = xmalloc(n * sizeof(struct uvm_timer));
		for (rep = 0; rep < reps; rep++)
			bench_libuv_map(&r, mem, rep == 0);
		free(mem);
		result_print("libuv-map", &r);
	}

	if (impl_wanted("libevent")) {
		memset(&r, 0, sizeof(r));
		mem = xmalloc(n * sizeof(struct event *));
		for (rep = 0; rep < reps; rep++)
			bench_libevent(&r, mem, rep == 0);
		free(mem);
		result_print("libevent", &r);
	}

	workload_free();
	malloc_trim(0);
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 1000, 10000, 100000, 1000000, 10000000 };
	unsigned int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# twheel core vs libuv %s (bare, and with a uthash %s id map) "
	       "vs libevent %s; tick 1 ms, timeouts 1..%u ms\n", uv_version_string(),
	       UTHASH_STR(UTHASH_VERSION), event_get_version(), TIMEOUT_MS);
	printf("# sizeof: tw_entry %zu, uv_timer_t %zu, libuv-map entry %zu, "
	       "struct event %zu\n", sizeof(struct tw_entry), sizeof(uv_timer_t),
	       sizeof(struct uvm_timer), event_get_struct_event_size());
	if (argc > 1) {
		double n = atof(argv[1]);

		if (n < 1 || n > 1e9) {
			fprintf(stderr, "usage: %s [N]\n", argv[0]);
			return 2;
		}
		bench_n((size_t)n);
		return 0;
	}
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		bench_n(sizes[i]);
	return 0;
}
