// SPDX-License-Identifier: MIT
/*
 * The daemon: a keeper of deadlines whose wheel survives its restarts.
 *
 * A twheel wheel lives in the kernel for as long as some fd refers to
 * it. On its first start the daemon creates its wheel and hands a copy
 * of the fd to systemd (sd_notify "FDSTORE=1" + "FDNAME=wheel" with the
 * fd attached; the unit sets FileDescriptorStoreMax=). When it is
 * restarted, systemd passes the fd back (LISTEN_FDS, LISTEN_FDNAMES
 * "wheel"), and the new process goes on with the same wheel: the ids it
 * had, with their deadlines, and the expiries that came while no process
 * was reading, which wait in the wheel until read. Setup is not done
 * again (the kept wheel's tick and default timeout stay as they were).
 *
 * Every expiry it reads is appended to the file "expired" of its state
 * directory (in a real service: the job that was due is run), in the
 * same loop turn as the read, so SIGTERM between two turns loses nothing.
 * On SIGTERM it stops reading at once and exits after --linger, as a
 * service with shutdown work would; expiries of that time wait for the
 * next process.
 *
 * For the test, --populate N fills a new wheel with N ids and writes
 * them with their deadlines to "added"; "log" gets a line per start and
 * stop.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <twheel.h>

#include "fdstore.h"

#define POPULATE_BATCH	4096

struct keeper {
	const struct daemon_cfg *cfg;
	int dir, wfd, expired_fd, log_fd;
	unsigned long long read;
};

uint64_t mono_now(void)
{
	return twheel_now(CLOCK_MONOTONIC);
}

static void record(struct keeper *k, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void record(struct keeper *k, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (write(k->log_fd, line, n) != n)
		perror("fdstore: log");
	fputs(line, stdout);
}

/* The test load: ids 1..N, 40 % due within the window, the rest in 1-48 h. */
static int populate(struct keeper *k)
{
	const struct daemon_cfg *c = k->cfg;
	struct twheel_op *ops = calloc(POPULATE_BATCH, sizeof(*ops));
	uint64_t seed = c->seed | 1, id = 1;
	int fd = openat(k->dir, "added", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (!ops || !f) {
		perror("fdstore: added");
		return -1;
	}
	while (id <= c->populate) {
		unsigned int n = 0;
		int ret;

		for (; n < POPULATE_BATCH && id <= c->populate; n++, id++) {
			uint64_t t = rnd(&seed) % 10 < 4 ?
				2 * NSEC_PER_SEC + rnd(&seed) % (c->window_ns - 2 * NSEC_PER_SEC) :
				3600 * NSEC_PER_SEC + rnd(&seed) % (47 * 3600 * NSEC_PER_SEC);

			twheel_prep_add(&ops[n], id, t);
		}
		ret = twheel_batch(k->wfd, ops, n);
		if (ret != (int)n) {
			fprintf(stderr, "fdstore: populate batch: %d of %u\n", ret, n);
			return -1;
		}
		for (unsigned int i = 0; i < n; i++) {
			if (ops[i].result) {
				fprintf(stderr, "fdstore: add %llu: %s\n",
					(unsigned long long)ops[i].id, strerror(-ops[i].result));
				return -1;
			}
			fprintf(f, "%llu %llu\n", (unsigned long long)ops[i].id,
				(unsigned long long)ops[i].deadline_ns);
		}
	}
	free(ops);
	return fclose(f) ? -1 : 0;
}

/* The wheel: the one systemd kept for us, else a new one, given to it. */
static int get_wheel(struct keeper *k, bool *adopted)
{
	int ret;

	k->wfd = sd_stored_fd(WHEEL_FD_NAME);
	*adopted = k->wfd >= 0;
	if (*adopted) {
		/* A set-up wheel answers a query of any id with 0 or ENOENT. */
		ret = twheel_query(k->wfd, 0, NULL, NULL);
		if (ret && ret != -ENOENT) {
			fprintf(stderr, "fdstore: the stored fd is no wheel: %s\n",
				strerror(-ret));
			return -1;
		}
		/* File status flags are the open file's: set again, harmless. */
		return fcntl(k->wfd, F_SETFL, O_NONBLOCK);
	}
	k->wfd = twheel_open(O_CLOEXEC | O_NONBLOCK);
	if (k->wfd < 0) {
		fprintf(stderr, "fdstore: open %s: %s\n", TWHEEL_DEVICE, strerror(-k->wfd));
		return -1;
	}
	ret = twheel_setup(k->wfd, k->cfg->tick_ns, 30 * NSEC_PER_SEC, CLOCK_MONOTONIC, 0);
	if (ret < 0) {
		fprintf(stderr, "fdstore: setup: %s\n", strerror(-ret));
		return -1;
	}
	ret = sd_notify_fds("FDSTORE=1\nFDNAME=" WHEEL_FD_NAME, &k->wfd, 1);
	if (ret < 0) {
		fprintf(stderr, "fdstore: FDSTORE: %s\n", strerror(-ret));
		return -1;
	}
	if (!ret)
		fprintf(stderr, "fdstore: no service manager ($NOTIFY_SOCKET): "
			"the wheel ends with this process\n");
	return k->cfg->populate ? populate(k) : 0;
}

/* Read every expiry waiting and append it to "expired", one write a read. */
static int read_expired(struct keeper *k)
{
	struct twheel_event ev[256];
	char buf[256 * 80];

	for (;;) {
		int n = twheel_read_events(k->wfd, ev, 256);
		uint64_t now = mono_now();
		size_t len = 0;

		if (n == -EAGAIN)
			return 0;
		if (n == -EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "fdstore: read: %s\n", strerror(-n));
			return -1;
		}
		for (int i = 0; i < n; i++)
			len += snprintf(buf + len, sizeof(buf) - len, "%llu %llu %llu %llu %d\n",
					(unsigned long long)ev[i].id,
					(unsigned long long)ev[i].deadline_ns,
					(unsigned long long)ev[i].expired_ns,
					(unsigned long long)now, getpid());
		if (write(k->expired_fd, buf, len) != (ssize_t)len) {
			perror("fdstore: expired");
			return -1;
		}
		k->read += n;
	}
}

static int open_state(struct keeper *k)
{
	const char *dir = k->cfg->state_dir;
	char first[4096];

	if (!dir) {
		/* systemd's StateDirectory=: a colon-separated list. */
		const char *env = getenv("STATE_DIRECTORY");

		if (!env) {
			fprintf(stderr, "fdstore: no --state and no $STATE_DIRECTORY\n");
			return -1;
		}
		snprintf(first, sizeof(first), "%.*s", (int)strcspn(env, ":"), env);
		dir = first;
	}
	k->dir = open(dir, O_DIRECTORY | O_CLOEXEC);
	if (k->dir < 0) {
		perror(dir);
		return -1;
	}
	k->expired_fd = openat(k->dir, "expired", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	k->log_fd = openat(k->dir, "log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (k->expired_fd < 0 || k->log_fd < 0) {
		perror("fdstore: state files");
		return -1;
	}
	return 0;
}

int fdstore_daemon(const struct daemon_cfg *cfg)
{
	struct keeper k = { .cfg = cfg };
	struct epoll_event ev = { .events = EPOLLIN };
	bool adopted;
	sigset_t mask;
	int sfd, ep;

	setvbuf(stdout, NULL, _IOLBF, 0);
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (sfd < 0 || ep < 0 || open_state(&k) || get_wheel(&k, &adopted))
		return 1;
	ev.data.fd = k.wfd;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, k.wfd, &ev))
		return 1;
	ev.data.fd = sfd;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev))
		return 1;
	record(&k, "start pid=%d mono_ns=%llu wheel=%lld adopted=%d live=%lld waiting=%lld\n",
	       getpid(), (unsigned long long)mono_now(), fdinfo_value(k.wfd, "wheel"), adopted,
	       fdinfo_value(k.wfd, "live"), fdinfo_value(k.wfd, "events_waiting"));
	sd_notify_fds("READY=1", NULL, 0);

	for (;;) {
		int n = epoll_wait(ep, &ev, 1, -1);

		if (n < 0 && errno != EINTR)
			return 1;
		if (n <= 0)
			continue;
		if (ev.data.fd == sfd)
			break;
		if (read_expired(&k))
			return 1;
	}
	sd_notify_fds("STOPPING=1", NULL, 0);
	record(&k, "stop pid=%d mono_ns=%llu read=%llu\n", getpid(),
	       (unsigned long long)mono_now(), k.read);
	if (cfg->linger_ns) {
		struct timespec ts = {
			.tv_sec = cfg->linger_ns / NSEC_PER_SEC,
			.tv_nsec = cfg->linger_ns % NSEC_PER_SEC,
		};

		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	return 0;
}
