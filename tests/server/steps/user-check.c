// SPDX-License-Identifier: GPL-2.0
/*
 * The server test's user check, built on the server by a user with
 * `pkg-config --cflags --libs libtwheel` against the installed library.
 *
 *   user-check       five connections on one wheel (tick 10 ms, default
 *                    timeout 200 ms): one silent, one that sends a packet
 *                    (refresh), one that logs out (cancel), one with its
 *                    own 100 ms timeout, one refreshed with ADD_IF_ABSENT.
 *                    Every id but the cancelled one must expire exactly
 *                    once, in deadline order, never early; a refresh after
 *                    expiry must find nothing. Prints one "user-check:" line;
 *                    exit 0 if all held.
 *   user-check open  only open /dev/twheel; prints "open: 0" or
 *                    "open: -ERRNO (message)"; exit 0 if it opened, 3 on
 *                    EACCES, 1 otherwise.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <twheel.h>

#define MS	1000000ULL

static int open_only(void)
{
	int fd = twheel_open(O_CLOEXEC);

	if (fd >= 0) {
		printf("open: 0\n");
		return 0;
	}
	printf("open: %d (%s)\n", fd, strerror(-fd));
	return fd == -EACCES ? 3 : 1;
}

int main(int argc, char **argv)
{
	/* id: its timeout from its last add/refresh; cancelled ids never expire */
	enum { SILENT = 1, TALKS = 2, LOGS_OUT = 3, OWN_TIMEOUT = 4, UPSERT = 5, NIDS = 5 };
	uint64_t earliest[NIDS + 1] = { 0 };	/* deadline may not be before this */
	int seen[NIDS + 1] = { 0 };
	struct twheel_event ev[16];
	uint64_t t0, t, prev_deadline = 0, late_max = 0;
	int fd, ret, expired = 0, early = 0, order = 1, bad = 0, enoent = 0;

	if (argc > 1 && !strcmp(argv[1], "open"))
		return open_only();

	fd = twheel_open(O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		printf("user-check: open failed: %s\n", strerror(-fd));
		return 1;
	}
	ret = twheel_setup(fd, 10 * MS, 200 * MS, CLOCK_MONOTONIC, 0);
	if (ret) {
		printf("user-check: setup failed: %s\n", strerror(-ret));
		return 1;
	}
	t0 = twheel_now(CLOCK_MONOTONIC);
	bad |= twheel_add(fd, SILENT, TWHEEL_TIMEOUT_DEFAULT);
	bad |= twheel_add(fd, TALKS, TWHEEL_TIMEOUT_DEFAULT);
	bad |= twheel_add(fd, LOGS_OUT, TWHEEL_TIMEOUT_DEFAULT);
	bad |= twheel_add(fd, OWN_TIMEOUT, 100 * MS);
	bad |= twheel_refresh(fd, UPSERT, TWHEEL_TIMEOUT_DEFAULT, TWHEEL_OPF_ADD_IF_ABSENT);
	earliest[SILENT] = earliest[LOGS_OUT] = earliest[UPSERT] = t0 + 200 * MS;
	earliest[OWN_TIMEOUT] = t0 + 100 * MS;
	bad |= twheel_add(fd, SILENT, TWHEEL_TIMEOUT_DEFAULT) != -EEXIST;

	nanosleep(&(struct timespec){ .tv_nsec = 50 * MS }, NULL);
	t = twheel_now(CLOCK_MONOTONIC);
	bad |= twheel_refresh(fd, TALKS, TWHEEL_TIMEOUT_DEFAULT, 0);	/* a packet */
	earliest[TALKS] = t + 200 * MS;
	bad |= twheel_cancel(fd, LOGS_OUT);				/* a logout */

	while (expired < 4) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		if (poll(&pfd, 1, 5000) != 1)
			break;
		ret = twheel_read_events(fd, ev, 16);
		if (ret == -EAGAIN)
			continue;
		if (ret < 0) {
			bad = 1;
			break;
		}
		for (int i = 0; i < ret; i++) {
			uint64_t id = ev[i].id;

			if (id < 1 || id > NIDS || id == LOGS_OUT || seen[id]++) {
				bad = 1;
				continue;
			}
			expired++;
			early += ev[i].deadline_ns < earliest[id] || ev[i].expired_ns < ev[i].deadline_ns;
			order &= ev[i].deadline_ns >= prev_deadline;
			prev_deadline = ev[i].deadline_ns;
			if (ev[i].expired_ns - ev[i].deadline_ns > late_max)
				late_max = ev[i].expired_ns - ev[i].deadline_ns;
		}
	}
	/* An id whose deadline passed is gone: refreshing it finds nothing. */
	enoent = twheel_refresh(fd, SILENT, TWHEEL_TIMEOUT_DEFAULT, 0) == -ENOENT;
	/* Nothing more: the cancelled id never comes. */
	nanosleep(&(struct timespec){ .tv_nsec = 300 * MS }, NULL);
	bad |= twheel_read_events(fd, ev, 16) != -EAGAIN;

	printf("user-check: ids=%d expired=%d cancelled=1 early=%d order=%s late_max_ms=%llu "
	       "refresh_after_expiry=%s errors=%d\n", NIDS, expired, early, order ? "ok" : "WRONG",
	       (unsigned long long)(late_max / MS), enoent ? "ENOENT" : "WRONG", bad != 0);
	return !(expired == 4 && !early && order && enoent && !bad);
}
