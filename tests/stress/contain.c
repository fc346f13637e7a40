// SPDX-License-Identifier: GPL-2.0
/*
 * contain: attacks on the limits and the freezer that need root to stage.
 *
 *  - Charges never pass a limit, even for a moment. As root, lower the
 *    module's max_user_entries to LIMIT; then, as an unprivileged user,
 *    hold LIMIT - 100 ids in one wheel while one thread sets up, again
 *    and again, wheels whose touch table would charge far more than
 *    the room left (ENOSPC each time) and another adds and cancels one
 *    id at a time, which always fits. Not one of those adds may fail.
 *    (A charge that added before it compared would make the fitting add
 *    fail whenever it fell inside a failing setup's moment.)
 *  - A frozen group never holds up a close. A child in a cgroup v1
 *    freezer group sets up a wheel (the module once put the wheel's
 *    worker thread in that group too), passes the fd to the parent and
 *    closes its own; the group is frozen; the parent's close, the last
 *    one, which frees the wheel, must return at once, not when the group
 *    thaws.
 *
 *   contain		(run as root)
 *
 * The module's parameters and the device's mode are restored after, also
 * on SIGTERM. Prints TAP and "contain: charges_held=yes|no
 * frozen_close=yes|no|skip".
 */
#include <pthread.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "twheel_test.h"
#include "kselftest.h"

#define UID_CHARGER	4301
#define LIMIT		20000
#define HELD		(LIMIT - 100)
#define BIG_SLOTS	(1U << 20)	/* a table charging 128K entries */
#define RACE_NS		(3 * NSEC_PER_SEC)
#define HOUR_NS		(3600 * NSEC_PER_SEC)
#define FREEZER		"/tmp/contain-freezer"
#define FGROUP		FREEZER "/g"

struct race {
	volatile int stop;
	long setups, setups_refused, adds, adds_refused, other;
};

static void *big_setups(void *arg)
{
	struct twheel_setup_args sa = {
		.tick_ns = 10 * NSEC_PER_MSEC, .default_timeout_ns = NSEC_PER_SEC,
		.clockid = CLOCK_MONOTONIC, .flags = TWHEEL_SETUPF_TOUCH_USER,
		.touch_slots = BIG_SLOTS,
	};
	struct race *r = arg;

	while (!r->stop) {
		int fd = dev_open(O_CLOEXEC), ret;

		if (fd < 0) {
			r->other++;
			continue;
		}
		ret = dev_setup_params(fd, &sa);
		r->setups++;
		if (ret == -ENOSPC)
			r->setups_refused++;
		else
			r->other++;
		close(fd);
	}
	return NULL;
}

/* In a child as UID_CHARGER: the race; exits 0 if no fitting add failed. */
static int charger(void)
{
	struct race r = {};
	pthread_t t;
	uint64_t until;
	int fd, i, ret;

	if (setresgid(UID_CHARGER, UID_CHARGER, UID_CHARGER) ||
	    setresuid(UID_CHARGER, UID_CHARGER, UID_CHARGER))
		return 2;
	fd = wheel_new(O_CLOEXEC, 10 * NSEC_PER_MSEC, HOUR_NS, 0);
	if (fd < 0)
		return 2;
	for (i = 0; i < HELD; i++)
		if (dev_add(fd, i, HOUR_NS))
			return 2;
	if (pthread_create(&t, NULL, big_setups, &r))
		return 2;
	until = mono_ns() + RACE_NS;
	while (mono_ns() < until) {
		ret = dev_add(fd, HELD, HOUR_NS);
		r.adds++;
		if (ret == -ENOSPC)
			r.adds_refused++;
		else if (ret || dev_cancel(fd, HELD))
			r.other++;
	}
	r.stop = 1;
	pthread_join(t, NULL);
	ksft_print_msg("%ld fitting adds, %ld refused; %ld setups past the limit, %ld refused; %ld other results\n",
		       r.adds, r.adds_refused, r.setups, r.setups_refused, r.other);
	return r.adds_refused || r.other || r.setups != r.setups_refused || !r.setups ? 1 : 0;
}

static int test_charges(void)
{
	pid_t pid;
	int status, held;

	if (users_setup(LIMIT))
		ksft_exit_fail_msg("cannot set max_user_entries or open %s to all\n", TWHEEL_DEVICE);
	pid = fork();
	if (!pid)
		_exit(charger());
	waitpid(pid, &status, 0);
	users_setup_restore();
	held = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	ksft_test_result(held,
			 "a charge that fits is never refused while larger ones fail beside it (exit %d)\n",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return held;
}

/* The v1 freezer's state of FGROUP, into @buf. */
static void freezer_state(char *buf, size_t len)
{
	if (read_file(FGROUP "/freezer.state", buf, len) <= 0)
		snprintf(buf, len, "?");
	buf[strcspn(buf, "\n")] = 0;
}

/* Returns 1 if the close was prompt, 0 if not, -1 to skip. */
static int test_frozen_close(void)
{
	char pidbuf[32], state[32];
	int sv[2], fd = -1, ret = -1;
	uint64_t t0, took, until;
	pid_t pid, closer = -1, done = 0;

	mkdir(FREEZER, 0755);
	if (mount("contain", FREEZER, "cgroup", 0, "freezer")) {
		ksft_test_result_skip("the last close of a wheel set up in a frozen group returns: no cgroup v1 freezer to mount (%s)\n",
				      strerror(errno));
		rmdir(FREEZER);
		return -1;
	}
	if (mkdir(FGROUP, 0755) || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		ksft_exit_fail_msg("freezer group: %s\n", strerror(errno));
	pid = fork();
	if (!pid) {
		char c;
		int w;

		close(sv[0]);
		/* Wait to be moved in, then set up there. */
		if (read(sv[1], &c, 1) != 1)
			_exit(1);
		w = wheel_new(O_CLOEXEC, 10 * NSEC_PER_MSEC, HOUR_NS, 0);
		if (w < 0 || dev_add(w, 1, HOUR_NS) || send_fd(sv[1], w))
			_exit(1);
		close(w);
		for (;;)
			pause();
	}
	close(sv[1]);
	snprintf(pidbuf, sizeof(pidbuf), "%d", pid);
	if (write_file(FGROUP "/cgroup.procs", pidbuf) || write(sv[0], "g", 1) != 1)
		ksft_exit_fail_msg("moving the child into the freezer group failed\n");
	fd = recv_fd(sv[0]);
	if (fd < 0)
		ksft_exit_fail_msg("the child's wheel never came\n");
	write_file(FGROUP "/freezer.state", "FROZEN");
	until = mono_ns() + 10 * NSEC_PER_SEC;
	do {
		freezer_state(state, sizeof(state));
		if (!strcmp(state, "FROZEN"))
			break;
		sleep_ns(10 * NSEC_PER_MSEC);
	} while (mono_ns() < until);
	if (strcmp(state, "FROZEN")) {
		ksft_test_result_fail("the group never froze (%s)\n", state);
		ret = 0;
		close(fd);
		goto thaw;
	}
	/*
	 * The last close, from outside the group, frees the wheel: in a
	 * child, so that a close stuck until the thaw fails the test rather
	 * than hanging it (a task in D state ignores signals).
	 */
	t0 = mono_ns();
	closer = fork();
	if (!closer) {
		close(fd);
		_exit(0);
	}
	close(fd);
	while (!(done = waitpid(closer, NULL, WNOHANG)) && mono_ns() < t0 + 5 * NSEC_PER_SEC)
		sleep_ns(NSEC_PER_MSEC);
	took = mono_ns() - t0;
	ret = done == closer;
	ksft_test_result(ret, "the last close of a wheel set up in a frozen group returns (%llu ms%s)\n",
			 (unsigned long long)(took / NSEC_PER_MSEC), ret ? "" : ", still closing");
thaw:
	write_file(FGROUP "/freezer.state", "THAWED");
	if (closer > 0 && !done)
		waitpid(closer, NULL, 0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(sv[0]);
	for (until = mono_ns() + 5 * NSEC_PER_SEC; rmdir(FGROUP) && mono_ns() < until; )
		sleep_ns(10 * NSEC_PER_MSEC);
	umount(FREEZER);
	rmdir(FREEZER);
	return ret;
}

int main(void)
{
	int charges, frozen;

	ksft_print_header();
	ksft_set_plan(2);
	if (access(TWHEEL_DEVICE, R_OK | W_OK))
		ksft_exit_skip("%s: %s\n", TWHEEL_DEVICE, strerror(errno));
	charges = test_charges();
	frozen = test_frozen_close();
	printf("contain: charges_held=%s frozen_close=%s\n", charges ? "yes" : "no",
	       frozen < 0 ? "skip" : frozen ? "yes" : "no");
	ksft_finished();
}
