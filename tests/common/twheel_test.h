/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test-support layer of tests/ (the stress programs, the library's
 * and the tools' tests, the benchmarks): the selftests' own helpers
 * (selftests/twheel_util.h: clock and sleep, the random generator, file
 * and module-parameter helpers, the device's calls, wheels, ops filled
 * with junk, draining events, the fdinfo parser, fd passing, joining
 * with a deadline), libtwheel, which these programs use as an
 * application would, and what only they need (a run's bound from argv
 * or the environment, raising and restoring the entry limits).
 *
 * Header-only: every program stays one .c file plus this header, linked
 * statically (the test VM has no shared libraries) with libtwheel.a.
 * Reporting is kselftest's (kselftest.h or kselftest_harness.h,
 * included by the programs that report TAP); nothing here prints. Needs
 * _GNU_SOURCE (tests/common/test.mk sets it).
 */
#ifndef TWHEEL_TEST_H
#define TWHEEL_TEST_H

#include <stdint.h>
#include <stdlib.h>

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

#endif /* TWHEEL_TEST_H */
