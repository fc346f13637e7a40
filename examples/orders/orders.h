/* SPDX-License-Identifier: MIT */
/*
 * orders: "cancel an unpaid order after 30 minutes", with SQLite as the
 * record of truth and twheel keeping the deadlines. daemon.c is the
 * service (read this); driver.c creates and pays orders against it,
 * kills it with SIGKILL half-way, and checks the database at the end;
 * main.c holds the subcommands.
 */
#ifndef ORDERS_H
#define ORDERS_H

#include "../example.h"

#include <stdint.h>


/* orders.state */
enum order_state {
	ORDER_UNPAID	= 0,
	ORDER_PAID	= 1,
	ORDER_CANCELLED	= 2,
};

struct daemon_cfg {
	const char *db_path;
	const char *sock_path;
	uint64_t timeout_ns;	/* an order is cancelled this long after its creation */
	uint64_t tick_ns;	/* the wheel's precision */
};

/* Serve until SIGTERM/SIGINT: 0, or 1 after a message on stderr. */
int orders_daemon(const struct daemon_cfg *cfg);

struct driver_cfg {
	const char *db_path;
	const char *sock_path;
	const char *spawn;	/* start (and restart) the daemon: this program */
	const char *kill_cmd;	/* or kill it with this shell command */
	unsigned int nr_orders;
	uint64_t timeout_ns, tick_ns;
	uint64_t create_ns;	/* orders are created evenly over this */
	uint64_t kill_at_ns;	/* SIGKILL the daemon this long after the start; 0 never */
	uint64_t down_ns;	/* with spawn: restart it this long after */
	uint64_t seed;
};

/* Drive and check; 0 if every order ended exactly once, in time. */
int orders_drive(const struct driver_cfg *cfg);

/* The wall clock, which deadlines in the database are kept on. */
uint64_t real_now(void);

#endif /* ORDERS_H */
