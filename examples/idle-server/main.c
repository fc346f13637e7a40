// SPDX-License-Identifier: MIT
/*
 * idle-server: drop TCP connections idle for T, through twheel's touch
 * table. Three ways to run it:
 *
 *   idle-server serve [-p port] [-t timeout_ms] [-T tick_ms] [-m max_conns]
 *	the server alone, on 127.0.0.1 (port 0: any, printed), until
 *	SIGINT/SIGTERM; one line per dropped connection.
 *   idle-server client -p port [-n conns] [-s silent] [-t timeout_ms] ...
 *	the load alone, against a server already running.
 *   idle-server [check] [-n conns] [-s silent] [-t timeout_ms] ...
 *	both, in two processes over loopback (lo is brought up if it is
 *	down, as in a bare VM; the file limit is raised), and a judgement
 *	of what each saw. Run with no argument, this is the check that
 *	`make check` runs in a VM.
 *
 * The check holds every connection to this: the silent ones are all
 * closed by the server, none before T had passed since the client's
 * last send (taken before its write) and the server's last receive;
 * none of the others is ever closed; the kernel never expired a
 * connection that had been touched (no "rescue" by the server's own
 * check); and both sides agree on which connections were dropped.
 * Last line, for scripts:
 *   idle-server: conns=N silent=S dropped=D early=E live_dropped=L
 *     p50_ms=X p99_ms=X max_ms=X touches=T rearms=R rescued=Q timeout_ms=T
 * after one TAP line ("ok 1" or "not ok 1", in a "1..1" plan) for
 * make check. Exit status 0 only if all of that holds.
 */
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <twheel.h>

#include "idle.h"

struct opts {
	uint16_t port;
	unsigned int nr_conns, nr_silent, max_conns;
	uint64_t timeout_ns, tick_ns, min_interval_ns, max_interval_ns;
	uint64_t duration_ns, grace_ns, seed;
};

static void usage(void)
{
	fprintf(stderr,
		"usage: idle-server [check] [-n conns] [-s silent] [-t timeout_ms] [-T tick_ms]\n"
		"                   [-i min_ms,max_ms] [-d seconds] [-g grace_s] [-r seed]\n"
		"       idle-server serve [-p port] [-t timeout_ms] [-T tick_ms] [-m max_conns]\n"
		"       idle-server client -p port [-n conns] [-s silent] [-t timeout_ms]\n"
		"                   [-i min_ms,max_ms] [-d seconds] [-g grace_s] [-r seed]\n");
	exit(2);
}

static void parse(int argc, char **argv, struct opts *o)
{
	int opt;

	while ((opt = getopt(argc, argv, "p:n:s:t:T:m:i:d:g:r:")) != -1) {
		switch (opt) {
		case 'p': o->port = strtoul(optarg, NULL, 0); break;
		case 'n': o->nr_conns = strtoul(optarg, NULL, 0); break;
		case 's': o->nr_silent = strtoul(optarg, NULL, 0); break;
		case 't': o->timeout_ns = strtoull(optarg, NULL, 0) * NSEC_PER_MSEC; break;
		case 'T': o->tick_ns = strtoull(optarg, NULL, 0) * NSEC_PER_MSEC; break;
		case 'm': o->max_conns = strtoul(optarg, NULL, 0); break;
		case 'i': {
			char *comma;

			o->min_interval_ns = strtoull(optarg, &comma, 0) * NSEC_PER_MSEC;
			if (*comma != ',')
				usage();
			o->max_interval_ns = strtoull(comma + 1, NULL, 0) * NSEC_PER_MSEC;
			break;
		}
		case 'd': o->duration_ns = strtoull(optarg, NULL, 0) * NSEC_PER_SEC; break;
		case 'g': o->grace_ns = strtoull(optarg, NULL, 0) * NSEC_PER_SEC; break;
		case 'r': o->seed = strtoull(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	if (!o->nr_conns || o->nr_silent > o->nr_conns ||
	    !o->min_interval_ns || o->min_interval_ns > o->max_interval_ns ||
	    o->max_interval_ns >= o->timeout_ns ||
	    o->duration_ns <= o->timeout_ns + 4 * NSEC_PER_SEC) {
		fprintf(stderr, "idle-server: need silent <= conns, 0 < min interval <= "
			"max interval < timeout, duration > timeout + 4 s\n");
		exit(2);
	}
}

static int listen_on(uint16_t port)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	socklen_t len = sizeof(sa);
	int one = 1;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 4096) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len)) {
		fprintf(stderr, "idle-server: listen on 127.0.0.1:%u: %s\n", port,
			strerror(errno));
		return -1;
	}
	return fd;
}

/* RLIMIT_NOFILE to at least @n (raising the hard limit needs root). */
static int nofile_at_least(rlim_t n)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -1;
	if (rl.rlim_cur >= n)
		return 0;
	rl.rlim_cur = n;
	if (rl.rlim_max < n)
		rl.rlim_max = n;
	if (setrlimit(RLIMIT_NOFILE, &rl)) {
		fprintf(stderr, "idle-server: raise the open file limit to %llu: %s\n",
			(unsigned long long)n, strerror(errno));
		return -1;
	}
	return 0;
}

static int serve(const struct opts *o)
{
	struct idle_server_cfg cfg = {
		.timeout_ns = o->timeout_ns, .tick_ns = o->tick_ns,
		.max_conns = o->max_conns, .log = stdout,
	};
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	struct rlimit rl;
	int lfd;

	if (!cfg.max_conns) {
		getrlimit(RLIMIT_NOFILE, &rl);
		cfg.max_conns = rl.rlim_cur < TWHEEL_TOUCH_MAX_SLOTS ?
				rl.rlim_cur : TWHEEL_TOUCH_MAX_SLOTS;
	}
	lfd = listen_on(o->port);
	if (lfd < 0)
		return 1;
	getsockname(lfd, (struct sockaddr *)&sa, &len);
	printf("idle-server: listening on 127.0.0.1:%u, dropping connections idle "
	       "for %llu ms (tick %llu ms, %u slots)\n", ntohs(sa.sin_port),
	       (unsigned long long)(o->timeout_ns / NSEC_PER_MSEC),
	       (unsigned long long)(o->tick_ns / NSEC_PER_MSEC), cfg.max_conns);
	fflush(stdout);
	setvbuf(stdout, NULL, _IOLBF, 0);
	return idle_serve(lfd, &cfg) ? 1 : 0;
}

static struct idle_client_cfg client_cfg(const struct opts *o)
{
	return (struct idle_client_cfg){
		.port = o->port, .nr_conns = o->nr_conns, .nr_silent = o->nr_silent,
		.timeout_ns = o->timeout_ns, .min_interval_ns = o->min_interval_ns,
		.max_interval_ns = o->max_interval_ns, .duration_ns = o->duration_ns,
		.grace_ns = o->grace_ns, .seed = o->seed,
	};
}

/*
 * The detection latency of a silent connection is the server's close
 * minus (its last receive + T): the deadline's rounding up to the tick
 * grid, the kernel's lateness, the server's reaction. The client sees
 * more: from its last send to its seeing the close, minus T, in parts:
 * the last message crossing loopback, those three, and the FIN crossing
 * back to the client.
 */
#define NR_PARTS	5
static const char *const part_names[NR_PARTS] = {
	"send->receive", "grid", "kernel", "server", "close->client",
};

/* What the server logged: its drops, by peer port, and its counters. */
struct server_seen {
	uint64_t *last_rx, *drop_at;	/* by port; drop_at 0: not dropped */
	uint64_t *deadline, *expired;	/* by port: the event of its drop */
	unsigned int drops, bad_lines;
	unsigned long long touches, rescued, dropped;
	long long rearms;
	bool stats;
};

static void read_server_log(FILE *log, struct server_seen *sv)
{
	char line[512];

	rewind(log);
	while (fgets(line, sizeof(line), log)) {
		unsigned int port;
		unsigned long long rx, at, dl, ex;

		if (sscanf(line, "idle-server: drop peer=127.0.0.1:%u idle_ms=%*f "
			   "last_rx_ns=%llu drop_ns=%llu deadline_ns=%llu expired_ns=%llu",
			   &port, &rx, &at, &dl, &ex) == 5 &&
		    port < 65536 && !sv->drop_at[port]) {
			sv->last_rx[port] = rx;
			sv->drop_at[port] = at;
			sv->deadline[port] = dl;
			sv->expired[port] = ex;
			sv->drops++;
		} else if (sscanf(line, "idle-server: stats accepted=%*u refused=%*u "
				  "closed=%*u dropped=%llu rescued=%llu stale=%*u "
				  "messages=%*u touches=%llu rearms=%lld", &sv->dropped,
				  &sv->rescued, &sv->touches, &sv->rearms) == 4) {
			sv->stats = true;
			fputs(line, stdout);
		} else {
			sv->bad_lines++;
			fprintf(stderr, "idle-server: server said: %s", line);
		}
	}
}

static int check(const struct opts *o)
{
	struct idle_server_cfg scfg = {
		.timeout_ns = o->timeout_ns, .tick_ns = o->tick_ns,
		.max_conns = o->nr_conns + 64,
	};
	struct idle_client_cfg ccfg = client_cfg(o);
	struct idle_client_result res = { 0 };
	struct server_seen sv = { 0 };
	unsigned int dropped = 0, early = 0, live_dropped = 0, unmatched = 0, n = 0;
	uint64_t *lat, *e2e, *parts[NR_PARTS];
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	sigset_t mask, old;
	int lfd, status, crc;
	bool ok;
	pid_t pid;

	if (lo_up("idle-server") || nofile_at_least(scfg.max_conns))
		return 1;
	lfd = listen_on(0);
	scfg.log = tmpfile();
	sv.last_rx = calloc(65536, sizeof(uint64_t));
	sv.drop_at = calloc(65536, sizeof(uint64_t));
	sv.deadline = calloc(65536, sizeof(uint64_t));
	sv.expired = calloc(65536, sizeof(uint64_t));
	lat = calloc(o->nr_conns, sizeof(*lat));
	e2e = calloc(o->nr_conns, sizeof(*e2e));
	for (int k = 0; k < NR_PARTS; k++)
		parts[k] = calloc(o->nr_conns, sizeof(uint64_t));
	if (lfd < 0 || !scfg.log || !sv.last_rx || !sv.drop_at || !sv.deadline ||
	    !sv.expired || !lat || !e2e || !parts[0] || !parts[1] || !parts[2] ||
	    !parts[3] || !parts[4]) {
		complain("idle-server: check setup: %s\n", strerror(errno));
		return 1;
	}
	getsockname(lfd, (struct sockaddr *)&sa, &len);
	ccfg.port = ntohs(sa.sin_port);
	printf("TAP version 13\n1..1\n");
	printf("idle-server: %u TCP connections over loopback, a message every "
	       "%llu-%llu ms each; the server drops them after %llu ms idle "
	       "(tick %llu ms); %u will go silent\n", o->nr_conns,
	       (unsigned long long)(o->min_interval_ns / NSEC_PER_MSEC),
	       (unsigned long long)(o->max_interval_ns / NSEC_PER_MSEC),
	       (unsigned long long)(o->timeout_ns / NSEC_PER_MSEC),
	       (unsigned long long)(o->tick_ns / NSEC_PER_MSEC), o->nr_silent);
	fflush(stdout);

	/* The server's signal mask is set before it can be signalled. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, &old);
	pid = fork();
	if (pid < 0) {
		perror("idle-server: fork");
		return 1;
	}
	if (pid == 0)
		_exit(idle_serve(lfd, &scfg) ? 1 : 0);
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(lfd);

	crc = idle_client(&ccfg, &res);
	kill(pid, SIGTERM);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		complain("idle-server: the server process failed (status %#x)\n",
			status);
		return 1;
	}
	if (crc)
		return 1;
	read_server_log(scfg.log, &sv);

	for (unsigned int i = 0; i < res.nr_conns; i++) {
		struct client_conn *c = &res.conns[i];
		uint64_t srv_drop = sv.drop_at[c->port];

		if (!c->closed_at) {
			if (srv_drop) {
				complain("idle-server: conn %u (port %u): the server "
					"dropped it, the client never saw it\n", i, c->port);
				unmatched++;
			}
			continue;
		}
		if (!srv_drop) {
			complain("idle-server: conn %u (port %u): closed, but the "
				"server logged no drop\n", i, c->port);
			unmatched++;
		}
		sv.drop_at[c->port] = 0;	/* matched */
		if (!c->silent_at || c->closed_at < c->silent_at) {
			live_dropped++;
			complain("idle-server: conn %u (port %u) dropped while "
				"sending (longest gap between its sends %.1f ms)\n", i,
				c->port, c->max_gap / 1e6);
		}
		if (c->closed_at - c->last_send < o->timeout_ns ||
		    (srv_drop && srv_drop - sv.last_rx[c->port] < o->timeout_ns)) {
			early++;
			complain("idle-server: conn %u (port %u) dropped early: "
				"%.1f ms after the client's last send, %.1f ms after the "
				"server's last receive\n", i, c->port,
				(c->closed_at - c->last_send) / 1e6,
				srv_drop ? (srv_drop - (double)sv.last_rx[c->port]) / 1e6 : -1);
			continue;
		}
		if (c->silent_at) {
			uint64_t rx = sv.last_rx[c->port], dl = sv.deadline[c->port];
			uint64_t ex = sv.expired[c->port];

			dropped++;
			/* Unsigned wrap would be a bug shown as a huge value. */
			parts[0][n] = rx - c->last_send;
			parts[1][n] = dl - rx - o->timeout_ns;
			parts[2][n] = ex - dl;
			parts[3][n] = srv_drop - ex;
			parts[4][n] = c->closed_at - srv_drop;
			e2e[n] = c->closed_at - c->last_send - o->timeout_ns;
			lat[n++] = srv_drop - rx - o->timeout_ns;
		}
	}
	for (unsigned int p = 0; p < 65536; p++)
		if (sv.drop_at[p]) {
			complain("idle-server: the server dropped port %u, not one "
				"of the client's connections\n", p);
			unmatched++;
		}
	qsort(lat, n, sizeof(*lat), cmp_u64);
	qsort(e2e, n, sizeof(*e2e), cmp_u64);
	for (int k = 0; k < NR_PARTS; k++)
		qsort(parts[k], n, sizeof(uint64_t), cmp_u64);

	ok = sv.stats && !sv.bad_lines && dropped == o->nr_silent && !early &&
	     !live_dropped && !unmatched && !sv.rescued &&
	     sv.dropped == o->nr_silent;
	printf("idle-server: client: %llu messages sent; %u of %u silent connections "
	       "closed by the server, %u early, %u live ones closed, %u seen by one "
	       "side only\n", res.messages, dropped, o->nr_silent, early,
	       live_dropped, unmatched);
	printf("idle-server: detection, the server's drop after its last receive + "
	       "%llu ms: p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
	       (unsigned long long)(o->timeout_ns / NSEC_PER_MSEC), pct_ms(lat, n, 50),
	       pct_ms(lat, n, 99), n ? lat[n - 1] / 1e6 : 0);
	printf("idle-server: as the client sees it, its close after its last send + "
	       "%llu ms: p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
	       (unsigned long long)(o->timeout_ns / NSEC_PER_MSEC), pct_ms(e2e, n, 50),
	       pct_ms(e2e, n, 99), n ? e2e[n - 1] / 1e6 : 0);
	printf("idle-server: the client's view in parts, p50/p99/max ms:");
	for (int k = 0; k < NR_PARTS; k++)
		printf(" %s %.1f/%.1f/%.1f", part_names[k], pct_ms(parts[k], n, 50),
		       pct_ms(parts[k], n, 99), n ? parts[k][n - 1] / 1e6 : 0);
	printf("\n");
	printf("idle-server: %llu refreshes through the touch table, %lld looks by "
	       "the kernel that found a touch\n", sv.touches, sv.rearms);
	printf("%sok 1 idle-server: TCP connections dropped when idle, through the touch table\n",
	       ok ? "" : "not ");
	printf("idle-server: conns=%u silent=%u dropped=%u early=%u live_dropped=%u "
	       "p50_ms=%.1f p99_ms=%.1f max_ms=%.1f touches=%llu rearms=%lld "
	       "rescued=%llu timeout_ms=%llu\n", o->nr_conns, o->nr_silent, dropped,
	       early, live_dropped, pct_ms(lat, n, 50), pct_ms(lat, n, 99),
	       n ? lat[n - 1] / 1e6 : 0, sv.touches, sv.rearms, sv.rescued,
	       (unsigned long long)(o->timeout_ns / NSEC_PER_MSEC));
	return ok ? 0 : 1;
}

static int client(const struct opts *o)
{
	struct idle_client_cfg cfg = client_cfg(o);
	struct idle_client_result res = { 0 };
	unsigned int dropped = 0, early = 0, live_dropped = 0;

	if (!o->port) {
		fprintf(stderr, "idle-server: client needs -p port\n");
		return 2;
	}
	if (nofile_at_least(o->nr_conns + 64) || idle_client(&cfg, &res))
		return 1;
	for (unsigned int i = 0; i < res.nr_conns; i++) {
		struct client_conn *c = &res.conns[i];

		if (!c->closed_at)
			continue;
		if (c->silent_at && c->closed_at >= c->silent_at)
			dropped++;
		else
			live_dropped++;
		early += c->closed_at - c->last_send < o->timeout_ns;
	}
	printf("idle-client: conns=%u silent=%u dropped=%u early=%u live_dropped=%u "
	       "messages=%llu\n", o->nr_conns, o->nr_silent, dropped, early,
	       live_dropped, res.messages);
	return dropped == o->nr_silent && !early && !live_dropped ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct opts o = {
		.nr_conns = 1000, .nr_silent = 200,
		.timeout_ns = 3 * NSEC_PER_SEC, .tick_ns = 10 * NSEC_PER_MSEC,
		.min_interval_ns = 200 * NSEC_PER_MSEC,
		.max_interval_ns = 700 * NSEC_PER_MSEC,
		.duration_ns = 15 * NSEC_PER_SEC, .grace_ns = 5 * NSEC_PER_SEC,
		.seed = 0x1d1e,
	};
	const char *cmd = argc > 1 && argv[1][0] != '-' ? argv[1] : "check";

	if (strcmp(cmd, "check") && strcmp(cmd, "serve") && strcmp(cmd, "client"))
		usage();
	if (argc > 1 && argv[1][0] != '-') {
		argc--;
		argv++;
	}
	parse(argc, argv, &o);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(cmd, "serve"))
		return serve(&o);
	if (!strcmp(cmd, "client"))
		return client(&o);
	return check(&o);
}
