// SPDX-License-Identifier: MIT
/*
 * The server: one epoll loop, one wheel, no timer of its own.
 *
 * Each accepted connection becomes an id in a twheel wheel whose default
 * timeout is the idle limit T, bound to the touch slot numbered as its
 * fd. A read that brings data refreshes the connection with
 * twheel_touch_at(): a clock read and a store into the mapped table, no
 * system call. The kernel looks at the slot when the connection's
 * deadline comes (or a level of its wheel before); touched since, it
 * re-arms the id to the touch + T,
 * else the id expires and its event is read here from the wheel fd, which
 * sits in the same epoll set as the sockets, and the connection is closed.
 * A connection the peer closes is cancelled.
 *
 * The one race: data that arrives after the kernel's look but before
 * the event is handled here. The touch came too late for the kernel (the
 * event's deadline precedes it), so before a drop the socket is read
 * once more and the connection's last receive checked: one that spoke
 * less than T ago is put back with its deadline at that receive + T.
 * Nothing is dropped before it has really been idle for T.
 *
 * Ids are (serial << 24 | fd): the fd finds the connection, the serial
 * tells an event of a closed connection (whose fd may already serve a
 * new one) from the current one's.
 */
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <twheel.h>

#include "idle.h"

#define FD_BITS		24	/* TWHEEL_TOUCH_MAX_SLOTS is 1 << 24 */
#define FD_MASK		((1ULL << FD_BITS) - 1)

struct conn {
	uint64_t id;		/* 0: no connection on this fd */
	uint64_t last_rx;	/* last data (the stamp in its slot), or accept */
	struct sockaddr_in peer;
};

struct server {
	const struct idle_server_cfg *cfg;
	int lfd, wfd, sfd, ep;
	struct twheel_touch touch;
	struct conn *conns;	/* indexed by fd, cfg->max_conns of them */
	uint64_t serial;
	unsigned long long accepted, refused, closed, dropped, rescued, stale;
	unsigned long long touches, messages;
};

uint64_t mono_now(void)
{
	return twheel_now(CLOCK_MONOTONIC);
}

static int fail(const char *what, int err)
{
	fprintf(stderr, "idle-server: %s: %s\n", what, strerror(err));
	return -1;
}

/* The wheel: tick, T as default timeout, a touch slot per possible fd. */
static int wheel_open(struct server *s)
{
	struct twheel_setup_args sa = {
		.tick_ns = s->cfg->tick_ns,
		.default_timeout_ns = s->cfg->timeout_ns,
		.clockid = CLOCK_MONOTONIC,
		.flags = TWHEEL_SETUPF_TOUCH,
		.touch_slots = s->cfg->max_conns,
	};
	int ret;

	s->wfd = twheel_open(O_CLOEXEC | O_NONBLOCK);
	if (s->wfd < 0)
		return fail("open " TWHEEL_DEVICE, -s->wfd);
	ret = twheel_setup_params(s->wfd, &sa);
	if (ret < 0)
		return fail("wheel setup", -ret);
	ret = twheel_touch_map(s->wfd, sa.touch_slots, CLOCK_MONOTONIC, &s->touch);
	if (ret < 0)
		return fail("touch table mmap", -ret);
	return 0;
}

static int watch(struct server *s, int fd, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.fd = fd };

	return epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &ev);
}

/* Arm @fd's connection to expire at @deadline_ns (0: now + T), bound to slot fd. */
static int arm(struct server *s, int fd, uint64_t deadline_ns)
{
	struct twheel_op op;

	if (deadline_ns)
		twheel_prep_add_at(&op, s->conns[fd].id, deadline_ns);
	else
		twheel_prep_add(&op, s->conns[fd].id, TWHEEL_TIMEOUT_DEFAULT);
	twheel_prep_bind(&op, fd);
	return twheel_submit_op(s->wfd, &op);
}

static void forget(struct server *s, int fd)
{
	s->conns[fd].id = 0;
	close(fd);
}

static void accept_all(struct server *s)
{
	for (;;) {
		struct sockaddr_in peer;
		socklen_t len = sizeof(peer);
		int fd, ret;

		fd = accept4(s->lfd, (struct sockaddr *)&peer, &len,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
				/* EMFILE and friends: a real server would back off. */
				fail("accept", errno);
				s->refused++;
			}
			return;
		}
		if ((unsigned int)fd >= s->cfg->max_conns) {
			s->refused++;
			close(fd);
			continue;
		}
		s->conns[fd] = (struct conn){
			.id = ++s->serial << FD_BITS | fd,
			.last_rx = mono_now(),
			.peer = peer,
		};
		ret = arm(s, fd, 0);
		if (ret < 0 || watch(s, fd, EPOLLIN | EPOLLRDHUP)) {
			fail("track connection", ret < 0 ? -ret : errno);
			s->refused++;
			forget(s, fd);
			continue;
		}
		s->accepted++;
	}
}

/*
 * The peer closed, or the socket failed: cancel its id. ENOENT means it
 * expired meanwhile; its event then finds the connection gone (stale).
 */
static void close_conn(struct server *s, int fd)
{
	twheel_cancel(s->wfd, s->conns[fd].id);
	forget(s, fd);
	s->closed++;
}

static void read_conn(struct server *s, int fd)
{
	char buf[4096];
	bool got = false;

	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n > 0) {
			got = true;
			for (ssize_t i = 0; i < n; i++)
				s->messages += buf[i] == '\n';
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		close_conn(s, fd);	/* EOF or error */
		return;
	}
	if (got) {
		/* The refresh: one clock read, one store, no system call. */
		uint64_t now = mono_now();

		twheel_touch_at(&s->touch, fd, now);
		s->conns[fd].last_rx = now;
		s->touches++;
	}
}

static void drop(struct server *s, int fd, const struct twheel_event *ev,
		 uint64_t now)
{
	struct conn *c = &s->conns[fd];

	fprintf(s->cfg->log, "idle-server: drop peer=%s:%u idle_ms=%.1f "
		"last_rx_ns=%llu drop_ns=%llu deadline_ns=%llu expired_ns=%llu\n",
		inet_ntoa(c->peer.sin_addr), ntohs(c->peer.sin_port),
		(now - c->last_rx) / 1e6, (unsigned long long)c->last_rx,
		(unsigned long long)now, (unsigned long long)ev->deadline_ns,
		(unsigned long long)ev->expired_ns);
	forget(s, fd);
	s->dropped++;
}

static int read_expired(struct server *s)
{
	struct twheel_event ev[256];

	for (;;) {
		int n = twheel_read_events(s->wfd, ev, 256);
		uint64_t now;

		if (n == -EAGAIN)
			return 0;
		if (n == -EINTR)
			continue;
		if (n < 0)
			return fail("read expiries", -n);
		now = mono_now();
		for (int i = 0; i < n; i++) {
			int fd = ev[i].id & FD_MASK;
			struct conn *c = &s->conns[fd];

			if (c->id != ev[i].id) {
				s->stale++;
				continue;
			}
			/* Data may wait that epoll has not reported yet. */
			read_conn(s, fd);
			if (!c->id)
				continue;	/* the peer closed it */
			if (now - c->last_rx < s->cfg->timeout_ns ||
			    c->last_rx > now) {
				/* Data came after the kernel's look: not idle yet. */
				int ret = arm(s, fd, c->last_rx + s->cfg->timeout_ns);

				if (ret < 0) {
					fail("re-arm", -ret);
					forget(s, fd);
					s->closed++;
				} else {
					s->rescued++;
				}
				continue;
			}
			drop(s, fd, &ev[i], now);
		}
	}
}

int idle_serve(int lfd, const struct idle_server_cfg *cfg)
{
	struct server s = { .cfg = cfg, .lfd = lfd, .wfd = -1 };
	sigset_t mask;
	int ret = -1;

	s.conns = calloc(cfg->max_conns, sizeof(*s.conns));
	if (!s.conns)
		return fail("connection table", ENOMEM);
	if (wheel_open(&s))
		return -1;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	s.sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	s.ep = epoll_create1(EPOLL_CLOEXEC);
	if (s.sfd < 0 || s.ep < 0 || fcntl(lfd, F_SETFL, O_NONBLOCK) ||
	    watch(&s, lfd, EPOLLIN) || watch(&s, s.wfd, EPOLLIN) ||
	    watch(&s, s.sfd, EPOLLIN))
		return fail("epoll set", errno);

	for (;;) {
		struct epoll_event evs[64];
		int n = epoll_wait(s.ep, evs, 64, -1);

		if (n < 0 && errno != EINTR) {
			fail("epoll_wait", errno);
			goto out;
		}
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd == s.sfd) {
				ret = 0;
				goto out;
			} else if (fd == lfd) {
				accept_all(&s);
			} else if (fd == s.wfd) {
				if (read_expired(&s))
					goto out;
			} else if (s.conns[fd].id) {
				read_conn(&s, fd);
			}
		}
	}
out:
	fprintf(cfg->log, "idle-server: stats accepted=%llu refused=%llu closed=%llu "
		"dropped=%llu rescued=%llu stale=%llu messages=%llu touches=%llu "
		"rearms=%lld\n", s.accepted, s.refused, s.closed, s.dropped,
		s.rescued, s.stale, s.messages, s.touches, fdinfo_value(s.wfd, "touch_rearms"));
	fflush(cfg->log);
	return ret;
}
