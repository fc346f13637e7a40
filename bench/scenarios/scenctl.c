// SPDX-License-Identifier: GPL-2.0
/*
 * scenctl: the harness of the scenario benchmark (bench/scenarios).
 *
 *   scenctl gen im|ride|orders [-k SCALE] [-n IDS] [-p NS] [-s SEED] -o FILE
 *	Write the schedule of a seed's scenario (scen.h), time divided by
 *	SCALE, counts kept (README.md says what is kept and what scaled),
 *	at the precision NS (in the seeds' time; default their 1 s): the
 *	tick of every way, NS / SCALE, and the loop's gathering wait, the
 *	least of 1 ms and NS / 10, divided by SCALE.
 *   scenctl kwidle
 *	The CPU time kernel threads outside any test take in an idle
 *	second, in ns: the noise subtracted from the module's share.
 *   scenctl run -S FILE -w WAY -c CGROUP [-r RES_NS] [-b CPU_NS,MEM[,OFF,LIVE]]
 *		 [-i KW_IDLE_NS] [-e SERVER_CMD] -- DRIVER ARGS...
 *	Run one way: the server (SERVER_CMD, through /bin/sh) and the
 *	driver in the cgroup CGROUP (made here, removed after), the
 *	driver speaking the protocol of scen.h. Prints the row
 *	  scenario: name=S way=W refreshes=N cpu_ns_per_refresh=C
 *	    bytes_per_id=B late_p50_ms=.. late_p99_ms=.. late_max_ms=..
 *	    wrong=N ...details
 *	-b: the driver runtime's own cost, from its null way (cpu_window_ns,
 *	mem_max, off_heap and heap_live of that row), subtracted; -r: the
 *	way's API resolution
 *	(1 ms for an API in ms): an expiry at most that early is counted
 *	apart, not as wrong.
 *
 * What is measured, between the schedule's marks 1 and 2 (the steady
 * state: every id armed, refreshed or paid as the scenario says):
 *  - CPU: the cgroup's cpu.stat usage_usec (every process of the way, the
 *    Redis server included, and any kernel thread that runs in the
 *    cgroup), plus the CPU time of kernel threads outside it (kworkers,
 *    where the module's expiry and touch work runs, or any thread named
 *    twheel*) less their idle rate; per refresh (per order placed, for
 *    orders, which pays its add and its cancel or expiry).
 *  - Memory: the most memory.current showed (sampled every 50 ms), less
 *    the null way's: user memory of every process plus the kernel memory
 *    charged to the cgroup (slab of the module, timerfds' files, epoll
 *    items, socket buffers), per live id. A driver with a garbage
 *    collector says instead, once the window is sampled, "heap LIVE
 *    COMMITTED": its live heap after a full collection and the heap it
 *    holds from the kernel; then memory.current is read at once, and
 *    the bytes are what is not heap (memory.current - COMMITTED: the
 *    kernel's share, native memory, the runtime) and the live heap,
 *    each less the null way's: what an id keeps, not the garbage a
 *    collector lets grow.
 *  - Every expiry against the schedule: none early, none of an id that
 *    was refreshed or cancelled in time (a live one), none twice, none
 *    of the silent ids missing; lateness after the true deadline (the
 *    last arm's scheduled time + timeout) of those right. An expiry
 *    excused because the driver applied its refresh only after the old
 *    deadline (late_refresh) does not count towards twice: the way then
 *    applies that refresh as a new arm, whose own expiry is judged.
 */
#include <dirent.h>
#include <getopt.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "twheel_test.h"
#include "scen.h"

static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "scenctl: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, ": %s\n", strerror(errno));
	exit(1);
}

/* ---- gen ---- */

struct gen {
	struct scen_event *ev;
	size_t n, cap;
	uint64_t seed;
};

static void emit(struct gen *g, uint64_t t_us, uint32_t id, uint32_t op)
{
	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 1 << 20;
		g->ev = realloc(g->ev, g->cap * sizeof(*g->ev));
		if (!g->ev)
			die("%s", "realloc");
	}
	g->ev[g->n].t_us = t_us;
	g->ev[g->n].id_op = id | op << SCEN_ID_BITS;
	g->n++;
}

/* Uniform in [lo, hi) us. */
static uint64_t uni(struct gen *g, double lo, double hi)
{
	return (uint64_t)(lo + (hi - lo) * (rnd_next(&g->seed) >> 11) / (double)(1ULL << 53));
}

static int cmp_event(const void *a, const void *b)
{
	const struct scen_event *x = a, *y = b;

	if (x->t_us != y->t_us)
		return x->t_us < y->t_us ? -1 : 1;
	return x->id_op < y->id_op ? -1 : x->id_op > y->id_op;
}

/*
 * Heartbeats (im, ride): each id is added at a random time in the first
 * 0.9 T and refreshed every 0.75 to 0.9 T from then on (never later: a
 * live id never comes within 0.1 T of its deadline); one in ten goes
 * silent at a random time between 0.5 T and W T, after which it sends
 * nothing. Steady state from T (mark 1) to the end, (W + 1.2) T, when
 * every silent id has been due for at least 0.2 T.
 */
static void gen_heartbeat(struct gen *g, struct scen_hdr *h, double w)
{
	double T = h->timeout_ns / 1000.0, end = (w + 1.2) * T;
	uint64_t id;

	for (id = 0; id < h->nr_ids; id++) {
		double t = uni(g, 0, 0.9 * T);
		double silent = id % 10 == 3 ? uni(g, 0.5 * T, w * T) : end;

		emit(g, t, id, SCEN_ADD);
		for (;;) {
			t += uni(g, 0.75 * T, 0.9 * T);
			if (t >= end || t > silent)
				break;
			emit(g, t, id, SCEN_REFRESH);
		}
	}
	h->end_us = end;
	h->live_ids = h->nr_ids;
	emit(g, T, 1, SCEN_MARK);
	emit(g, end, 2, SCEN_MARK);
}

/*
 * Orders: placed at an even rate that keeps live_ids open (each lives
 * 0.75 T on average: half are paid, uniformly within 0.9 T of being
 * placed, and cancelled then; half stay unpaid and expire at T), from 0
 * to the end, 1.8 T. Steady state from T (mark 1): the orders placed
 * before then have all been paid or come due.
 */
static void gen_orders(struct gen *g, struct scen_hdr *h)
{
	double T = h->timeout_ns / 1000.0, end = 1.8 * T;
	double gap = 0.75 * T / h->live_ids, t;
	uint64_t id = 0;

	for (t = 0; t < end; t += gap, id++) {
		emit(g, t, id, SCEN_ADD);
		if (rnd_next(&g->seed) & 1) {
			double paid = t + uni(g, 0, 0.9 * T);

			if (paid < end)
				emit(g, paid, id, SCEN_CANCEL);
		}
	}
	if (id >= 1U << SCEN_ID_BITS) {
		errno = ERANGE;
		die("%s", "too many orders");
	}
	h->nr_ids = id;
	h->end_us = end;
	emit(g, T, 1, SCEN_MARK);
	emit(g, end, 2, SCEN_MARK);
}

/* @ns in the unit that says it whole: 1s, 10ms, 250us, 70ns. */
static const char *dur(uint64_t ns, char *buf, size_t len)
{
	if (ns && ns % NSEC_PER_SEC == 0)
		snprintf(buf, len, "%llus", (unsigned long long)(ns / NSEC_PER_SEC));
	else if (ns && ns % NSEC_PER_MSEC == 0)
		snprintf(buf, len, "%llums", (unsigned long long)(ns / NSEC_PER_MSEC));
	else if (ns && ns % 1000 == 0)
		snprintf(buf, len, "%lluus", (unsigned long long)(ns / 1000));
	else
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
	return buf;
}

static int cmd_gen(int argc, char **argv)
{
	struct scen_hdr h = { .magic = SCEN_MAGIC };
	struct gen g = { .seed = 0x5eed5eedULL };
	const char *out = NULL, *name;
	uint64_t n = 0, full_ns;
	char pbuf[32];
	int opt, fd;

	h.scale = 0;
	/* The seeds' rings and scans move once a second. */
	h.precision_ns = NSEC_PER_SEC;
	while ((opt = getopt(argc, argv, "k:n:p:s:o:")) != -1) {
		switch (opt) {
		case 'k': h.scale = strtoull(optarg, NULL, 0); break;
		case 'n': n = strtoull(optarg, NULL, 0); break;
		case 'p': h.precision_ns = strtoull(optarg, NULL, 0); break;
		case 's': g.seed = strtoull(optarg, NULL, 0) | 1; break;
		case 'o': out = optarg; break;
		default: return 2;
		}
	}
	if (optind != argc - 1 || !out || !h.precision_ns) {
		fprintf(stderr, "usage: scenctl gen im|ride|orders [-k SCALE] [-n IDS] [-p NS] [-s SEED] -o FILE\n");
		return 2;
	}
	name = argv[optind];
	snprintf(h.name, sizeof(h.name), "%s", name);
	/* The seeds' numbers: ids, timeout; the scale that fits a run. */
	if (!strcmp(name, "im")) {
		h.nr_ids = n ?: 100000;
		full_ns = 30 * NSEC_PER_SEC;
		h.scale = h.scale ?: 1;
	} else if (!strcmp(name, "ride")) {
		h.nr_ids = n ?: 1000000;
		full_ns = 600 * NSEC_PER_SEC;
		h.scale = h.scale ?: 24;
	} else if (!strcmp(name, "orders")) {
		h.live_ids = n ?: 1000000;
		full_ns = 1800 * NSEC_PER_SEC;
		h.scale = h.scale ?: 72;
	} else {
		fprintf(stderr, "scenctl: no scenario %s\n", name);
		return 2;
	}
	h.timeout_ns = full_ns / h.scale;
	/* Every time constant scaled alike: the tick of every way ... */
	h.tick_ns = h.precision_ns / h.scale;
	/*
	 * ... and the loop's wait between turns: a server's loop takes
	 * what came in while its last turn ran, at least a millisecond's
	 * worth here, and never more than a tenth of its precision.
	 */
	h.gather_ns = (h.precision_ns / 10 < NSEC_PER_MSEC ? h.precision_ns / 10 : NSEC_PER_MSEC) / h.scale;
	if (!h.tick_ns || !h.gather_ns) {
		fprintf(stderr, "scenctl: precision %llu ns at scale %llu: under 1 ns\n",
			(unsigned long long)h.precision_ns, (unsigned long long)h.scale);
		return 2;
	}
	if (!strcmp(name, "orders"))
		gen_orders(&g, &h);
	else
		gen_heartbeat(&g, &h, !strcmp(name, "im") ? 2.0 : 0.8);
	qsort(g.ev, g.n, sizeof(*g.ev), cmp_event);
	h.nr_events = g.n;
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, &h, sizeof(h)) != sizeof(h) ||
	    write(fd, g.ev, g.n * sizeof(*g.ev)) != (ssize_t)(g.n * sizeof(*g.ev)) || close(fd))
		die("%s", out);
	printf("scenctl: %s: %llu ids, %zu events, timeout %.3f s (1/%llu of %llu s), precision %s: tick %.3f ms, "
	       "gather %.3f ms, end %.2f s\n",
	       name, (unsigned long long)h.nr_ids, g.n, h.timeout_ns / 1e9,
	       (unsigned long long)h.scale, (unsigned long long)(full_ns / NSEC_PER_SEC),
	       dur(h.precision_ns, pbuf, sizeof(pbuf)), h.tick_ns / 1e6, h.gather_ns / 1e6, h.end_us / 1e6);
	return 0;
}

/* ---- measuring ---- */

/* usage_usec of @cg's cpu.stat, in ns. */
static uint64_t cg_cpu_ns(const char *cg)
{
	char path[512], buf[1024], *p;

	snprintf(path, sizeof(path), "%s/cpu.stat", cg);
	if (read_file(path, buf, sizeof(buf)) <= 0 || !(p = strstr(buf, "usage_usec ")))
		die("%s", path);
	return strtoull(p + 11, NULL, 10) * 1000;
}

static long long cg_mem(const char *cg)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/memory.current", cg);
	return read_ll(path);
}

/*
 * CPU time (schedstat, exact) of the kernel threads where a module's
 * deferred work runs, when they are not in @cg (whose cpu.stat counts
 * them already): kworkers of every kind, and threads named twheel*.
 */
static uint64_t kthreads_ns(const char *cg)
{
	const char *rel = strstr(cg, "/sys/fs/cgroup") ? cg + strlen("/sys/fs/cgroup") : cg;
	DIR *d = opendir("/proc");
	struct dirent *de;
	uint64_t sum = 0;

	if (!d)
		die("%s", "/proc");
	while ((de = readdir(d))) {
		char path[300], buf[256];

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		if (read_file(path, buf, sizeof(buf)) <= 0 ||
		    (strncmp(buf, "kworker/", 8) && strncmp(buf, "twheel", 6)))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cgroup", de->d_name);
		if (read_file(path, buf, sizeof(buf)) > 0 && *rel && strstr(buf, rel))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/schedstat", de->d_name);
		if (read_file(path, buf, sizeof(buf)) > 0)
			sum += strtoull(buf, NULL, 10);
	}
	closedir(d);
	return sum;
}

static int cmd_kwidle(void)
{
	uint64_t k = kthreads_ns("");

	sleep_ns(NSEC_PER_SEC);
	printf("%llu\n", (unsigned long long)(kthreads_ns("") - k));
	return 0;
}

/* ---- run ---- */

struct sched {
	struct scen_hdr h;
	const struct scen_event *ev;
	uint32_t *first;	/* events of id i: idx[first[i] .. first[i + 1]) */
	uint32_t *idx;
};

static void sched_index(struct sched *s);

static void sched_load(struct sched *s, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	const uint8_t *map;

	if (fd < 0 || fstat(fd, &st))
		die("%s", path);
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		die("mmap %s", path);
	close(fd);
	memcpy(&s->h, map, sizeof(s->h));
	if (s->h.magic != SCEN_MAGIC)
		die("%s: not a schedule", path);
	s->ev = (const struct scen_event *)(map + sizeof(s->h));
	sched_index(s);
}

/* Index s->ev by id. */
static void sched_index(struct sched *s)
{
	uint64_t i;

	s->first = calloc(s->h.nr_ids + 1, sizeof(*s->first));
	s->idx = malloc(s->h.nr_events * sizeof(*s->idx));
	if (!s->first || !s->idx)
		die("%s", "malloc");
	for (i = 0; i < s->h.nr_events; i++)
		if (SCEN_OP(&s->ev[i]) != SCEN_MARK)
			s->first[SCEN_ID(&s->ev[i]) + 1]++;
	for (i = 0; i < s->h.nr_ids; i++)
		s->first[i + 1] += s->first[i];
	{
		uint32_t *fill = malloc(s->h.nr_ids * sizeof(*fill));

		if (!fill)
			die("%s", "malloc");
		memcpy(fill, s->first, s->h.nr_ids * sizeof(*fill));
		for (i = 0; i < s->h.nr_events; i++)
			if (SCEN_OP(&s->ev[i]) != SCEN_MARK)
				s->idx[fill[SCEN_ID(&s->ev[i])]++] = i;
		free(fill);
	}
}

/* A loop turn the driver finished late: its events' times, when it was done. */
struct late_turn {
	uint32_t first_us, last_us;
	uint64_t done_ns;
};

/* Tallies of one way's answers. */
struct verdict {
	uint64_t reported, right, early, early_res, live, late_refresh, twice, lost, unknown, after_end;
	uint64_t expected;
	double *late_ms;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(const double *v, uint64_t n, unsigned int p)
{
	uint64_t i;

	if (!n)
		return 0;
	i = (n * p + 99) / 100;
	return v[i ? i - 1 : 0];
}

/*
 * Judge every expiry: @t0 the run's start. An id's arm in force at time
 * d is its last ADD or REFRESH scheduled at or before d (a driver applies
 * an event at or after its time, never before, so the way's own deadline
 * is never earlier than the scheduled one); an expiry before that arm's
 * deadline is early, one of an id cancelled by then or refreshed again
 * later (it expired while still sending: the refresh came too late) is a
 * live one reported. The ids due 0.2 T before the end must all be
 * reported; those due later may or may not be.
 */
/* When the driver applied an event of time @t_us, if that was late; else 0. */
static uint64_t applied_late(const struct late_turn *lt, uint64_t nlt, uint32_t t_us)
{
	uint64_t lo = 0, hi = nlt;

	/* Turns come in time order and do not overlap. */
	while (lo < hi) {
		uint64_t mid = (lo + hi) / 2;

		if (lt[mid].last_us < t_us)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < nlt && lt[lo].first_us <= t_us ? lt[lo].done_ns : 0;
}

static void judge(const struct sched *s, uint64_t t0, const struct scen_expiry *x, uint64_t nx,
		  const struct late_turn *lt, uint64_t nlt, uint64_t res_ns, struct verdict *v)
{
	uint64_t T = s->h.timeout_ns, end_ns = s->h.end_us * 1000, i;
	uint8_t *seen = calloc(s->h.nr_ids, 1);
	/* Per id, 1 + the arm whose late refresh excused an expiry, or 0. */
	uint64_t *excused = calloc(s->h.nr_ids, sizeof(*excused));

	v->late_ms = malloc((nx + 1) * sizeof(*v->late_ms));
	if (!seen || !excused || !v->late_ms)
		die("%s", "malloc");
	for (i = 0; i < nx; i++) {
		uint64_t id = x[i].id, d, j, lo, hi, arm = UINT64_MAX, prev = UINT64_MAX, cancel_t = 0;
		bool cancelled = false, later = false;

		v->reported++;
		if (id >= s->h.nr_ids || x[i].ns < t0) {
			v->unknown++;
			continue;
		}
		if (seen[id]++) {
			v->twice++;
			continue;
		}
		d = x[i].ns - t0;
		/* After the end the schedule refreshes nobody: not judged. */
		if (d > end_ns) {
			v->after_end++;
			seen[id]--;
			continue;
		}
		lo = s->first[id];
		hi = s->first[id + 1];
		for (j = lo; j < hi; j++) {
			const struct scen_event *e = &s->ev[s->idx[j]];
			uint64_t t = e->t_us * 1000ULL;

			if (t > d) {
				later = true;
				break;
			}
			if (SCEN_OP(e) == SCEN_CANCEL) {
				cancelled = true;
				cancel_t = t;
				prev = arm;
				arm = UINT64_MAX;
			} else {
				cancelled = false;
				prev = arm;
				arm = t;
			}
		}
		if (arm == UINT64_MAX) {
			/* Reported before it was added, or after its cancel. */
			if (cancelled && prev != UINT64_MAX &&
			    applied_late(lt, nlt, cancel_t / 1000) > t0 + prev + T)
				v->late_refresh++;
			else if (cancelled)
				v->live++;
			else
				v->early++;
			continue;
		}
		/* The arm in force, at most the API's resolution early: right. */
		if (d < arm + T && d + res_ns >= arm + T) {
			v->early_res++;
			v->late_ms[v->right++] = ((double)d - (double)(arm + T)) / 1e6;
			continue;
		}
		if (d < arm + T && prev != UINT64_MAX && d >= prev + T) {
			/*
			 * The previous arm was due: the refresh came too late,
			 * the way's fault unless the driver applied it only
			 * after that deadline (a late turn).
			 */
			if (applied_late(lt, nlt, arm / 1000) > t0 + prev + T &&
			    excused[id] != arm + 1) {
				/* Once per late arm: a second report of it is twice. */
				v->late_refresh++;
				excused[id] = arm + 1;
				seen[id]--;
			} else {
				v->live++;
			}
			continue;
		}
		if (d < arm + T) {
			v->early++;
			continue;
		}
		if (later) {
			v->live++;
			continue;
		}
		v->late_ms[v->right++] = (double)(d - arm - T) / 1e6;
	}
	/* The ids that had to be reported: last op an arm due by end - 0.2 T. */
	for (i = 0; i < s->h.nr_ids; i++) {
		uint64_t hi = s->first[i + 1];
		const struct scen_event *e;

		if (hi == s->first[i])
			continue;
		e = &s->ev[s->idx[hi - 1]];
		if (SCEN_OP(e) == SCEN_CANCEL || e->t_us * 1000ULL + T > end_ns - T / 5)
			continue;
		v->expected++;
		if (!seen[i])
			v->lost++;
	}
	free(excused);
	free(seen);
	qsort(v->late_ms, v->right, sizeof(*v->late_ms), cmp_double);
}

/*
 * judge-test: the judge on a schedule of five ids, 1 s timeouts, and a
 * loop turn at 0.9 s that the driver finished at 1.5 s, TAP.
 *  0: refreshed at 0.9 s (late), reported at 1.01 s and at 1.91 s: an
 *     excused expiry, then the refresh's own, right.
 *  1: the same, reported at 1.01 s and 1.02 s: the old deadline twice,
 *     the second a live one.
 *  2: reported at 1.01 s and 1.02 s: right, then twice.
 *  3: cancelled at 0.9 s (late), reported at 1.01 s and 1.02 s: excused,
 *     then twice (a cancel arms nothing).
 *  4: refreshed at 0.9 s, reported at 1.895 s: 5 ms before the refresh's
 *     deadline, within the 10 ms resolution: right, not a live one.
 */
static int cmd_judge_test(void)
{
	static const struct scen_event ev[] = {
		{ 0, SCEN_ADD << SCEN_ID_BITS | 0 }, { 0, SCEN_ADD << SCEN_ID_BITS | 1 },
		{ 0, SCEN_ADD << SCEN_ID_BITS | 2 }, { 0, SCEN_ADD << SCEN_ID_BITS | 3 },
		{ 900000, SCEN_REFRESH << SCEN_ID_BITS | 0 }, { 900000, SCEN_REFRESH << SCEN_ID_BITS | 1 },
		{ 900000, SCEN_CANCEL << SCEN_ID_BITS | 3 }, { 0, SCEN_ADD << SCEN_ID_BITS | 4 },
		{ 900000, SCEN_REFRESH << SCEN_ID_BITS | 4 },
	};
	const uint64_t t0 = 1000, ms = 1000000;
	const struct scen_expiry x[] = {
		{ 0, t0 + 1010 * ms }, { 1, t0 + 1010 * ms }, { 2, t0 + 1010 * ms }, { 3, t0 + 1010 * ms },
		{ 1, t0 + 1020 * ms }, { 2, t0 + 1020 * ms }, { 3, t0 + 1020 * ms }, { 4, t0 + 1895 * ms },
		{ 0, t0 + 1910 * ms },
	};
	const struct late_turn lt = { 900000, 900000, t0 + 1500 * ms };
	struct sched s = { .ev = ev };
	struct verdict v = { 0 };
	int fails = 0;

	s.h.magic = SCEN_MAGIC;
	strcpy(s.h.name, "im");
	s.h.nr_ids = 5;
	s.h.nr_events = sizeof(ev) / sizeof(ev[0]);
	s.h.timeout_ns = 1000 * ms;
	s.h.end_us = 10000000;
	sched_index(&s);
	judge(&s, t0, x, sizeof(x) / sizeof(x[0]), &lt, 1, 10 * ms, &v);
	printf("TAP version 13\n1..7\n");
#define JUDGE_CHECK(n, field, want)							\
	do {										\
		bool ok = v.field == (want);						\
		fails += !ok;								\
		printf("%sok %d judge: %s=%llu (want %d)\n", ok ? "" : "not ", n, #field,	\
		       (unsigned long long)v.field, want);				\
	} while (0)
	JUDGE_CHECK(1, late_refresh, 3);
	JUDGE_CHECK(2, right, 3);
	JUDGE_CHECK(3, live, 1);
	JUDGE_CHECK(4, twice, 2);
	JUDGE_CHECK(5, early, 0);
	JUDGE_CHECK(6, lost, 0);
	JUDGE_CHECK(7, early_res, 1);
#undef JUDGE_CHECK
	free(v.late_ms);
	free(s.first);
	free(s.idx);
	return fails ? 1 : 0;
}

/* Refreshes (or orders placed) between the marks: what CPU is divided by. */
static uint64_t window_ops(const struct sched *s)
{
	bool orders = !strcmp(s->h.name, "orders"), in = false;
	uint64_t i, n = 0;

	for (i = 0; i < s->h.nr_events; i++) {
		const struct scen_event *e = &s->ev[i];

		if (SCEN_OP(e) == SCEN_MARK)
			in = SCEN_ID(e) == 1;
		else if (in && SCEN_OP(e) == (orders ? SCEN_ADD : SCEN_REFRESH))
			n++;
	}
	return n;
}

static void cg_join(const char *cg)
{
	char path[512], pid[32];

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	snprintf(pid, sizeof(pid), "%d\n", getpid());
	if (write_file(path, pid))
		die("join %s", cg);
}

static pid_t spawn_server(const char *cg, const char *cmd)
{
	pid_t pid = fork();

	if (pid < 0)
		die("%s", "fork");
	if (!pid) {
		cg_join(cg);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return pid;
}

struct run {
	const char *way, *cg;
	int ctl_in, ctl_out, exp;
	pid_t pid;
	char line[256];
	size_t line_len;
	struct scen_expiry *x;
	uint64_t nx, xcap;
	uint8_t xbuf[sizeof(struct scen_expiry)];
	size_t xbuf_len;
	uint64_t t0, cpu[2], kw[2], wall[2], applied, lag_ns;
	struct late_turn *lt;
	uint64_t nlt, ltcap;
	long long mem_max, heap_live, off_heap;
	char stats[256];	/* the driver's "stats" line, fields for the row */
	bool heap;		/* the driver said "heap" */
	int marks;
	bool done;
};

static pid_t spawn_driver(struct run *r, char **argv)
{
	int in[2], out[2], ex[2];
	pid_t pid;

	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(ex, O_CLOEXEC))
		die("%s", "pipe");
	pid = fork();
	if (pid < 0)
		die("%s", "fork");
	if (!pid) {
		cg_join(r->cg);
		if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || dup2(ex[1], 3) < 0)
			_exit(127);
		execv(argv[0], argv);
		fprintf(stderr, "scenctl: exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	close(ex[1]);
	r->ctl_in = in[1];
	r->ctl_out = out[0];
	r->exp = ex[0];
	fcntl(r->exp, F_SETPIPE_SZ, 1 << 20);
	return pid;
}

static void on_line(struct run *r, const char *l)
{
	if (!strcmp(l, "ready")) {
		char go[64];

		r->t0 = mono_ns() + 200 * NSEC_PER_MSEC;
		snprintf(go, sizeof(go), "go %llu\n", (unsigned long long)r->t0);
		if (write(r->ctl_in, go, strlen(go)) < 0)
			die("%s", "write go");
	} else if (!strncmp(l, "mark ", 5)) {
		int k = atoi(l + 5) - 1;

		if (k < 0 || k > 1)
			return;
		r->cpu[k] = cg_cpu_ns(r->cg);
		r->kw[k] = kthreads_ns(r->cg);
		r->wall[k] = mono_ns();
		r->marks |= 1 << k;
		/* The window is sampled: a driver may collect its garbage now. */
		if (k == 1 && write(r->ctl_in, "sampled\n", 8) < 0)
			return;
	} else if (!strncmp(l, "stats ", 6)) {
		snprintf(r->stats, sizeof(r->stats), " %.240s", l + 6);
	} else if (!strncmp(l, "heap ", 5)) {
		long long committed = 0;

		if (sscanf(l, "heap %lld %lld", &r->heap_live, &committed) == 2) {
			r->off_heap = cg_mem(r->cg) - committed;
			r->heap = true;
		}
		/* Read while the driver waits: it may go now (scen.h). */
		if (write(r->ctl_in, "measured\n", 9) < 0)
			return;
	} else if (!strncmp(l, "late ", 5)) {
		struct late_turn t;

		if (sscanf(l, "late %u %u %llu", &t.first_us, &t.last_us,
			   (unsigned long long *)&t.done_ns) != 3)
			return;
		if (r->nlt == r->ltcap) {
			r->ltcap = r->ltcap ? r->ltcap * 2 : 1024;
			r->lt = realloc(r->lt, r->ltcap * sizeof(*r->lt));
			if (!r->lt)
				die("%s", "realloc");
		}
		r->lt[r->nlt++] = t;
	} else if (!strncmp(l, "done ", 5)) {
		sscanf(l, "done applied=%llu lag_max_ns=%llu", (unsigned long long *)&r->applied,
		       (unsigned long long *)&r->lag_ns);
		r->done = true;
	} else {
		fprintf(stderr, "scenctl: %s: %s\n", r->way, l);
	}
}

static void read_ctl(struct run *r)
{
	char buf[512];
	ssize_t n = read(r->ctl_out, buf, sizeof(buf));
	ssize_t i;

	if (n <= 0) {
		close(r->ctl_out);
		r->ctl_out = -1;
		return;
	}
	for (i = 0; i < n; i++) {
		if (buf[i] == '\n') {
			r->line[r->line_len] = 0;
			on_line(r, r->line);
			r->line_len = 0;
		} else if (r->line_len < sizeof(r->line) - 1) {
			r->line[r->line_len++] = buf[i];
		}
	}
}

static void read_exp(struct run *r)
{
	uint8_t buf[1 << 16];
	ssize_t n = read(r->exp, buf, sizeof(buf)), i;

	if (n <= 0) {
		close(r->exp);
		r->exp = -1;
		return;
	}
	for (i = 0; i < n; i++) {
		r->xbuf[r->xbuf_len++] = buf[i];
		if (r->xbuf_len < sizeof(r->xbuf))
			continue;
		if (r->nx == r->xcap) {
			r->xcap = r->xcap ? r->xcap * 2 : 1 << 16;
			r->x = realloc(r->x, r->xcap * sizeof(*r->x));
			if (!r->x)
				die("%s", "realloc");
		}
		memcpy(&r->x[r->nx++], r->xbuf, sizeof(r->xbuf));
		r->xbuf_len = 0;
	}
}

static void cg_make(const char *cg)
{
	char parent[512], *slash;

	write_file("/sys/fs/cgroup/cgroup.subtree_control", "+memory");
	snprintf(parent, sizeof(parent), "%s", cg);
	slash = strrchr(parent, '/');
	if (slash && slash != parent) {
		*slash = 0;
		mkdir(parent, 0755);
		snprintf(parent + strlen(parent), sizeof(parent) - strlen(parent), "/cgroup.subtree_control");
		write_file(parent, "+memory");
	}
	if (mkdir(cg, 0755) && errno != EEXIST)
		die("mkdir %s", cg);
}

/* Wait for @pid; after @ms, kill it. Its exit status, -1 if killed. */
static int reap(pid_t pid, unsigned int ms)
{
	int st;
	unsigned int i;

	for (i = 0; i < ms / 10; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		sleep_ns(10 * NSEC_PER_MSEC);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

static int cmd_run(int argc, char **argv)
{
	struct run r = { .ctl_out = -1, .exp = -1 };
	const char *sched_path = NULL, *server = NULL;
	uint64_t res_ns = 0, base_cpu = 0, kw_idle = 0, deadline, ops, cpu, kernel, window;
	long long base_mem = 0, base_off = 0, base_live = 0;
	pid_t server_pid = 0;
	struct verdict v = { 0 };
	struct sched s;
	double per, bytes;
	char prec[32];
	int opt, rc, i, behind;

	while ((opt = getopt(argc, argv, "+S:w:c:r:b:i:e:")) != -1) {
		switch (opt) {
		case 'S': sched_path = optarg; break;
		case 'w': r.way = optarg; break;
		case 'c': r.cg = optarg; break;
		case 'r': res_ns = strtoull(optarg, NULL, 0); break;
		case 'b':
			sscanf(optarg, "%llu,%lld,%lld,%lld", (unsigned long long *)&base_cpu, &base_mem,
			       &base_off, &base_live);
			break;
		case 'i': kw_idle = strtoull(optarg, NULL, 0); break;
		case 'e': server = optarg; break;
		default: return 2;
		}
	}
	if (!sched_path || !r.way || !r.cg || optind >= argc) {
		fprintf(stderr, "usage: scenctl run -S FILE -w WAY -c CGROUP [-r RES_NS] [-b CPU_NS,MEM[,OFF,LIVE]] "
			"[-i KW_IDLE_NS] [-e SERVER_CMD] -- DRIVER ARGS...\n");
		return 2;
	}
	sched_load(&s, sched_path);
	cg_make(r.cg);
	if (server)
		server_pid = spawn_server(r.cg, server);
	r.pid = spawn_driver(&r, argv + optind);
	/* Set-up, the run and a minute to spare (a slow way's teardown). */
	deadline = mono_ns() + s.h.end_us * 1000 + 240 * NSEC_PER_SEC;
	while (r.ctl_out >= 0 || r.exp >= 0) {
		struct pollfd p[2] = { { .fd = r.ctl_out, .events = POLLIN },
				       { .fd = r.exp, .events = POLLIN } };

		if (poll(p, 2, 50) < 0 && errno != EINTR)
			die("%s", "poll");
		if (p[0].revents)
			read_ctl(&r);
		if (p[1].revents)
			read_exp(&r);
		if (r.marks == 1) {
			long long m = cg_mem(r.cg);

			if (m > r.mem_max)
				r.mem_max = m;
		}
		if (mono_ns() > deadline) {
			fprintf(stderr, "scenctl: %s: no end in time; killed\n", r.way);
			kill(r.pid, SIGKILL);
			break;
		}
	}
	rc = reap(r.pid, 60000);
	if (server_pid) {
		kill(server_pid, SIGTERM);
		reap(server_pid, 10000);
	}
	for (i = 0; i < 100 && rmdir(r.cg) && errno == EBUSY; i++)
		sleep_ns(50 * NSEC_PER_MSEC);

	dur(s.h.precision_ns, prec, sizeof(prec));
	if (!r.done || r.marks != 3) {
		printf("scenario-run: name=%s precision=%s way=%s failed=1 exit=%d\n", s.h.name, prec, r.way, rc);
		return 1;
	}
	judge(&s, r.t0, r.x, r.nx, r.lt, r.nlt, res_ns, &v);
	ops = window_ops(&s);
	window = r.wall[1] - r.wall[0];
	cpu = r.cpu[1] - r.cpu[0];
	/* A kworker that exited in the window took its time with it: then nothing is known. */
	kernel = r.kw[1] > r.kw[0] ? r.kw[1] - r.kw[0] : 0;
	kernel = kernel > kw_idle * window / NSEC_PER_SEC ? kernel - kw_idle * window / NSEC_PER_SEC : 0;
	per = ((double)cpu + kernel - base_cpu) / ops;
	if (r.heap)
		bytes = (double)(r.off_heap - base_off + r.heap_live - base_live) / s.h.live_ids;
	else
		bytes = (double)(r.mem_max - base_mem) / s.h.live_ids;
	/*
	 * Overload is not a wrong answer: a replay that fell more than the
	 * schedule's margin (0.1 T: a live id's refresh never comes closer
	 * to its deadline) behind its events marks the row behind, and the
	 * silent ids it did not report in time count as that, not as wrong.
	 * Early, live, twice and unknown expiries are wrong whatever the lag.
	 */
	behind = r.lag_ns > s.h.timeout_ns / 10;
	printf("scenario-run: name=%s precision=%s way=%s refreshes=%llu cpu_ns_per_refresh=%.0f bytes_per_id=%.0f "
	       "late_p50_ms=%.2f late_p99_ms=%.2f late_max_ms=%.2f wrong=%llu behind=%d "
	       "expected=%llu reported=%llu right=%llu early=%llu early_within_res=%llu live_reported=%llu "
	       "late_refresh=%llu late_turns=%llu after_end=%llu twice=%llu lost=%llu unknown=%llu cpu_window_ns=%llu kernel_ns=%llu mem_max=%lld "
	       "off_heap=%lld heap_live=%lld "
	       "window_s=%.2f lag_max_ms=%.1f scale=%llu tick_ns=%llu gather_ns=%llu exit=%d%s\n",
	       s.h.name, prec, r.way, (unsigned long long)ops, per, bytes,
	       pct(v.late_ms, v.right, 50), pct(v.late_ms, v.right, 99),
	       v.right ? v.late_ms[v.right - 1] : 0.0,
	       (unsigned long long)(v.early + v.live + v.twice + (behind ? 0 : v.lost) + v.unknown), behind,
	       (unsigned long long)v.expected, (unsigned long long)v.reported,
	       (unsigned long long)v.right, (unsigned long long)v.early,
	       (unsigned long long)v.early_res, (unsigned long long)v.live,
	       (unsigned long long)v.late_refresh, (unsigned long long)r.nlt,
	       (unsigned long long)v.after_end,
	       (unsigned long long)v.twice, (unsigned long long)v.lost,
	       (unsigned long long)v.unknown, (unsigned long long)(cpu + kernel),
	       (unsigned long long)kernel, r.mem_max, r.off_heap, r.heap_live, window / 1e9, r.lag_ns / 1e6,
	       (unsigned long long)s.h.scale, (unsigned long long)s.h.tick_ns,
	       (unsigned long long)s.h.gather_ns, rc, r.stats);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (argc >= 2 && !strcmp(argv[1], "gen"))
		return cmd_gen(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "kwidle"))
		return cmd_kwidle();
	if (argc >= 2 && !strcmp(argv[1], "run"))
		return cmd_run(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "judge-test"))
		return cmd_judge_test();
	fprintf(stderr, "usage: scenctl gen|kwidle|run|judge-test ... (see the top of scenctl.c)\n");
	return 2;
}
