// SPDX-License-Identifier: GPL-2.0
/*
 * lifetimes: the life and death of wheels and of the module under load.
 *
 * rmmod is refused while a wheel is open and works after the last close
 * (then the module is loaded back from /twheel.ko, where vm/run.sh puts
 * it); close() races a thread in the middle of a 64k-op batch on the
 * same fd; wheels are closed with their timer armed, or fired with
 * nobody having looked since, their expiry due and not done (the expiry
 * is done by whoever polls, reads or calls the wheel; here nobody does).
 * Kernel-side damage shows in the kernel log, which the harness scans.
 * (The behaviour checks around lifetimes are selftests: closing under a
 * blocked read, poll or epoll_wait, SCM_RIGHTS, fork and O_CLOEXEC in
 * share_test; a signal ending a blocked read in read_test, and a batch
 * in batch_test.)
 *
 *   lifetimes			(run as root, inside the test VM)
 */
#include <sys/syscall.h>

#include "twheel_test.h"
#include "kselftest.h"

#define KO_PATH		"/twheel.ko"
#define BIG_BATCH	(64 * 1024)
#define NR_TESTS	5

static int wheel(void)
{
	int fd = wheel_new(O_CLOEXEC, NSEC_PER_MSEC, 100 * NSEC_PER_MSEC, 0);

	if (fd < 0)
		ksft_exit_fail_msg("open %s: %s\n", TWHEEL_DEVICE, strerror(-fd));
	return fd;
}

/* ---- module unload ---- */

static int delete_module(const char *name, unsigned int flags)
{
	return syscall(SYS_delete_module, name, flags) ? -errno : 0;
}

static int wait_for_device(int present)
{
	int i;

	for (i = 0; i < 300; i++) {
		if ((access(TWHEEL_DEVICE, F_OK) == 0) == present)
			return 1;
		sleep_ns(10 * NSEC_PER_MSEC);
	}
	return 0;
}

static void test_rmmod(void)
{
	int fd, ret, ko;

	ko = open(KO_PATH, O_RDONLY | O_CLOEXEC);
	if (ko < 0 || access("/sys/module/twheel", F_OK)) {
		ksft_test_result_skip("rmmod refused while a wheel is open: no " KO_PATH " to load back\n");
		ksft_test_result_skip("rmmod works after the last close: no " KO_PATH "\n");
		ksft_test_result_skip("module loads back and works: no " KO_PATH "\n");
		if (ko >= 0)
			close(ko);
		return;
	}
	fd = wheel();
	twheel_add(fd, 1, 3600 * NSEC_PER_SEC);
	ret = delete_module("twheel", O_NONBLOCK);
	ksft_test_result(ret == -EWOULDBLOCK || ret == -EBUSY,
			 "rmmod refused while a wheel is open (%s)\n",
			 ret ? strerror(-ret) : "it unloaded!");
	if (!ret) {
		/* Unloaded under an open fd: do not touch it again. */
		ksft_test_result_fail("rmmod works after the last close (module already gone)\n");
	} else {
		close(fd);
		ret = delete_module("twheel", O_NONBLOCK);
		ksft_test_result(!ret && wait_for_device(0),
				 "rmmod works after the last close (%s)\n",
				 ret ? strerror(-ret) : "ok");
	}
	ret = syscall(SYS_finit_module, ko, "", 0) ? -errno : 0;
	close(ko);
	fd = ret == 0 && wait_for_device(1) ?
	     wheel_new(O_CLOEXEC, NSEC_PER_MSEC, NSEC_PER_MSEC, 0) : -1;
	ksft_test_result(fd >= 0 && twheel_add(fd, 7, TWHEEL_TIMEOUT_DEFAULT) == 0,
			 "module loads back and works (finit_module: %s)\n",
			 ret ? strerror(-ret) : "ok");
	if (fd >= 0)
		close(fd);
}

/* ---- close racing batches and expiry ---- */

struct batcher {
	int fd;
	struct twheel_op *ops;
	long ret;
};

static void *batch_main(void *arg)
{
	struct batcher *bt = arg;

	bt->ret = twheel_batch(bt->fd, bt->ops, BIG_BATCH);
	return NULL;
}

static void test_batches(void)
{
	struct batcher bt;
	long long held;
	uint64_t until;
	pthread_t th;
	uint32_t i;
	int ended;

	/* close() while another thread is deep in a batch on the fd. */
	bt.fd = wheel();
	bt.ops = malloc(BIG_BATCH * sizeof(*bt.ops));
	if (!bt.ops)
		ksft_exit_fail_msg("malloc: %s\n", strerror(errno));
	for (i = 0; i < BIG_BATCH; i++)
		op_init(&bt.ops[i], TWHEEL_OP_ADD, 1000000 + i, TWHEEL_OPF_TIMEOUT,
			(i % 50) * NSEC_PER_MSEC);
	pthread_create(&th, NULL, batch_main, &bt);
	/*
	 * Close once the batch is inside the kernel, its first ops applied:
	 * closed before the ioctl starts, the batch finds no fd (EBADF) and
	 * races nothing.
	 */
	until = mono_ns() + 10 * NSEC_PER_SEC;
	while ((held = fdinfo_get(bt.fd, "live") + fdinfo_get(bt.fd, "events_waiting")) <= 0 &&
	       mono_ns() < until)
		sleep_ns(NSEC_PER_MSEC / 10);
	close(bt.fd);
	ksft_print_msg("closed with %lld of %d ops applied\n", held, BIG_BATCH);
	ended = join_within(th, 300 * NSEC_PER_SEC);
	ksft_test_result(ended && bt.ret == BIG_BATCH,
			 "close racing a %d-op batch: the batch completes (%s, ret %ld)\n",
			 BIG_BATCH, ended ? "ended" : "still running after 300 s", bt.ret);
	if (!ended)
		return;
	free(bt.ops);

	/* Close with the timer armed, or fired and the expiry due, never done. */
	for (i = 0; i < 20; i++) {
		int fd = wheel(), j;
		struct twheel_op ops[256];

		for (j = 0; j < 256; j++)
			op_init(&ops[j], TWHEEL_OP_ADD, j, TWHEEL_OPF_TIMEOUT,
				(j % 3) * NSEC_PER_MSEC);
		twheel_batch(fd, ops, 256);
		sleep_ns((i % 4) * NSEC_PER_MSEC);
		close(fd);
	}
	ksft_test_result_pass("close with the timer armed or the expiry due, 20 times\n");
}

int main(void)
{
	ksft_print_header();
	if (access(TWHEEL_DEVICE, F_OK))
		ksft_exit_skip("no " TWHEEL_DEVICE "\n");
	ksft_set_plan(NR_TESTS);
	test_rmmod();
	test_batches();
	/* A test that hung returned early: its followers count as failed. */
	while (ksft_test_num() < NR_TESTS)
		ksft_test_result_fail("not run: an earlier test hung\n");
	ksft_finished();
}
