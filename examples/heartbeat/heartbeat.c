// SPDX-License-Identifier: GPL-2.0
/*
 * heartbeat: an IM gateway's offline detection, at a visible scale.
 *
 * A gateway tracks N connections; each sends a heartbeat every ~interval
 * and is declared offline when none came for `timeout`. Here the
 * connections are simulated in the program's own epoll loop: due
 * heartbeats are sent to the wheel as one TWHEEL_IOC_BATCH of REFRESH
 * ops per loop turn, and the wheel fd sits in the same epoll set, so
 * offline connections are read back with read(2) when it turns readable.
 * A chosen subset goes silent at random times; each must be reported
 * offline no earlier than its last heartbeat + timeout, and soon after.
 * No connection that kept sending may ever be reported.
 *
 * Last line of output, for scripts:
 *   demo: tracked=N offline=N expected_offline=N early=N p50_ms=X
 *         p99_ms=X max_ms=X timeout_ms=T refreshes_per_s=R
 * Exit status 0 only if every silent connection and no other was
 * reported, none early.
 */
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <unistd.h>
#include <twheel.h>

#include "../example.h"

#define STEP_NS		(5 * NSEC_PER_MSEC)	/* simulation step */
#define ID_BASE		0x1000000000ULL		/* ids look like user ids */

struct conn {
	uint64_t last_hb;	/* time of the last heartbeat sent */
	uint64_t next_hb;	/* when the next one is due */
	uint64_t silent_at;	/* stops sending from then on; 0 never */
	uint64_t offline_at;	/* when reported offline; 0 not yet */
};

struct demo {
	unsigned int nr_conns, nr_silent;
	uint64_t timeout_ns, interval_ns, tick_ns, duration_ns;
	uint64_t seed;
	int fd;
	struct conn *conns;
	struct twheel_op *ops;
	unsigned int *pending;	/* conn index of each op in ops */
	double *latency_ms;
	unsigned int nr_offline, nr_early, nr_false, nr_lost;
	unsigned long long nr_refresh, nr_batches;
};

/* The next heartbeat interval: the nominal one, +-20 %. */
static uint64_t jitter(struct demo *d)
{
	return d->interval_ns * 8 / 10 +
	       rnd(&d->seed) % (d->interval_ns * 4 / 10 + 1);
}

static int start(struct demo *d, uint64_t t0)
{
	unsigned int i, n;
	int ret;

	for (i = 0; i < d->nr_conns; i++) {
		d->conns[i].last_hb = t0;
		d->conns[i].next_hb = t0 + rnd(&d->seed) % d->interval_ns;
		twheel_prep_add(&d->ops[i], ID_BASE + i, TWHEEL_TIMEOUT_DEFAULT);
	}
	/*
	 * Silent ones stop between 1 s in and early enough to be detected
	 * before the end: each silent conn gets a distinct index.
	 */
	for (n = 0; n < d->nr_silent; ) {
		uint64_t span = d->duration_ns - d->timeout_ns - 2 * NSEC_PER_SEC;
		struct conn *c = &d->conns[rnd(&d->seed) % d->nr_conns];

		if (c->silent_at)
			continue;
		c->silent_at = t0 + NSEC_PER_SEC + rnd(&d->seed) % span;
		n++;
	}
	ret = twheel_batch(d->fd, d->ops, d->nr_conns);
	if (ret != (int)d->nr_conns) {
		fprintf(stderr, "heartbeat: add batch: %d\n", ret);
		return -1;
	}
	for (i = 0; i < d->nr_conns; i++)
		if (d->ops[i].result) {
			fprintf(stderr, "heartbeat: add %u: %s\n", i,
				strerror(-d->ops[i].result));
			return -1;
		}
	return 0;
}

/* Send every heartbeat that is due, as one batch of refreshes. */
static int send_heartbeats(struct demo *d)
{
	uint64_t now = mono_ns();
	unsigned int i, n = 0;
	int ret;

	for (i = 0; i < d->nr_conns; i++) {
		struct conn *c = &d->conns[i];

		if (c->next_hb > now || c->offline_at)
			continue;
		if (c->silent_at && c->silent_at <= c->next_hb)
			continue;
		twheel_prep_refresh(&d->ops[n], ID_BASE + i,
				    TWHEEL_TIMEOUT_DEFAULT, 0);
		d->pending[n++] = i;
		c->next_hb += jitter(d);
	}
	if (!n)
		return 0;
	/* Taken before the batch: deadline >= last_hb + timeout. */
	now = mono_ns();
	ret = twheel_batch(d->fd, d->ops, n);
	if (ret != (int)n) {
		fprintf(stderr, "heartbeat: refresh batch: %d of %u\n", ret, n);
		return -1;
	}
	d->nr_batches++;
	d->nr_refresh += n;
	for (i = 0; i < n; i++) {
		struct conn *c = &d->conns[d->pending[i]];

		if (d->ops[i].result == 0) {
			c->last_hb = now;
		} else {
			/* Expired while still sending: the wheel was late. */
			d->nr_lost++;
			fprintf(stderr, "heartbeat: conn %u refresh: %s\n",
				d->pending[i], strerror(-d->ops[i].result));
		}
	}
	return 0;
}

/* Read every offline report waiting on the wheel. */
static int read_offline(struct demo *d)
{
	struct twheel_event ev[256];
	int n, i;

	for (;;) {
		uint64_t now;

		n = twheel_read_events(d->fd, ev, 256);
		if (n == -EAGAIN)
			return 0;
		if (n < 0) {
			fprintf(stderr, "heartbeat: read: %s\n", strerror(-n));
			return -1;
		}
		now = mono_ns();
		for (i = 0; i < n; i++) {
			uint64_t k = ev[i].id - ID_BASE;
			struct conn *c;
			int64_t late;

			if (ev[i].id < ID_BASE || k >= d->nr_conns) {
				fprintf(stderr, "heartbeat: unknown id %llu\n",
					(unsigned long long)ev[i].id);
				d->nr_false++;
				continue;
			}
			c = &d->conns[k];
			if (!c->silent_at || c->offline_at || now < c->silent_at) {
				d->nr_false++;
				fprintf(stderr, "heartbeat: conn %llu reported offline while sending\n",
					(unsigned long long)k);
				continue;
			}
			c->offline_at = now;
			late = (int64_t)(now - (c->last_hb + d->timeout_ns));
			if (late < 0)
				d->nr_early++;
			d->latency_ms[d->nr_offline++] = late / 1e6;
		}
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(const double *v, unsigned int n, unsigned int p)
{
	unsigned int i;

	if (!n)
		return 0;
	i = (unsigned int)(((unsigned long long)n * p + 99) / 100);
	return v[i ? i - 1 : 0];
}

static int run(struct demo *d)
{
	struct epoll_event ev = { .events = EPOLLIN };
	uint64_t t0, end, next_step;
	int ep;

	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, d->fd, &ev)) {
		perror("heartbeat: epoll");
		return -1;
	}
	t0 = mono_ns();
	if (start(d, t0))
		return -1;
	end = t0 + d->duration_ns;
	next_step = t0;
	for (;;) {
		uint64_t now = mono_ns();
		int n, ms;

		if (now >= next_step) {
			if (send_heartbeats(d))
				return -1;
			next_step += STEP_NS;
			if (next_step < now)
				next_step = now + STEP_NS;
			continue;
		}
		if (now >= end)
			break;
		ms = (next_step - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC;
		n = epoll_wait(ep, &ev, 1, ms);
		if (n < 0 && errno != EINTR) {
			perror("heartbeat: epoll_wait");
			return -1;
		}
		if (n > 0 && read_offline(d))
			return -1;
	}
	close(ep);
	return 0;
}

int main(int argc, char **argv)
{
	struct demo d = {
		.nr_conns = 5000, .nr_silent = 500,
		.timeout_ns = 2 * NSEC_PER_SEC, .interval_ns = 500 * NSEC_PER_MSEC,
		.tick_ns = 10 * NSEC_PER_MSEC, .duration_ns = 12 * NSEC_PER_SEC,
		.seed = 0x5eed,
	};
	double secs, p50, p99, max;
	int opt, ok;

	while ((opt = getopt(argc, argv, "n:s:t:i:T:d:r:")) != -1) {
		switch (opt) {
		case 'n': d.nr_conns = strtoul(optarg, NULL, 0); break;
		case 's': d.nr_silent = strtoul(optarg, NULL, 0); break;
		case 't': d.timeout_ns = strtoull(optarg, NULL, 0) * NSEC_PER_MSEC; break;
		case 'i': d.interval_ns = strtoull(optarg, NULL, 0) * NSEC_PER_MSEC; break;
		case 'T': d.tick_ns = strtoull(optarg, NULL, 0) * NSEC_PER_MSEC; break;
		case 'd': d.duration_ns = strtoull(optarg, NULL, 0) * NSEC_PER_SEC; break;
		case 'r': d.seed = strtoull(optarg, NULL, 0) | 1; break;
		default:
			fprintf(stderr, "usage: heartbeat [-n conns] [-s silent] [-t timeout_ms]\n"
				"  [-i interval_ms] [-T tick_ms] [-d seconds] [-r seed]\n");
			return 2;
		}
	}
	if (!d.nr_conns || d.nr_silent > d.nr_conns || !d.interval_ns ||
	    d.interval_ns >= d.timeout_ns ||
	    d.duration_ns <= d.timeout_ns + 2 * NSEC_PER_SEC) {
		fprintf(stderr, "heartbeat: need silent <= conns, interval < timeout, "
			"duration > timeout + 2 s\n");
		return 2;
	}
	d.conns = calloc(d.nr_conns, sizeof(*d.conns));
	d.ops = calloc(d.nr_conns, sizeof(*d.ops));
	d.pending = calloc(d.nr_conns, sizeof(*d.pending));
	d.latency_ms = calloc(d.nr_conns, sizeof(*d.latency_ms));
	if (!d.conns || !d.ops || !d.pending || !d.latency_ms) {
		fprintf(stderr, "heartbeat: out of memory\n");
		return 1;
	}
	d.fd = twheel_open(O_CLOEXEC | O_NONBLOCK);
	if (d.fd < 0) {
		fprintf(stderr, "heartbeat: open %s: %s\n", TWHEEL_DEVICE,
			strerror(-d.fd));
		return 1;
	}
	opt = twheel_setup(d.fd, d.tick_ns, d.timeout_ns, CLOCK_MONOTONIC, 0);
	if (opt < 0) {
		fprintf(stderr, "heartbeat: setup: %s\n", strerror(-opt));
		return 1;
	}
	printf("heartbeat: %u connections, a heartbeat every ~%llu ms each, "
	       "offline after %llu ms of silence (tick %llu ms); %u will go silent\n",
	       d.nr_conns, (unsigned long long)(d.interval_ns / NSEC_PER_MSEC),
	       (unsigned long long)(d.timeout_ns / NSEC_PER_MSEC),
	       (unsigned long long)(d.tick_ns / NSEC_PER_MSEC), d.nr_silent);
	fflush(stdout);
	if (run(&d))
		return 1;

	secs = d.duration_ns / 1e9;
	qsort(d.latency_ms, d.nr_offline, sizeof(double), cmp_double);
	p50 = pct(d.latency_ms, d.nr_offline, 50);
	p99 = pct(d.latency_ms, d.nr_offline, 99);
	max = d.nr_offline ? d.latency_ms[d.nr_offline - 1] : 0;
	printf("heartbeat: %.1f s, %llu refreshes in %llu batches (%.0f/s), "
	       "one epoll loop, no timer thread\n", secs, d.nr_refresh,
	       d.nr_batches, d.nr_refresh / secs);
	printf("heartbeat: %u of %u silent connections reported offline, %u early, "
	       "%u live ones wrongly reported, %u refreshes found the id gone\n",
	       d.nr_offline, d.nr_silent, d.nr_early, d.nr_false, d.nr_lost);
	printf("heartbeat: detection after last heartbeat + timeout: "
	       "p50 %.1f ms, p99 %.1f ms, max %.1f ms\n", p50, p99, max);
	ok = d.nr_offline == d.nr_silent && !d.nr_early && !d.nr_false &&
	     !d.nr_lost;
	printf("heartbeat: %s\n", ok ? "PASS" : "FAIL");
	printf("demo: tracked=%u offline=%u expected_offline=%u early=%u "
	       "p50_ms=%.1f p99_ms=%.1f max_ms=%.1f timeout_ms=%llu "
	       "refreshes_per_s=%.0f\n", d.nr_conns, d.nr_offline, d.nr_silent,
	       d.nr_early, p50, p99, max,
	       (unsigned long long)(d.timeout_ns / NSEC_PER_MSEC),
	       d.nr_refresh / secs);
	return ok ? 0 : 1;
}
