// SPDX-License-Identifier: MIT
/*
 * fdstore: keep a twheel wheel across restarts in systemd's file
 * descriptor store.
 *
 *   fdstore daemon [--state DIR] [-T tick_ms] [--populate N]
 *		[--window seconds] [--linger ms] [-r seed]
 *	the daemon (daemon.c), as twheel-fdstore-example.service runs it;
 *	DIR defaults to $STATE_DIRECTORY (StateDirectory= of the unit).
 *   fdstore check --state DIR --pid PID
 *	judge a restart of the running daemon PID (check.c): its records,
 *	and a dump of its wheel taken with pidfd_getfd(2) (root).
 *   fdstore [selfcheck] [--populate N] [--window seconds]
 *		[--restart-after seconds] [--linger ms] [-T tick_ms] [-r seed]
 *	start the daemon under a stand-in service manager, restart it, and
 *	judge: the check `make check` runs in a VM without systemd.
 *
 * Last line of check and selfcheck, for scripts:
 *   restart: ids=N kept=K expired_once=E lost=L
 * after one TAP line ("ok 1" or "not ok 1", in a "1..1" plan) for make
 * check. Exit status 0 only if every id is still live with its deadline
 * or expired and read exactly once, none early, on the one wheel.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdstore.h"

static void usage(void)
{
	fprintf(stderr,
		"usage: fdstore daemon [--state DIR] [-T tick_ms] [--populate N]\n"
		"                      [--window seconds] [--linger ms] [-r seed]\n"
		"       fdstore check --state DIR --pid PID\n"
		"       fdstore [selfcheck] [--populate N] [--window seconds]\n"
		"                      [--restart-after seconds] [--linger ms] [-T tick_ms] [-r seed]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "state", required_argument, NULL, 's' },
		{ "populate", required_argument, NULL, 'p' },
		{ "window", required_argument, NULL, 'w' },
		{ "linger", required_argument, NULL, 'l' },
		{ "restart-after", required_argument, NULL, 'a' },
		{ "pid", required_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	struct daemon_cfg c = {
		.tick_ns = 10 * NSEC_PER_MSEC, .window_ns = 30 * NSEC_PER_SEC,
		.seed = 0xfd5,
	};
	const char *cmd = argc > 1 && argv[1][0] != '-' ? argv[1] : "selfcheck";
	uint64_t restart_after_ns = 8 * NSEC_PER_SEC;
	int opt, pid = 0, wfd;

	if (strcmp(cmd, "daemon") && strcmp(cmd, "check") && strcmp(cmd, "selfcheck"))
		usage();
	if (argc > 1 && argv[1][0] != '-') {
		argc--;
		argv++;
	}
	if (!strcmp(cmd, "selfcheck")) {
		c.populate = 100000;
		c.linger_ns = 2000 * NSEC_PER_MSEC;
	}
	while ((opt = getopt_long(argc, argv, "T:r:", longopts, NULL)) != -1) {
		switch (opt) {
		case 's': c.state_dir = optarg; break;
		case 'p': c.populate = strtoul(optarg, NULL, 0); break;
		case 'w': c.window_ns = strtoull(optarg, NULL, 0) * NSEC_PER_SEC; break;
		case 'l': c.linger_ns = strtoull(optarg, NULL, 0) * NSEC_PER_MSEC; break;
		case 'a': restart_after_ns = strtoull(optarg, NULL, 0) * NSEC_PER_SEC; break;
		case 'P': pid = atoi(optarg); break;
		case 'T': c.tick_ns = strtoull(optarg, NULL, 0) * NSEC_PER_MSEC; break;
		case 'r': c.seed = strtoull(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (optind != argc || c.window_ns <= 3 * NSEC_PER_SEC || !c.tick_ns)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(cmd, "daemon"))
		return fdstore_daemon(&c) ? 1 : 0;
	printf("TAP version 13\n1..1\n");
	if (!strcmp(cmd, "check")) {
		if (!c.state_dir || pid <= 0)
			usage();
		wfd = wheel_of_pid(pid);
		return wfd < 0 ? 1 : fdstore_judge(c.state_dir, wfd);
	}
	if (c.state_dir || pid || !c.populate)
		usage();
	return fdstore_selfcheck("/proc/self/exe", &c, restart_after_ns);
}
