// SPDX-License-Identifier: GPL-2.0
/*
 * scen-c: the C ways of the scenario benchmark, one per argument, each a
 * driver of the protocol in scen.h (scenctl starts it):
 *
 *   null            the replay alone: the floor every C way is measured from
 *   mapscan         seed 000's first answer: a hash map id -> last seen,
 *                   scanned every tick (the seeds' 1 s, scaled)
 *   ring            seeds 000/003: a ring of T/tick + 1 slots, a Set of ids
 *                   per slot and a Map id -> slot; an arm moves the id into
 *                   the slot just behind the cursor, each tick expires the
 *                   slot under it
 *   timerfd         one timerfd per id in an epoll set, a map id -> fd
 *   redis-zset      Redis: ZADD deadline id per arm, a poller every tick
 *                   (ZRANGEBYSCORE -inf now, then ZREM of what it got)
 *   redis-keyspace  Redis: SET id PX timeout per arm, expiry through keyspace
 *                   notifications (notify-keyspace-events Ex)
 *   twheel-batch    /dev/twheel: each loop turn's refreshes in one
 *                   TWHEEL_IOC_REFRESH, adds and cancels in one
 *                   TWHEEL_IOC_BATCH; expiries read(2) from the wheel fd
 *   twheel-touch    /dev/twheel with a touch table: an add binds the id to
 *                   its slot, a refresh is twheel_touch(), no system call
 *
 * All share one event loop, as a server's: each turn applies the events
 * whose time has come (at most a millisecond after it: the loop waits
 * at least that long, as a server's loop gathers packets), then lets the
 * way look for expiries; the wait ends early when the way's fd (epoll
 * set, wheel, subscription) turns readable or its tick comes.
 */
#include <hiredis/hiredis.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/timerfd.h>

#include "twheel_test.h"
#include "hmap.h"
#include "scen.h"

#define QUANTUM_NS	NSEC_PER_MSEC
/* twheel's tick: its precision, finer than the seeds' scaled second. */
#define TWHEEL_TICK_NS	(10 * NSEC_PER_MSEC)

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
	struct twheel_op *ops;
	uint64_t *ids;
	struct twheel_touch touch;
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
 * The server's own clock (hz: active expiry and the cron) runs at the
 * scenario's scale too, up to Redis's limit of 500 a second: 10 (its
 * default) times the scale.
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

static void zset_setup(struct drv *d)
{
	d->rc = redis_connect();
	redis_config(d, d->rc);
	d->fd = d->rc->fd;
	d->wake = 0;
}

static void zset_apply(struct drv *d, const struct scen_event *ev, size_t n, uint64_t now)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned int id = SCEN_ID(&ev[i]);

		if (SCEN_OP(&ev[i]) == SCEN_CANCEL)
			redisAppendCommand(d->rc, "ZREM dl %u", id);
		else
			redisAppendCommand(d->rc, "ZADD dl %llu %u",
					   (unsigned long long)ceil_ms(now + d->h.timeout_ns), id);
		redis_expect(d, REPLY_ACK);
	}
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
	struct twheel_setup_args sa = {
		.tick_ns = TWHEEL_TICK_NS, .default_timeout_ns = d->h.timeout_ns,
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
static void wheel_apply(struct drv *d, const struct scen_event *ev, size_t n, bool touch)
{
	unsigned int nops = 0, nids = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		uint32_t id = SCEN_ID(&ev[i]);

		switch (SCEN_OP(&ev[i])) {
		case SCEN_REFRESH:
			if (touch) {
				twheel_touch(&d->touch, id);
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
	(void)now;
	wheel_apply(d, ev, n, false);
}

static void touch_apply(struct drv *d, const struct scen_event *ev, size_t n, uint64_t now)
{
	(void)now;
	wheel_apply(d, ev, n, true);
}

static void wheel_poll(struct drv *d, uint64_t now)
{
	static struct twheel_event ev[1024];
	int n, i;

	while ((n = twheel_read_events(d->fd, ev, 1024)) > 0) {
		now = mono_ns();
		for (i = 0; i < n; i++)
			report(d, ev[i].id, now);
	}
	if (n != -EAGAIN) {
		errno = -n;
		die("read " TWHEEL_DEVICE);
	}
}

static const struct way ways[] = {
	{ "null", NULL, null_apply, NULL },
	{ "mapscan", mapscan_setup, mapscan_apply, mapscan_poll },
	{ "ring", ring_setup, ring_apply, ring_poll },
	{ "timerfd", timerfd_setup, timerfd_apply, timerfd_poll },
	{ "redis-zset", zset_setup, zset_apply, zset_poll },
	{ "redis-keyspace", keyspace_setup, keyspace_apply, keyspace_poll },
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

	for (;;) {
		uint64_t now = mono_ns(), limit, next, wait, late;
		struct timespec ts;
		struct pollfd p[2] = { { .fd = d->fd, .events = POLLIN },
				       { .fd = d->fd2, .events = POLLIN } };
		size_t j;

		/* Events before the way's tick go first: a tick never runs late for them. */
		limit = d->wake <= now ? d->wake - 1 : now;
		while (i < n && ev_time(d, i) <= limit) {
			if (SCEN_OP(&d->ev[i]) == SCEN_MARK) {
				flush_out(d);
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
		if (wait < QUANTUM_NS && next != d->wake)
			wait = QUANTUM_NS;
		ts.tv_sec = wait / NSEC_PER_SEC;
		ts.tv_nsec = wait % NSEC_PER_SEC;
		if (ppoll(p, 2, &ts, NULL) < 0 && errno != EINTR)
			die("ppoll");
		readable = p[0].revents || p[1].revents;
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
