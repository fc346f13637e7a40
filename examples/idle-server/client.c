// SPDX-License-Identifier: MIT
/*
 * The client: many TCP connections to the server over loopback, in one
 * epoll loop. Each sends a short message ("ping\n") at random intervals
 * well below the server's idle limit, the first ("hello\n") as soon as
 * it is connected; the silent ones stop at a chosen time and must then be closed by the server, the others never. The
 * client notes for each connection when it last sent (before the write,
 * so the server cannot have received it earlier) and when it saw the
 * server close it (EOF or reset); main.c judges those times.
 */
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "idle.h"

#define STEP_NS		(5 * NSEC_PER_MSEC)	/* how often sends are due */
#define RAMP_NS		NSEC_PER_SEC		/* all connect within this */

static uint64_t interval(const struct idle_client_cfg *cfg, uint64_t *seed)
{
	return cfg->min_interval_ns +
	       rnd(seed) % (cfg->max_interval_ns - cfg->min_interval_ns + 1);
}

static int dial(const struct idle_client_cfg *cfg, struct client_conn *c)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons(cfg->port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	socklen_t len = sizeof(sa);

	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockname(c->fd, (struct sockaddr *)&sa, &len) ||
	    fcntl(c->fd, F_SETFL, O_NONBLOCK)) {
		fprintf(stderr, "idle-client: connect to 127.0.0.1:%u: %s\n",
			cfg->port, strerror(errno));
		return -1;
	}
	c->port = ntohs(sa.sin_port);
	return 0;
}

static void closed(struct client_conn *c, uint64_t now)
{
	c->closed_at = now;
	close(c->fd);
	c->fd = -1;
}

/* Every message that is due; a failed write means the server closed it. */
static void send_due(const struct idle_client_cfg *cfg, struct idle_client_result *res,
		     uint64_t *seed)
{
	uint64_t due = mono_now();

	for (unsigned int i = 0; i < res->nr_conns; i++) {
		struct client_conn *c = &res->conns[i];
		uint64_t now;

		if (c->fd < 0 || c->next_send > due)
			continue;
		if (c->silent_at && c->silent_at <= c->next_send) {
			c->next_send = UINT64_MAX;
			continue;
		}
		now = mono_now();
		if (now - c->last_send > c->max_gap)
			c->max_gap = now - c->last_send;
		c->last_send = now;
		if (send(c->fd, "ping\n", 5, MSG_NOSIGNAL) != 5) {
			/* The server closed it before we saw the EOF. */
			closed(c, now);
			continue;
		}
		c->sent++;
		res->messages++;
		c->next_send += interval(cfg, seed);
		if (c->next_send < now)
			c->next_send = now + interval(cfg, seed);
	}
}

static bool all_silent_closed(const struct idle_client_result *res)
{
	for (unsigned int i = 0; i < res->nr_conns; i++)
		if (res->conns[i].silent_at && !res->conns[i].closed_at)
			return false;
	return true;
}

/*
 * Connect the connections due by now (they arrive evenly over RAMP_NS),
 * each saying hello at once: a connection is idle from its accept on,
 * and a slow machine must not let the first ones go quiet while the
 * last ones connect.
 */
static int connect_due(const struct idle_client_cfg *cfg, struct idle_client_result *res,
		       int ep, uint64_t t0, unsigned int *nr_connected, uint64_t *seed)
{
	uint64_t now = mono_now();
	unsigned int due = now - t0 >= RAMP_NS ? cfg->nr_conns :
			   (unsigned int)((now - t0) * cfg->nr_conns / RAMP_NS) + 1;

	while (*nr_connected < due && *nr_connected < cfg->nr_conns) {
		unsigned int i = (*nr_connected)++;
		struct client_conn *c = &res->conns[i];
		struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP, .data.u32 = i };

		if (dial(cfg, c))
			return -1;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev)) {
			fprintf(stderr, "idle-client: epoll: %s\n", strerror(errno));
			return -1;
		}
		c->last_send = mono_now();
		if (send(c->fd, "hello\n", 6, MSG_NOSIGNAL) != 6) {
			fprintf(stderr, "idle-client: hello: %s\n", strerror(errno));
			return -1;
		}
		c->sent++;
		res->messages++;
		c->next_send = c->last_send + interval(cfg, seed);
	}
	return 0;
}

int idle_client(const struct idle_client_cfg *cfg, struct idle_client_result *res)
{
	uint64_t seed = cfg->seed | 1, t0, end, next_step;
	uint64_t span = cfg->duration_ns - cfg->timeout_ns - RAMP_NS - 2 * NSEC_PER_SEC;
	unsigned int nr_connected = 0;
	int ep = epoll_create1(EPOLL_CLOEXEC);

	res->nr_conns = cfg->nr_conns;
	res->conns = calloc(cfg->nr_conns, sizeof(*res->conns));
	if (ep < 0 || !res->conns) {
		fprintf(stderr, "idle-client: %s\n", strerror(errno));
		return -1;
	}
	for (unsigned int i = 0; i < cfg->nr_conns; i++)
		res->conns[i].fd = -1;
	t0 = mono_now();
	/* Silences start after the ramp, late enough to be seen before the end. */
	for (unsigned int n = 0; n < cfg->nr_silent; ) {
		struct client_conn *c = &res->conns[rnd(&seed) % cfg->nr_conns];

		if (c->silent_at)
			continue;
		c->silent_at = t0 + RAMP_NS + NSEC_PER_SEC + rnd(&seed) % span;
		n++;
	}

	end = t0 + cfg->duration_ns;
	next_step = t0;
	for (;;) {
		struct epoll_event evs[64];
		uint64_t now = mono_now();
		int n, ms;

		if (now >= next_step) {
			if (connect_due(cfg, res, ep, t0, &nr_connected, &seed))
				return -1;
			send_due(cfg, res, &seed);
			next_step += STEP_NS;
			if (next_step < now)
				next_step = now + STEP_NS;
			continue;
		}
		if (now >= end && (all_silent_closed(res) || now >= end + cfg->grace_ns))
			break;
		ms = (next_step - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC;
		n = epoll_wait(ep, evs, 64, ms);
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "idle-client: epoll_wait: %s\n", strerror(errno));
			return -1;
		}
		now = mono_now();
		for (int i = 0; i < n; i++) {
			struct client_conn *c = &res->conns[evs[i].data.u32];
			char buf[256];
			ssize_t r;

			if (c->fd < 0)
				continue;
			/* The server sends nothing: any readiness is its close. */
			r = read(c->fd, buf, sizeof(buf));
			if (r <= 0 && !(r < 0 && (errno == EAGAIN || errno == EINTR)))
				closed(c, now);
		}
	}
	/* The end: the client closes what is left; the server sees EOF. */
	for (unsigned int i = 0; i < cfg->nr_conns; i++)
		if (res->conns[i].fd >= 0) {
			close(res->conns[i].fd);
			res->conns[i].fd = -1;
		}
	close(ep);
	return 0;
}
