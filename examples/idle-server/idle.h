/* SPDX-License-Identifier: MIT */
/*
 * idle-server: an epoll TCP server that drops connections idle for T
 * seconds, refreshed through twheel's touch table, and the TCP client
 * that drives and checks it. The three parts of the one program:
 * server.c (the server, the part to read), client.c (the load: many
 * connections, some of which go silent) and main.c (the subcommands, and
 * the check that runs both over loopback and compares what each saw).
 */
#ifndef IDLE_H
#define IDLE_H

#include "../example.h"

#include <stdint.h>
#include <stdio.h>


struct idle_server_cfg {
	uint64_t timeout_ns;	/* drop after this long without data */
	uint64_t tick_ns;	/* the wheel's precision */
	uint32_t max_conns;	/* touch slots: connection fds stay below */
	FILE *log;		/* one line per drop, and the final stats */
};

/*
 * Serve the listening socket @lfd until SIGINT or SIGTERM. Returns 0, or
 * -1 after a message on stderr if the wheel or the loop failed.
 */
int idle_serve(int lfd, const struct idle_server_cfg *cfg);

/* What the client saw of one connection; times CLOCK_MONOTONIC ns. */
struct client_conn {
	int fd;			/* -1 once closed */
	uint16_t port;		/* its local port: the server's peer port */
	uint64_t last_send;	/* taken before the write of the last message */
	uint64_t next_send;
	uint64_t silent_at;	/* sends nothing from then on; 0 never */
	uint64_t closed_at;	/* the server closed it; 0 not */
	uint64_t max_gap;	/* longest time between two of its sends */
	unsigned long sent;
};

struct idle_client_cfg {
	uint16_t port;		/* of the server, on 127.0.0.1 */
	unsigned int nr_conns, nr_silent;
	uint64_t timeout_ns;	/* the server's */
	uint64_t min_interval_ns, max_interval_ns; /* between two messages */
	uint64_t duration_ns;	/* silences begin before duration - timeout - 1 s */
	uint64_t grace_ns;	/* after duration, wait this long for late drops */
	uint64_t seed;
};

struct idle_client_result {
	struct client_conn *conns;
	unsigned int nr_conns;
	unsigned long long messages;
};

/* Drive the server; 0, or -1 after a message on stderr. */
int idle_client(const struct idle_client_cfg *cfg, struct idle_client_result *res);

/* CLOCK_MONOTONIC, the clock of the server's wheel, in ns. */
uint64_t mono_now(void);

#endif /* IDLE_H */
