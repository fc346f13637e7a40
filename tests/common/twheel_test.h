/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test-support layer of tests/ (the stress programs, the library's
 * and the tools' tests, the benchmarks): the selftests' own helpers
 * (selftests/twheel_util.h: clock and sleep, the random generator, file
 * and module-parameter helpers, the device's calls, wheels, ops filled
 * with junk, draining events, the fdinfo parser, fd passing, joining
 * with a deadline), libtwheel, which these programs use as an
 * application would, and what only they need (a run's bound from argv
 * or the environment, raising and restoring the entry limits, lowering
 * them for other users and filling them with adds).
 *
 * Header-only: every program stays one .c file plus this header, linked
 * statically (the test VM has no shared libraries) with libtwheel.a.
 * Reporting is kselftest's (kselftest.h or kselftest_harness.h,
 * included by the programs that report TAP); nothing here prints. Needs
 * _GNU_SOURCE (tests/common/test.mk sets it).
 */
#ifndef TWHEEL_TEST_H
#define TWHEEL_TEST_H

#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "../../selftests/twheel_util.h"
#include "twheel.h"

/*
 * A run's bound: argv[1] if given, else the environment variable @env
 * (inside the VM, set from the kernel command line), else @def.
 */
static inline uint64_t arg_or_env(int argc, char **argv, const char *env,
				  uint64_t def)
{
	const char *s = argc > 1 ? argv[1] : getenv(env);

	return s && *s ? strtoull(s, NULL, 0) : def;
}

/*
 * Raise the module's user and total entry limits to at least @want, for a
 * program that adds more ids than a small VM's defaults allow; 0, or -1
 * if they cannot be read or set. entry_limits_restore() puts back what
 * was found (call it at exit and from a SIGTERM handler); it does nothing
 * if nothing was raised. One program, one set of saved limits.
 */
struct entry_limits {
	unsigned long long user, total;
	int raised;
};

static inline struct entry_limits *entry_limits_saved(void)
{
	static struct entry_limits saved;

	return &saved;
}

static inline void entry_limits_restore(void)
{
	struct entry_limits *l = entry_limits_saved();

	if (l->raised) {
		module_param_set("max_user_entries", l->user);
		module_param_set("max_entries_total", l->total);
		l->raised = 0;
	}
}

static inline int entry_limits_raise(unsigned long long want)
{
	struct entry_limits *l = entry_limits_saved();

	l->user = module_param("max_user_entries", 0);
	l->total = module_param("max_entries_total", 0);
	if (!l->user || !l->total)
		return -1;
	l->raised = 1;
	if (l->user < want && module_param_set("max_user_entries", want))
		return -1;
	if (l->total < want && module_param_set("max_entries_total", want))
		return -1;
	return 0;
}

/*
 * For a program whose other users fill a lowered max_user_entries: set
 * it to @limit and open the device to every user (mode 0666), saving
 * both; users_setup_restore() puts back what was found, and runs at exit
 * and on SIGTERM and SIGINT (handlers installed here). 0, or -errno
 * (-ENOENT: no such parameter).
 */
struct users_setup {
	unsigned long long user;
	mode_t mode;
	int saved, mode_changed, hooked;
};

static inline struct users_setup *users_setup_saved(void)
{
	static struct users_setup saved;

	return &saved;
}

static inline void users_setup_restore(void)
{
	struct users_setup *s = users_setup_saved();

	if (s->saved)
		module_param_set("max_user_entries", s->user);
	if (s->mode_changed)
		chmod(TWHEEL_DEVICE, s->mode);
	s->saved = s->mode_changed = 0;
}

static inline void users_setup_on_signal(int sig)
{
	users_setup_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

static inline int users_setup(unsigned long long limit)
{
	struct users_setup *s = users_setup_saved();
	struct stat st;

	if (stat(TWHEEL_DEVICE, &st))
		return -errno;
	if (!s->hooked) {
		signal(SIGTERM, users_setup_on_signal);
		signal(SIGINT, users_setup_on_signal);
		atexit(users_setup_restore);
		s->hooked = 1;
	}
	if (!s->saved) {
		s->user = module_param("max_user_entries", 0);
		if (!s->user)
			return -ENOENT;
		s->saved = 1;
	}
	if ((st.st_mode & 0666) != 0666 && !s->mode_changed) {
		s->mode = st.st_mode & 07777;
		s->mode_changed = 1;
		if (chmod(TWHEEL_DEVICE, 0666))
			return -errno;
	}
	return module_param_set("max_user_entries", limit);
}

/*
 * ADD @count new ids, *@next_id on (advanced past them), each @timeout_ns
 * from now, in one batch through @ops (room for @count): how many went
 * in, and in *@err the first failure (the batch's, else the first op's
 * result), 0 if none. For the programs that fill a limit and count.
 */
static inline long long fill_ids(int fd, struct twheel_op *ops, uint64_t count,
				uint64_t *next_id, uint64_t timeout_ns, int *err)
{
	long long n, i, added = 0;

	*err = 0;
	for (i = 0; i < (long long)count; i++)
		op_init(&ops[i], TWHEEL_OP_ADD, (*next_id)++, TWHEEL_OPF_TIMEOUT, timeout_ns);
	n = twheel_batch(fd, ops, count);
	if (n < 0) {
		*err = n;
		return 0;
	}
	for (i = 0; i < n; i++) {
		if (ops[i].result && !*err)
			*err = ops[i].result;
		added += !ops[i].result;
	}
	return added;
}

#endif /* TWHEEL_TEST_H */
