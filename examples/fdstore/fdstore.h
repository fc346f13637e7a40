/* SPDX-License-Identifier: MIT */
/*
 * fdstore: a daemon whose wheel outlives its process in systemd's file
 * descriptor store, so that `systemctl restart` keeps its ids and the
 * expiries that wait. daemon.c is the daemon (read this); sd.c the two
 * halves of systemd's protocol it needs; check.c the judge of a restart,
 * and a small stand-in for the service manager to run it without
 * systemd; main.c the subcommands.
 */
#ifndef FDSTORE_H
#define FDSTORE_H

#include "../example.h"

#include <stdint.h>


/* The name the wheel's fd has in the store (FDNAME=, LISTEN_FDNAMES). */
#define WHEEL_FD_NAME	"wheel"

struct daemon_cfg {
	const char *state_dir;	/* its records; default $STATE_DIRECTORY */
	uint64_t tick_ns;
	unsigned int populate;	/* on a new wheel, add this many ids (a test load) */
	uint64_t window_ns;	/* 40 % of them due within this, the rest in 1-48 h */
	uint64_t linger_ns;	/* on SIGTERM, stop reading, then take this long to exit */
	uint64_t seed;
};

int fdstore_daemon(const struct daemon_cfg *cfg);

/*
 * Judge a restart from the records in @state_dir and a dump of the wheel
 * @wfd (the daemon's, dup'ed): every id still live or expired exactly
 * once. Waits first until every id due within the test window expired
 * and was read. 0 if nothing was lost, doubled or early.
 */
int fdstore_judge(const char *state_dir, int wfd);

/* The wheel fd of process @pid, taken with pidfd_getfd(2); -1 if none. */
int wheel_of_pid(int pid);

/* Restart under the stand-in service manager, then judge: the VM check. */
int fdstore_selfcheck(const char *self, const struct daemon_cfg *cfg,
		      uint64_t restart_after_ns);

/* sd.c: sd_pid_notify_with_fds() and sd_listen_fds_with_names(), in short. */
int sd_notify_fds(const char *state, const int *fds, unsigned int nr_fds);
int sd_stored_fd(const char *name);

uint64_t mono_now(void);

#endif /* FDSTORE_H */
