// SPDX-License-Identifier: GPL-2.0
/*
 * opprof: one operation, many times, for an instruction profile of the
 * kernel path it takes (bench/device/insnprof.c, `make -C bench/device profile`). The
 * VM runs it twice, with PROF_N=0 and with PROF_N=N; the difference of
 * the two profiles, divided by N, is what one operation costs, per
 * function. Everything but the measured loop is the same in both runs.
 *
 * PROF_OP (from the kernel command line):
 *   null      an ioctl on /dev/twheel that fails with ENOTTY
 *   refresh   TWHEEL_IOC_OP REFRESH of a random live id
 *   batch     TWHEEL_IOC_BATCH of 256 such REFRESH ops (N counts ops)
 *   ids       TWHEEL_IOC_REFRESH of 256 random ids (N counts ids)
 *   touch     twheel_touch() of a random slot
 *   timerfd   timerfd_settime() of a random one of PROF_IDS timers
 * PROF_IDS: live ids (or timers), default 100000. PROF_SYMS=1 also
 * prints the kernel's text symbols, for insnprof.sh.
 */
#include <sys/timerfd.h>

#include "bench.h"

#define BATCH	256

static uint64_t rnd_state = 88172645463325252ULL;

static uint64_t rnd(void)
{
	return rnd_next(&rnd_state);
}

/* The ids' kernel text symbols, "ADDRESS TYPE NAME", for the profile. */
static void print_syms(bool all)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512];

	if (!f)
		die("/proc/kallsyms");
	while (fgets(line, sizeof(line), f)) {
		char *type = strchr(line, ' ');

		if (!type || (type[1] != 't' && type[1] != 'T'))
			continue;
		if (all || strstr(line, "[twheel]"))
			fputs(line, stdout);
	}
	fclose(f);
}

int main(void)
{
	const char *op = getenv("PROF_OP") ?: "refresh";
	long n = arg_or_env(0, NULL, "PROF_N", 0);
	long ids = arg_or_env(0, NULL, "PROF_IDS", 100000);
	static struct twheel_op ops[BATCH];
	static uint64_t idv[BATCH];
	struct twheel_setup_args sa = {
		.tick_ns = NSEC_PER_MSEC, .default_timeout_ns = 30 * NSEC_PER_SEC,
		.clockid = CLOCK_MONOTONIC, .flags = TWHEEL_SETUPF_TOUCH,
		.touch_slots = ids,
	};
	struct twheel_touch t;
	int fd = twheel_open(O_CLOEXEC), *tfds = NULL;
	long i, j;

	if (fd < 0 || twheel_setup_params(fd, &sa) ||
	    twheel_touch_map(fd, ids, CLOCK_MONOTONIC, &t))
		die("touch wheel");
	memset(t.slots, 0, t.map_len);
	for (i = 0; i < ids; i += BATCH) {
		long k = ids - i < BATCH ? ids - i : BATCH;

		for (j = 0; j < k; j++) {
			twheel_prep_add(&ops[j], i + j, TWHEEL_TIMEOUT_DEFAULT);
			twheel_prep_bind(&ops[j], i + j);
		}
		if (twheel_batch(fd, ops, k) != k)
			die("add");
	}
	if (!strcmp(op, "timerfd")) {
		struct itimerspec its = { .it_value = { .tv_sec = 30 } };

		tfds = calloc(ids, sizeof(*tfds));
		for (i = 0; tfds && i < ids; i++) {
			tfds[i] = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
			if (tfds[i] < 0 || timerfd_settime(tfds[i], 0, &its, NULL))
				die("timerfd");
		}
	}

	if (!strcmp(op, "null")) {
		for (i = 0; i < n; i++)
			ioctl(fd, _IO(TWHEEL_IOC_MAGIC, 0x7f), 0);
	} else if (!strcmp(op, "refresh")) {
		for (i = 0; i < n; i++)
			if (twheel_refresh(fd, rnd() % ids, TWHEEL_TIMEOUT_DEFAULT, 0))
				die("refresh");
	} else if (!strcmp(op, "batch")) {
		for (i = 0; i < n; i += BATCH) {
			for (j = 0; j < BATCH; j++)
				twheel_prep_refresh(&ops[j], rnd() % ids, TWHEEL_TIMEOUT_DEFAULT, 0);
			if (twheel_batch(fd, ops, BATCH) != BATCH)
				die("batch");
		}
	} else if (!strcmp(op, "ids")) {
		for (i = 0; i < n; i += BATCH) {
			for (j = 0; j < BATCH; j++)
				idv[j] = rnd() % ids;
			if (twheel_refresh_ids(fd, idv, BATCH, TWHEEL_TIMEOUT_DEFAULT, 0,
					       NULL, NULL) != BATCH)
				die("refresh_ids");
		}
	} else if (!strcmp(op, "touch")) {
		for (i = 0; i < n; i++)
			twheel_touch(&t, rnd() % ids);
	} else if (!strcmp(op, "timerfd")) {
		for (i = 0; i < n; i++) {
			struct itimerspec its = { .it_value = { .tv_sec = 10 + rnd() % 30 } };

			timerfd_settime(tfds[rnd() % ids], 0, &its, NULL);
		}
	} else {
		fprintf(stderr, "opprof: unknown PROF_OP %s\n", op);
		return 2;
	}
	printf("opprof: op=%s n=%ld ids=%ld\n", op, n, ids);
	print_syms(arg_or_env(0, NULL, "PROF_SYMS", 0));
	return 0;
}
