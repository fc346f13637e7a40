// SPDX-License-Identifier: MIT
/*
 * orders: unpaid orders cancelled after a timeout, SQLite as the record
 * of truth, twheel for the deadlines, surviving kill -9.
 *
 *   orders daemon --db PATH --sock PATH [-t timeout_ms] [-T tick_ms]
 *	the service (daemon.c); runs until SIGTERM.
 *   orders drive --db PATH --sock PATH (--spawn PROG | --kill-cmd CMD)
 *	  [-n orders] [-t timeout_ms] [-T tick_ms] [-d seconds]
 *	  [-k kill_at_s] [--down seconds] [-r seed]
 *	create and pay orders against it, SIGKILL it at kill_at_s (0: never),
 *	then check the database (driver.c). --spawn PROG: start the service
 *	as PROG daemon ..., restart it --down seconds after the kill, stop
 *	it at the end; --kill-cmd: a supervisor runs it (systemd), the
 *	command kills it (systemctl kill --signal=SIGKILL UNIT).
 *   orders [check] [the options of drive but --db, --sock, --spawn]
 *	drive with --spawn of this very program, database and socket in
 *	/tmp/orders-check/: the check `make check` runs in a VM.
 *
 * Last line of drive and check, for scripts:
 *   orders: total=N paid=P cancelled=C early=0 double=0 lost=0
 * after one TAP line ("ok 1" or "not ok 1", in a "1..1" plan) for make
 * check. Exit status 0 only if every order ended exactly once, in time.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "orders.h"

#define CHECK_DIR	"/tmp/orders-check"

static void usage(void)
{
	fprintf(stderr,
		"usage: orders daemon --db PATH --sock PATH [-t timeout_ms] [-T tick_ms]\n"
		"       orders drive --db PATH --sock PATH (--spawn PROG | --kill-cmd CMD)\n"
		"              [-n orders] [-t timeout_ms] [-T tick_ms] [-d seconds]\n"
		"              [-k kill_at_s] [--down seconds] [-r seed]\n"
		"       orders [check] [-n orders] [-t timeout_ms] [-T tick_ms] [-d seconds]\n"
		"              [-k kill_at_s] [--down seconds] [-r seed]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, 'D' },
		{ "sock", required_argument, NULL, 'S' },
		{ "spawn", required_argument, NULL, 'P' },
		{ "kill-cmd", required_argument, NULL, 'K' },
		{ "down", required_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 },
	};
	struct driver_cfg c = {
		.nr_orders = 600, .timeout_ns = 5 * NSEC_PER_SEC,
		.tick_ns = 10 * NSEC_PER_MSEC, .create_ns = 20 * NSEC_PER_SEC,
		.kill_at_ns = 10 * NSEC_PER_SEC, .down_ns = 3 * NSEC_PER_SEC,
		.seed = 0x0dde,
	};
	const char *cmd = argc > 1 && argv[1][0] != '-' ? argv[1] : "check";
	int opt;

	if (strcmp(cmd, "check") && strcmp(cmd, "daemon") && strcmp(cmd, "drive"))
		usage();
	if (argc > 1 && argv[1][0] != '-') {
		argc--;
		argv++;
	}
	while ((opt = getopt_long(argc, argv, "n:t:T:d:k:r:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'D': c.db_path = optarg; break;
		case 'S': c.sock_path = optarg; break;
		case 'P': c.spawn = optarg; break;
		case 'K': c.kill_cmd = optarg; break;
		case 'w': c.down_ns = strtoull(optarg, NULL, 0) * NSEC_PER_SEC; break;
		case 'n': c.nr_orders = strtoul(optarg, NULL, 0); break;
		case 't': c.timeout_ns = strtoull(optarg, NULL, 0) * NSEC_PER_MSEC; break;
		case 'T': c.tick_ns = strtoull(optarg, NULL, 0) * NSEC_PER_MSEC; break;
		case 'd': c.create_ns = strtoull(optarg, NULL, 0) * NSEC_PER_SEC; break;
		case 'k': c.kill_at_ns = strtoull(optarg, NULL, 0) * NSEC_PER_SEC; break;
		case 'r': c.seed = strtoull(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (optind != argc || !c.timeout_ns || !c.tick_ns)
		usage();

	if (!strcmp(cmd, "daemon")) {
		struct daemon_cfg dc = {
			.db_path = c.db_path, .sock_path = c.sock_path,
			.timeout_ns = c.timeout_ns, .tick_ns = c.tick_ns,
		};

		if (!dc.db_path || !dc.sock_path)
			usage();
		return orders_daemon(&dc);
	}
	if (!strcmp(cmd, "check")) {
		if (c.db_path || c.sock_path || c.spawn || c.kill_cmd)
			usage();
		mkdir(CHECK_DIR, 0700);
		unlink(CHECK_DIR "/orders.db");
		unlink(CHECK_DIR "/orders.db-wal");
		unlink(CHECK_DIR "/orders.db-shm");
		c.db_path = CHECK_DIR "/orders.db";
		c.sock_path = CHECK_DIR "/orders.sock";
		c.spawn = "/proc/self/exe";
	}
	if (!c.db_path || !c.sock_path || !c.nr_orders || !c.create_ns ||
	    !c.spawn == !c.kill_cmd || (c.kill_at_ns && c.kill_at_ns >= c.create_ns))
		usage();
	return orders_drive(&c);
}
