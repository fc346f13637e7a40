// SPDX-License-Identifier: GPL-2.0
/*
 * scen-c: the C ways of the scenario benchmark, one per argument, each a
 * driver of the protocol in scen.h (scenctl starts it):
 *
 *   null            the replay alone: the floor every C way is measured from
 *   mapscan         seed 000's first answer: a hash map id -> last seen,
 *                   scanned every tick
 *   ring            seeds 000/003: a ring of T/tick + 1 slots, a Set of ids
 *                   per slot and a Map id -> slot; an arm moves the id into
 *                   the slot just behind the cursor, each tick expires the
 *                   slot under it
 *   ring-lazy       the ring as an idle detector is written (Netty's
 *                   IdleStateHandler): a refresh only stores the id's time;
 *                   when the id's slot comes, it expires if its time is T
 *                   old, else it moves to the slot of its new deadline
 *   timerfd         one timerfd per id in an epoll set, a map id -> fd
 *   redis-zset      Redis: each turn's arms in one ZADD (deadline id ...),
 *                   its cancels in one ZREM, a poller every tick
 *                   (ZRANGEBYSCORE -inf now, then ZREM of what it got)
 *   redis-keyspace  Redis: SET id PX timeout per arm, expiry through keyspace
 *                   notifications (notify-keyspace-events Ex)
 *   redis-keyspace-effort  the same with active-expire-effort 10, Redis's
 *                   most eager expiry
 *   twheel-batch    /dev/twheel: each loop turn's refreshes in one
 *                   TWHEEL_IOC_REFRESH, adds and cancels in one
 *                   TWHEEL_IOC_BATCH; expiries read(2) from the wheel fd
 *   twheel-touch    /dev/twheel with a touch table: an add binds the id to
 *                   its slot, a refresh is twheel_touch_at() with the loop
 *                   turn's time (one store), no system call
 *
 * Every way with a tick (the scan, the rings, the poller, twheel's wheel)
 * takes the schedule's, tick_ns: one precision for the row.
 *
 * All share one event loop, as a server's: each turn applies the events
 * whose time has come (at most gather_ns after it: the loop waits at
 * least that long, as a server's loop gathers packets), then lets the
 * way look for expiries; the wait ends early when the way's fd (epoll
 * set, wheel, subscription) turns readable or its tick comes. The loop
 * waits in epoll, as the seeds' servers do (and Go's, Java's and Node's
 * runtimes): a quiet fd costs a turn nothing, where poll(2) would look
 * at it, queue on it and dequeue, every turn.
 */
#include <hiredis/hiredis.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/timerfd.h>

#include "twheel_test.h"
#include "hmap.h"
#include "scen.h"


static void die(const char *what)
{
	fprintf(stderr, "scen-c: %s: %s\n", what, strerror(errno));
	exit(1);
}

struct drv;

struct way {
	const char *name;
	void (*setup)(struct drv *d);
	/* Apply @n events (no marks) at @now. */
	void (*apply)(struct drv *d, const struct scen_event *ev, size_t n, uint64_t now);
	/* The fd's readable or the wake time came: find what expired. */
	void (*poll)(struct drv *d, uint64_t now);
};

struct drv {
	const struct way *way;
	struct scen_hdr h;
	struct scen_event *ev;
	uint64_t t0;
	int fd, fd2;		/* the way's pollable fds, or -1 */
	uint64_t wake;		/* the way's next tick (abs ns), or UINT64_MAX */
	struct scen_expiry out[4096];
	unsigned int nr_out;
	/* per-way state */
	struct hmap map;	/* mapscan: id -> last seen; ring: id -> slot; timerfd: id -> fd */
	struct hmap *slots;	/* ring: a set per slot */
	uint64_t nr_slots, cur;
	int ep;
	redisContext *rc, *sub;	/* commands; keyspace notifications */
	uint8_t *kinds;		/* what each outstanding reply of rc answers */
	size_t nr_kinds, cap_kinds;
	bool asking;		/* a ZRANGEBYSCORE is outstanding */
	const char **argv;	/* redis-zset: a ZADD or ZREM being gathered */
	size_t *argl, argc;
	char *argbuf;
	int argop;		/* the op it gathers */
	struct twheel_op *ops;
	uint64_t *ids;
	struct twheel_touch touch;
	/* Between the marks: where a way's CPU goes ("stats", scen.h). */
	uint64_t nr_turns, nr_readable, nr_ioctls, nr_reads, nr_empty;
};

static void flush_out(struct drv *d)
{
	size_t len = d->nr_out * sizeof(d->out[0]), off = 0;

	while (off < len) {
		ssize_t n = write(3, (char *)d->out + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("write fd 3");
		off += n;
	}
	d->nr_out = 0;
}

static void report(struct drv *d, uint64_t id, uint64_t now)
{
	if (d->nr_out == sizeof(d->out) / sizeof(d->out[0]))
		flush_out(d);
	d->out[d->nr_out].id = id;
	d->out[d->nr_out].ns = now;
	d->nr_out++;
}

/* ---- null ---- */

static void null_apply(struct drv *d, const struct scen_event *ev, size_t n, uint64_t now)
{
	(void)d; (void)ev; (void)n; (void)now;
}

/* ---- mapscan ---- */

static void mapscan_setup(struct drv *d)
{
	hmap_init(&d->map, false);
	d->wake = d->t0 + d->h.tick_ns;
}

static void mapscan_apply(struct drv *d, const struct scen_event *ev, size_t n, uint64_t now)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (SCEN_OP(&ev[i]) == SCEN_CANCEL)
			hmap_del(&d->map, SCEN_ID(&ev[i]));
		else
			hmap_put(&d->map, SCEN_ID(&ev[i]), now);
	}
}

static void mapscan_poll(struct drv *d, uint64_t now)
{
	size_t i = 0;

	if (now < d->wake)
		return;
	while (i <= d->map.mask) {
		/* A deletion shifts the next entry into slot i: look again. */
		if (d->map.keys[i] != HMAP_FREE && now - d->map.vals[i] >= d->h.timeout_ns) {
			report(d, d->map.keys[i], now);
			hmap_del_at(&d->map, i);
			continue;
		}
		i++;
	}
	d->wake += d->h.tick_ns;
	if (d->wake <= now)
		d->wake = now + d->h.tick_ns;
}

/* ---- ring ---- */

static void ring_setup(struct drv *d)
{
	uint64_t i;

	d->nr_slots = d->h.timeout_ns / d->h.tick_ns + 1;
	d->slots = calloc(d->nr_slots, sizeof(*d->slots));
	if (!d->slots)
		die("calloc");
	for (i = 0; i < d->nr_slots; i++)
		hmap_init(&d->slots[i], true);
	hmap_init(&d->map, false);
	d->cur = 0;
	d->wake = d->t0 + d->h.tick_ns;
}

static void ring_apply(struct drv *d, const struct scen_event *ev, size_t n, uint64_t now)
{
	size_t i;

	(void)now;
	for (i = 0; i < n; i++) {
		uint64_t id = SCEN_ID(&ev[i]), slot = 0;

		if (hmap_get(&d->map, id, &slot))
			hmap_del(&d->slots[slot], id);
		if (SCEN_OP(&ev[i]) == SCEN_CANCEL) {
			hmap_del(&d->map, id);
			continue;
		}
		/*
		 * The slot behind the cursor: the cursor reaches it after
		 * nr_slots - 1 ticks, T after the coming tick.
		 */
		slot = (d->cur + d->nr_slots - 1) % d->nr_slots;
		hmap_put(&d->slots[slot], id, 0);
		hmap_put(&d->map, id, slot);
	}
}

static void ring_poll(struct drv *d, uint64_t now)
{
	while (now >= d->wake) {
		struct hmap *s = &d->slots[d->cur];
		size_t i;

		if (s->len) {
			for (i = 0; i <= s->mask; i++) {
				if (s->keys[i] == HMAP_FREE)
					continue;
				report(d, s->keys[i], now);
				hmap_del(&d->map, s->keys[i]);
				s->keys[i] = HMAP_FREE;
			}
			s->len = 0;
		}
		d->cur = (d->cur + 1) % d->nr_slots;
		d->wake += d->h.tick_ns;
	}
}

/* ---- ring-lazy ---- */

/*
 * The map holds, per id, its slot and the time of its last arm (ns from
 * t0), in one u64: LAZY_SLOT_BITS bits of slot under the time.
 */
#define LAZY_SLOT_BITS	20
#define LAZY_VAL(t, slot)	((t) << LAZY_SLOT_BITS | (slot))
#define LAZY_SLOT(v)	((v) & ((1ULL << LAZY_SLOT_BITS) - 1))
#define LAZY_TIME(v)	((v) >> LAZY_SLOT_BITS)

static void lazy_setup(struct drv *d)
{
	ring_setup(d);
	if (d->nr_slots >= 1ULL << LAZY_SLOT_BITS) {
		errno = ERANGE;
		die("ring-lazy: too many slots");
	}
}

/*
 * An add goes into the slot behind the cursor, as in the ring. A refresh
 * of an id the ring holds only stores its time: the ring looks at it when
 * its slot comes. A cancel takes it out.
 */
static void lazy_apply(struct drv *d, const struct scen_event *ev, size_t n, uint64_t now)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t id = SCEN_ID(&ev[i]), v = 0, slot;
		bool held = hmap_get(&d->map, id, &v);

		if (SCEN_OP(&ev[i]) == SCEN_CANCEL) {
			if (held) {
				hmap_del(&d->slots[LAZY_SLOT(v)], id);
				hmap_del(&d->map, id);
			}
			continue;
		}
		if (held) {
			hmap_put(&d->map, id, LAZY_VAL(now - d->t0, LAZY_SLOT(v)));
			continue;
		}
		slot = (d->cur + d->nr_slots - 1) % d->nr_slots;
		hmap_put(&d->slots[slot], id, 0);
		hmap_put(&d->map, id, LAZY_VAL(now - d->t0, slot));
	}
}

/*
 * The slot under the cursor: an id whose last arm is T old expires; any
 * other moves to the first slot the cursor reaches at or after its
 * deadline (the cursor reaches slot cur + k at wake + k ticks).
 */
static void lazy_poll(struct drv *d, uint64_t now)
{
	while (now >= d->wake) {
		struct hmap *s = &d->slots[d->cur];
		size_t i;

		if (s->len) {
			for (i = 0; i <= s->mask; i++) {
				uint64_t id = s->keys[i], v = 0, due, k, slot;

				if (id == HMAP_FREE)
					continue;
				s->keys[i] = HMAP_FREE;
				if (!hmap_get(&d->map, id, &v))
					continue;
				due = d->t0 + LAZY_TIME(v) + d->h.timeout_ns;
				if (due <= now) {
					report(d, id, now);
					hmap_del(&d->map, id);
					continue;
				}
				k = (due - d->wake + d->h.tick_ns - 1) / d->h.tick_ns;
				k = k < 1 ? 1 : k > d->nr_slots - 1 ? d->nr_slots - 1 : k;
				slot = (d->cur + k) % d->nr_slots;
				hmap_put(&d->slots[slot], id, 0);
				hmap_put(&d->map, id, LAZY_VAL(LAZY_TIME(v), slot));
			}
			s->len = 0;
		}
		d->cur = (d->cur + 1) % d->nr_slots;
		d->wake += d->h.tick_ns;
	}
}

/* ---- timerfd ---- */

static void timerfd_setup(struct drv *d)
{
	struct rlimit rl = { 1 << 22, 1 << 22 };

	if (setrlimit(RLIMIT_NOFILE, &rl))
		die("setrlimit NOFILE (fs.nr_open)");
	hmap_init(&d->map, false);
	d->ep = epoll_create1(EPOLL_CLOEXEC);
	if (d->ep < 0)
		die("epoll_create1");
	d->fd = d->ep;
}

static void timerfd_arm(struct drv *d, int tfd)
{
	struct itimerspec its = {
		.it_value = { .tv_sec = d->h.timeout_ns / NSEC_PER_SEC,
			      .tv_nsec = d->h.timeout_ns % NSEC_PER_SEC },
	};

	if (timerfd_settime(tfd, 0, &its, NULL))
		die("timerfd_settime");
}

static void timerfd_apply(struct drv *d, const struct scen_event *ev, size_t n, uint64_t now)
{
	size_t i;

	(void)now;
	for (i = 0; i < n; i++) {
		uint64_t id = SCEN_ID(&ev[i]), fd = 0;
		struct epoll_event e = { .events = EPOLLIN, .data.u64 = id };

		if (hmap_get(&d->map, id, &fd)) {
			if (SCEN_OP(&ev[i]) == SCEN_CANCEL) {
				close(fd);
				hmap_del(&d->map, id);
			} else {
				timerfd_arm(d, fd);
			}
			continue;
		}
		if (SCEN_OP(&ev[i]) == SCEN_CANCEL)
			continue;
		fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		if ((int)fd < 0)
			die("timerfd_create");
		timerfd_arm(d, fd);
		if (epoll_ctl(d->ep, EPOLL_CTL_ADD, fd, &e))
			die("epoll_ctl");
		hmap_put(&d->map, id, fd);
	}
}

static void timerfd_poll(struct drv *d, uint64_t now)
{
	struct epoll_event evs[1024];
	int n, i;

	do {
		n = epoll_wait(d->ep, evs, 1024, 0);
		now = mono_ns();
		for (i = 0; i < n; i++) {
			uint64_t id = evs[i].data.u64, fd = 0, v;

			if (!hmap_get(&d->map, id, &fd))
				continue;
			if (read(fd, &v, sizeof(v)) != sizeof(v))
				continue;
			report(d, id, now);
			close(fd);
			hmap_del(&d->map, id);
		}
	} while (n == 1024);
}

/* ---- Redis ---- */

/*
 * Pipelined and asynchronous, as a client library's async API drives it:
 * each turn's commands go out in one write and their replies are read
 * when the socket turns readable, never waited for. kinds[] remembers
 * what each outstanding reply answers.
 */
enum { REPLY_ACK, REPLY_DUE };

static redisContext *redis_connect(void)
{
	uint64_t until = mono_ns() + 30 * NSEC_PER_SEC;

	/* The server starts beside us: try until it listens. */
	for (;;) {
		redisContext *c = redisConnect("127.0.0.1", 6379);
		redisReply *r;

		if (c && !c->err) {
			r = redisCommand(c, "PING");
			if (r && r->type == REDIS_REPLY_STATUS) {
				freeReplyObject(r);
				return c;
			}
			if (r)
				freeReplyObject(r);
		}
		if (c)
			redisFree(c);
		if (mono_ns() > until) {
			fprintf(stderr, "scen-c: no Redis on 127.0.0.1:6379\n");
			exit(1);
		}
		sleep_ns(100 * NSEC_PER_MSEC);
	}
}

static void redis_cmd(redisContext *c, const char *fmt, const char *arg)
{
	redisReply *r = redisCommand(c, fmt, arg);

	if (!r || r->type == REDIS_REPLY_ERROR) {
		fprintf(stderr, "scen-c: redis %s: %s\n", fmt, r ? r->str : c->errstr);
		exit(1);
	}
	freeReplyObject(r);
}

/*
 * The server's own clock (hz: active expiry and the cron) is its default,
 * 10 a second, scaled as every clock of the run is: 10 times the scale,
 * up to Redis's limit of 500 (at scale 1, the default).
 */
static void redis_config(struct drv *d, redisContext *c)
{
	char hz[32];

	snprintf(hz, sizeof(hz), "%llu", (unsigned long long)
		 (d->h.scale * 10 < 500 ? d->h.scale * 10 : 500));
	redis_cmd(c, "CONFIG SET hz %s", hz);
}

static void redis_expect(struct drv *d, uint8_t kind)
{
	if (d->nr_kinds == d->cap_kinds) {
		d->cap_kinds = d->cap_kinds ? d->cap_kinds * 2 : 1 << 16;
		d->kinds = realloc(d->kinds, d->cap_kinds);
		if (!d->kinds)
			die("realloc");
	}
	d->kinds[d->nr_kinds++] = kind;
}

static void redis_send(redisContext *c)
{
	int done = 0;

	while (!done)
		if (redisBufferWrite(c, &done) != REDIS_OK)
			die("redis write");
}

static void redis_ask_due(struct drv *d, uint64_t now)
{
	redisAppendCommand(d->rc, "ZRANGEBYSCORE dl -inf %llu LIMIT 0 1000",
			   (unsigned long long)(now / NSEC_PER_MSEC));
	redis_expect(d, REPLY_DUE);
}

/* The ids the poller got are due: report them, remove them, ask again if more. */
static void redis_due(struct drv *d, redisReply *r)
{
	uint64_t now = mono_ns();
	const char **argv;
	size_t i;

	if (r->type != REDIS_REPLY_ARRAY)
		die("ZRANGEBYSCORE");
	d->asking = false;
	if (!r->elements)
		return;
	argv = malloc((r->elements + 2) * sizeof(*argv));
	if (!argv)
		die("malloc");
	argv[0] = "ZREM";
	argv[1] = "dl";
	for (i = 0; i < r->elements; i++) {
		argv[i + 2] = r->element[i]->str;
		report(d, strtoull(r->element[i]->str, NULL, 10), now);
	}
	redisAppendCommandArgv(d->rc, r->elements + 2, argv, NULL);
	redis_expect(d, REPLY_ACK);
	free(argv);
	if (r->elements == 1000) {
		redis_ask_due(d, now);
		d->asking = true;
	}
}

/* Read the command connection's replies that have come. */
static void redis_read(struct drv *d)
{
	struct pollfd p = { .fd = d->rc->fd, .events = POLLIN };
	redisReply *r;
	size_t i = 0;

	/* All that has come: a backlog of acks must not hide the poller's answer. */
	while (poll(&p, 1, 0) == 1) {
		if (redisBufferRead(d->rc) != REDIS_OK)
			die("redis read");
		while (i < d->nr_kinds && redisGetReplyFromReader(d->rc, (void **)&r) == REDIS_OK && r) {
			if (r->type == REDIS_REPLY_ERROR) {
				fprintf(stderr, "scen-c: redis: %s\n", r->str);
				exit(1);
			}
			if (d->kinds[i++] == REPLY_DUE)
				redis_due(d, r);
			freeReplyObject(r);
		}
		if (i == d->nr_kinds)
			break;
	}
	memmove(d->kinds, d->kinds + i, d->nr_kinds - i);
	d->nr_kinds -= i;
	redis_send(d->rc);
}

/* A deadline in whole ms, rounded up: a poller at floor(now) never fires early. */
static uint64_t ceil_ms(uint64_t ns)
{
	return (ns + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC;
}

/* Members a gathered ZADD or ZREM takes at most, and room for each one's words. */
#define ZSET_BATCH	1024
#define ZSET_WORD	24

static void zset_setup(struct drv *d)
{
	d->rc = redis_connect();
	redis_config(d, d->rc);
	d->fd = d->rc->fd;
	d->wake = 0;
	d->argv = malloc((2 * ZSET_BATCH + 2) * sizeof(*d->argv));
	d->argl = malloc((2 * ZSET_BATCH + 2) * sizeof(*d->argl));
	d->argbuf = malloc(2 * ZSET_BATCH * ZSET_WORD);
	if (!d->argv || !d->argl || !d->argbuf)
		die("malloc");
}

/* The ZADD or ZREM gathered so far, into the pipeline. */
static void zset_put(struct drv *d)
{
	if (d->argc <= 2)
		return;
	redisAppendCommandArgv(d->rc, d->argc, d->argv, d->argl);
	redis_expect(d, REPLY_ACK);
	d->argc = 0;
}

static void zset_word(struct drv *d, const char *fmt, unsigned long long v)
{
	char *w = d->argbuf + (d->argc - 2) * ZSET_WORD;

	d->argl[d->argc] = snprintf(w, ZSET_WORD, fmt, v);
	d->argv[d->argc++] = w;
}

/*
 * As a client gathers a turn's writes: a run of arms in one ZADD of
 * every (deadline, id), a run of cancels in one ZREM of every id, so an
 * id's commands keep the schedule's order; one write for the turn.
 */
static void zset_apply(struct drv *d, const struct scen_event *ev, size_t n, uint64_t now)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned int id = SCEN_ID(&ev[i]);
		int op = SCEN_OP(&ev[i]) == SCEN_CANCEL ? SCEN_CANCEL : SCEN_ADD;

		if (d->argc && (op != d->argop || d->argc + 2 > 2 * ZSET_BATCH + 2))
			zset_put(d);
		if (!d->argc) {
			d->argv[0] = op == SCEN_CANCEL ? "ZREM" : "ZADD";
			d->argv[1] = "dl";
			d->argl[0] = 4;
			d->argl[1] = 2;
			d->argc = 2;
			d->argop = op;
		}
		if (op == SCEN_ADD)
			zset_word(d, "%llu", ceil_ms(now + d->h.timeout_ns));
		zset_word(d, "%llu", id);
	}
	zset_put(d);
	redis_send(d->rc);
}

/* Every tick, ask for what is due (unless the last question is unanswered). */
static void zset_poll(struct drv *d, uint64_t now)
{
	if (now >= d->wake) {
		if (!d->asking) {
			redis_ask_due(d, now);
			d->asking = true;
		}
		d->wake += d->h.tick_ns;
		if (d->wake <= now)
			d->wake = now + d->h.tick_ns;
	}
	redis_read(d);
}

static void keyspace_setup(struct drv *d)
{
	redisReply *r;

	d->rc = redis_connect();
	d->sub = redis_connect();
	redis_config(d, d->rc);
	redis_cmd(d->rc, "CONFIG SET notify-keyspace-events %s", "Ex");
	if (!strcmp(d->way->name, "redis-keyspace-effort"))
		redis_cmd(d->rc, "CONFIG SET active-expire-effort %s", "10");
	r = redisCommand(d->sub, "SUBSCRIBE __keyevent@0__:expired");
	if (!r)
		die("SUBSCRIBE");
	freeReplyObject(r);
	d->fd = d->sub->fd;
	d->fd2 = d->rc->fd;
}

static void keyspace_apply(struct drv *d, const struct scen_event *ev, size_t n, uint64_t now)
{
	size_t i;

	(void)now;
	for (i = 0; i < n; i++) {
		unsigned int id = SCEN_ID(&ev[i]);

		if (SCEN_OP(&ev[i]) == SCEN_CANCEL)
			redisAppendCommand(d->rc, "DEL %u", id);
		else
			redisAppendCommand(d->rc, "SET %u 1 PX %llu", id,
					   (unsigned long long)(d->h.timeout_ns / NSEC_PER_MSEC));
		redis_expect(d, REPLY_ACK);
	}
	redis_send(d->rc);
}

static void keyspace_poll(struct drv *d, uint64_t now)
{
	struct pollfd p = { .fd = d->sub->fd, .events = POLLIN };
	redisReply *r;

	redis_read(d);
	if (poll(&p, 1, 0) != 1)
		return;
	if (redisBufferRead(d->sub) != REDIS_OK)
		die("redis subscription");
	now = mono_ns();
	while (redisGetReplyFromReader(d->sub, (void **)&r) == REDIS_OK && r) {
		/* ["message", channel, key] */
		if (r->type == REDIS_REPLY_ARRAY && r->elements == 3)
			report(d, strtoull(r->element[2]->str, NULL, 10), now);
		freeReplyObject(r);
	}
}

/* ---- twheel ---- */

#define BATCH	4096

static void wheel_setup(struct drv *d, bool touch)
{
	/* The row's tick, or the module's finest where the row's is finer. */
	struct twheel_setup_args sa = {
		.tick_ns = d->h.tick_ns > TWHEEL_TICK_MIN_NS ? d->h.tick_ns : TWHEEL_TICK_MIN_NS,
		.default_timeout_ns = d->h.timeout_ns,
		.clockid = CLOCK_MONOTONIC,
		.flags = touch ? TWHEEL_SETUPF_TOUCH : 0,
		.touch_slots = touch ? d->h.nr_ids : 0,
	};
	int ret;

	d->fd = twheel_open(O_CLOEXEC | O_NONBLOCK);
	if (d->fd < 0) {
		errno = -d->fd;
		die("open " TWHEEL_DEVICE);
	}
	ret = twheel_setup_params(d->fd, &sa);
	if (!ret && touch)
		ret = twheel_touch_map(d->fd, d->h.nr_ids, CLOCK_MONOTONIC, &d->touch);
	if (ret) {
		errno = -ret;
		die("twheel setup");
	}
	d->ops = calloc(BATCH, sizeof(*d->ops));
	d->ids = calloc(BATCH, sizeof(*d->ids));
	if (!d->ops || !d->ids)
		die("calloc");
}

static void batch_setup(struct drv *d)
{
	wheel_setup(d, false);
}

static void touch_setup(struct drv *d)
{
	wheel_setup(d, true);
}

static void send_ops(struct drv *d, unsigned int n)
{
	unsigned int i;
	int ret = twheel_batch(d->fd, d->ops, n);

	d->nr_ioctls++;

	if (ret != (int)n) {
		errno = ret < 0 ? -ret : EIO;
		die("TWHEEL_IOC_BATCH");
	}
	for (i = 0; i < n; i++)
		if (d->ops[i].result && d->ops[i].op == TWHEEL_OP_ADD) {
			errno = -d->ops[i].result;
			die("twheel add");
		}
}

static void send_refreshes(struct drv *d, unsigned int n)
{
	int ret = twheel_refresh_ids(d->fd, d->ids, n, TWHEEL_TIMEOUT_DEFAULT,
				     TWHEEL_OPF_ADD_IF_ABSENT, NULL, NULL);

	d->nr_ioctls++;

	if (ret != (int)n) {
		errno = ret < 0 ? -ret : EIO;
		die("TWHEEL_IOC_REFRESH");
	}
}

/*
 * The turn's events in order, as runs: refreshes go in one
 * TWHEEL_IOC_REFRESH, adds and cancels in one TWHEEL_IOC_BATCH; with a
 * touch table a refresh is a store and an add binds the id to its slot.
 */
/*
 * With @touch a refresh stamps the loop turn's time (twheel_touch_at), as
 * ring-lazy does: a server's loop reads the clock once a turn, and the
 * wheel's clock is the loop's (CLOCK_MONOTONIC).
 */
static void wheel_apply(struct drv *d, const struct scen_event *ev, size_t n, bool touch,
			uint64_t now)
{
	unsigned int nops = 0, nids = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		uint32_t id = SCEN_ID(&ev[i]);

		switch (SCEN_OP(&ev[i])) {
		case SCEN_REFRESH:
			if (touch) {
				twheel_touch_at(&d->touch, id, now);
				continue;
			}
			if (nops) {
				send_ops(d, nops);
				nops = 0;
			}
			d->ids[nids++] = id;
			if (nids == BATCH) {
				send_refreshes(d, nids);
				nids = 0;
			}
			continue;
		case SCEN_ADD:
			twheel_prep_add(&d->ops[nops], id, TWHEEL_TIMEOUT_DEFAULT);
			if (touch)
				twheel_prep_bind(&d->ops[nops], id);
			break;
		default:
			twheel_prep_cancel(&d->ops[nops], id);
			break;
		}
		if (nids) {
			send_refreshes(d, nids);
			nids = 0;
		}
		if (++nops == BATCH) {
			send_ops(d, nops);
			nops = 0;
		}
	}
	if (nops)
		send_ops(d, nops);
	if (nids)
		send_refreshes(d, nids);
}

static void batch_apply(struct drv *d, const struct scen_event *ev, size_t n, uint64_t now)
{
	wheel_apply(d, ev, n, false, now);
}

static void touch_apply(struct drv *d, const struct scen_event *ev, size_t n, uint64_t now)
{
	wheel_apply(d, ev, n, true, now);
}

static void wheel_poll(struct drv *d, uint64_t now)
{
	static struct twheel_event ev[1024];
	bool got = false;
	int n, i;

	for (;;) {
		n = twheel_read_events(d->fd, ev, 1024);
		d->nr_reads++;
		if (n <= 0)
			break;
		got = true;
		now = mono_ns();
		for (i = 0; i < n; i++)
			report(d, ev[i].id, now);
		/*
		 * A short read took every event there was: the next ones come
		 * with a later tick, which makes the fd readable again.
		 */
		if (n < 1024)
			return;
	}
	if (n != -EAGAIN) {
		errno = -n;
		die("read " TWHEEL_DEVICE);
	}
	/* Polled readable, and nothing to read. */
	if (!got)
		d->nr_empty++;
}

static const struct way ways[] = {
	{ "null", NULL, null_apply, NULL },
	{ "mapscan", mapscan_setup, mapscan_apply, mapscan_poll },
	{ "ring", ring_setup, ring_apply, ring_poll },
	{ "ring-lazy", lazy_setup, lazy_apply, lazy_poll },
	{ "timerfd", timerfd_setup, timerfd_apply, timerfd_poll },
	{ "redis-zset", zset_setup, zset_apply, zset_poll },
	{ "redis-keyspace", keyspace_setup, keyspace_apply, keyspace_poll },
	{ "redis-keyspace-effort", keyspace_setup, keyspace_apply, keyspace_poll },
	{ "twheel-batch", batch_setup, batch_apply, wheel_poll },
	{ "twheel-touch", touch_setup, touch_apply, wheel_poll },
};

/* ---- the protocol and the loop ---- */

static void load(struct drv *d, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len, off = 0;

	if (fd < 0 || read(fd, &d->h, sizeof(d->h)) != sizeof(d->h) || d->h.magic != SCEN_MAGIC)
		die(path);
	len = d->h.nr_events * sizeof(*d->ev);
	d->ev = malloc(len);
	if (!d->ev)
		die("malloc");
	while (off < len) {
		ssize_t n = read(fd, (char *)d->ev + off, len - off);

		if (n <= 0)
			die(path);
		off += n;
	}
	close(fd);
}

static uint64_t ev_time(const struct drv *d, size_t i)
{
	return d->t0 + d->ev[i].t_us * 1000ULL;
}

static void run(struct drv *d)
{
	uint64_t end = d->t0 + d->h.end_us * 1000ULL, lag = 0, applied = 0;
	size_t i = 0, n = d->h.nr_events;
	bool readable = false;
	int fds[2] = { d->fd, d->fd2 }, ep = epoll_create1(EPOLL_CLOEXEC), k;
	struct epoll_event ready[2];

	if (ep < 0)
		die("epoll_create1");
	for (k = 0; k < 2; k++) {
		struct epoll_event e = { .events = EPOLLIN, .data.fd = fds[k] };

		if (fds[k] >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, fds[k], &e) < 0)
			die("epoll_ctl");
	}

	for (;;) {
		uint64_t now = mono_ns(), limit, next, wait, late;
		struct timespec ts;
		size_t j;
		int nr;

		/* Events before the way's tick go first: a tick never runs late for them. */
		limit = d->wake <= now ? d->wake - 1 : now;
		while (i < n && ev_time(d, i) <= limit) {
			if (SCEN_OP(&d->ev[i]) == SCEN_MARK) {
				flush_out(d);
				if (SCEN_ID(&d->ev[i]) == 2)
					printf("stats turns=%llu readable=%llu ioctls=%llu reads=%llu empty_reads=%llu\n",
					       (unsigned long long)d->nr_turns, (unsigned long long)d->nr_readable,
					       (unsigned long long)d->nr_ioctls, (unsigned long long)d->nr_reads,
					       (unsigned long long)d->nr_empty);
				d->nr_turns = d->nr_readable = d->nr_ioctls = d->nr_reads = d->nr_empty = 0;
				printf("mark %u\n", SCEN_ID(&d->ev[i]));
				fflush(stdout);
				i++;
				continue;
			}
			for (j = i; j < n && ev_time(d, j) <= limit && SCEN_OP(&d->ev[j]) != SCEN_MARK; j++)
				;
			d->way->apply(d, &d->ev[i], j - i, now);
			/* The chunk's first event was applied this late, its last by now. */
			late = mono_ns() - ev_time(d, i);
			if (late > lag)
				lag = late;
			if (late > SCEN_LATE_NS)
				printf("late %u %u %llu\n", d->ev[i].t_us, d->ev[j - 1].t_us,
				       (unsigned long long)mono_ns());
			applied += j - i;
			i = j;
		}
		if (d->way->poll && (d->wake <= now || readable))
			d->way->poll(d, now);
		if (d->nr_out)
			flush_out(d);
		fflush(stdout);
		if (i == n && now >= end)
			break;
		next = i < n ? ev_time(d, i) : end;
		if (d->wake < next)
			next = d->wake;
		now = mono_ns();
		wait = next > now ? next - now : 0;
		if (wait < d->h.gather_ns && next != d->wake)
			wait = d->h.gather_ns;
		ts.tv_sec = wait / NSEC_PER_SEC;
		ts.tv_nsec = wait % NSEC_PER_SEC;
		nr = epoll_pwait2(ep, ready, 2, &ts, NULL);
		if (nr < 0 && errno != EINTR)
			die("epoll_pwait2 (Linux 5.11 or later)");
		readable = nr > 0;
		d->nr_turns++;
		d->nr_readable += readable;
	}
	printf("done applied=%llu lag_max_ns=%llu\n", (unsigned long long)applied,
	       (unsigned long long)lag);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct drv d = { .fd = -1, .fd2 = -1, .wake = UINT64_MAX };
	char line[64];
	size_t i;

	if (argc != 3) {
		fprintf(stderr, "usage: scen-c WAY SCHEDULE (scenctl runs it; see scen.h)\n");
		return 2;
	}
	for (i = 0; i < sizeof(ways) / sizeof(ways[0]); i++)
		if (!strcmp(argv[1], ways[i].name))
			d.way = &ways[i];
	if (!d.way) {
		fprintf(stderr, "scen-c: no way %s\n", argv[1]);
		return 2;
	}
	load(&d, argv[2]);
	/* Set up before the start; the ticks count from it. */
	if (d.way->setup)
		d.way->setup(&d);
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin) || sscanf(line, "go %llu", (unsigned long long *)&d.t0) != 1)
		die("no go");
	if (d.wake != UINT64_MAX)
		d.wake = d.t0 + d.h.tick_ns;
	sleep_ns(d.t0 > mono_ns() ? d.t0 - mono_ns() : 0);
	run(&d);
	return 0;
}
