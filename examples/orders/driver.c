// SPDX-License-Identifier: MIT
/*
 * The driver: a shop front-end and the judge of the order service.
 *
 * It creates orders evenly over a while, and pays most of them at a
 * random time up to 1.5 timeouts after creation (so some payments come
 * too late), never the others. Half-way it kills the service with
 * SIGKILL: itself (--spawn: it started the service, and restarts it
 * after a pause) or with a command (--kill-cmd, e.g. systemctl kill,
 * the supervisor restarting it). While the service is down, requests
 * fail and are retried; both requests may be repeated safely.
 *
 * When the last deadline is past it reads the database and checks that
 * every order ended exactly once, as paid or cancelled (one row of
 * history each), none cancelled before its deadline or paid after it,
 * none left unpaid or missing; that the answers it got agree with the
 * database; that the wheel never woke an order before its deadline; and
 * that the crash really happened: the service started again and put
 * back unpaid orders, some of them due while it was down.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "orders.h"

#define STEP_NS		(10 * NSEC_PER_MSEC)
#define GRACE_NS	(3 * NSEC_PER_SEC)	/* after the last deadline */
#define ID_BASE		100000			/* order numbers look like ones */

enum reply { R_NONE, R_PAID, R_CANCELLED };

struct order {
	uint64_t create_at, pay_at;	/* planned; pay_at 0: never pays */
	uint64_t deadline;		/* from the service's answer */
	bool created, pay_done;
	enum reply pay_reply;
	uint64_t pay_reply_at;		/* when the answer came */
};

struct driver {
	const struct driver_cfg *cfg;
	struct order *orders;
	int sock;
	pid_t pid;			/* --spawn: the service */
	uint64_t killed_at, started_again_at;
	unsigned long long answered, failed;	/* requests */
};

static int spawn(struct driver *d)
{
	const struct driver_cfg *c = d->cfg;
	char t[32], tick[32];

	snprintf(t, sizeof(t), "%llu", (unsigned long long)(c->timeout_ns / NSEC_PER_MSEC));
	snprintf(tick, sizeof(tick), "%llu", (unsigned long long)(c->tick_ns / NSEC_PER_MSEC));
	d->pid = fork();
	if (d->pid < 0) {
		perror("orders: fork");
		return -1;
	}
	if (d->pid == 0) {
		execl(c->spawn, "orders", "daemon", "--db", c->db_path, "--sock",
		      c->sock_path, "-t", t, "-T", tick, (char *)NULL);
		perror("orders: exec");
		_exit(127);
	}
	return 0;
}

static void disconnect(struct driver *d)
{
	if (d->sock >= 0)
		close(d->sock);
	d->sock = -1;
}

/*
 * One request, one answer line. -1 if the service cannot be reached or
 * the answer did not come whole: the caller retries later.
 */
static int request(struct driver *d, const char *req, char *ans, size_t size)
{
	size_t len = 0;

	if (d->sock < 0) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		struct timeval tv = { .tv_sec = 10 };

		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", d->cfg->sock_path);
		d->sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (d->sock < 0 || connect(d->sock, (struct sockaddr *)&sa, sizeof(sa)) ||
		    setsockopt(d->sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
			goto lost;
	}
	if (send(d->sock, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req))
		goto lost;
	while (len < size - 1) {
		ssize_t n = read(d->sock, ans + len, 1);

		if (n != 1)
			goto lost;
		if (ans[len++] == '\n') {
			ans[len] = 0;
			d->answered++;
			return 0;
		}
	}
lost:
	d->failed++;
	disconnect(d);
	return -1;
}

static uint64_t order_id(unsigned int i)
{
	return ID_BASE + i;
}

static int create(struct driver *d, unsigned int i)
{
	char req[64], ans[128];
	uint64_t id, deadline;
	int state;

	snprintf(req, sizeof(req), "create %" PRIu64 "\n", order_id(i));
	if (request(d, req, ans, sizeof(ans)))
		return -1;
	if ((sscanf(ans, "created %" SCNu64 " %" SCNu64, &id, &deadline) != 2 &&
	     sscanf(ans, "exists %" SCNu64 " %" SCNu64 " %d", &id, &deadline, &state) != 3) ||
	    id != order_id(i)) {
		fprintf(stderr, "orders: create %" PRIu64 ": answer '%s'\n", order_id(i), ans);
		return -2;
	}
	d->orders[i].deadline = deadline;
	d->orders[i].created = true;
	return 0;
}

static int pay(struct driver *d, unsigned int i)
{
	struct order *o = &d->orders[i];
	char req[64], ans[128];
	uint64_t id;

	snprintf(req, sizeof(req), "pay %" PRIu64 "\n", order_id(i));
	if (request(d, req, ans, sizeof(ans)))
		return -1;
	o->pay_reply_at = real_now();
	if (sscanf(ans, "paid %" SCNu64, &id) == 1 && id == order_id(i))
		o->pay_reply = R_PAID;
	else if (sscanf(ans, "cancelled %" SCNu64, &id) == 1 && id == order_id(i))
		o->pay_reply = R_CANCELLED;
	else {
		fprintf(stderr, "orders: pay %" PRIu64 ": answer '%s'\n", order_id(i), ans);
		return -2;
	}
	o->pay_done = true;
	return 0;
}

/* SIGKILL the service, and with --spawn start it again after a pause. */
static int crash(struct driver *d, uint64_t now)
{
	const struct driver_cfg *c = d->cfg;

	if (c->kill_at_ns && !d->killed_at && now >= c->kill_at_ns) {
		d->killed_at = real_now();
		if (c->spawn) {
			kill(d->pid, SIGKILL);
			waitpid(d->pid, NULL, 0);
		} else if (system(c->kill_cmd) != 0) {
			fprintf(stderr, "orders: '%s' failed\n", c->kill_cmd);
			return -1;
		}
		printf("orders: killed the service with SIGKILL\n");
	}
	if (c->spawn && d->killed_at && !d->started_again_at &&
	    real_now() >= d->killed_at + c->down_ns) {
		d->started_again_at = real_now();
		return spawn(d);
	}
	return 0;
}

/* A service that does not answer for this long is not coming back. */
#define GIVE_UP_NS	(120 * NSEC_PER_SEC)

static int drive(struct driver *d)
{
	const struct driver_cfg *c = d->cfg;
	uint64_t t0 = real_now(), seed = c->seed | 1, last_deadline = 0;
	unsigned long long answered = 0;
	uint64_t last_answer = t0;
	unsigned int next_create = 0;

	for (unsigned int i = 0; i < c->nr_orders; i++) {
		struct order *o = &d->orders[i];

		o->create_at = t0 + i * c->create_ns / c->nr_orders;
		if (rnd(&seed) % 10 < 7)
			o->pay_at = o->create_at + 1 + rnd(&seed) % (c->timeout_ns * 3 / 2);
	}
	for (;;) {
		uint64_t now = real_now();
		bool pending = false;
		int ret = 0;

		if (crash(d, now - t0))
			return -1;
		if (d->answered != answered) {
			answered = d->answered;
			last_answer = now;
		} else if (now - last_answer > GIVE_UP_NS) {
			fprintf(stderr, "orders: no answer from the service for %llu s\n",
				(unsigned long long)(GIVE_UP_NS / NSEC_PER_SEC));
			return -1;
		}
		if (c->spawn && waitpid(d->pid, NULL, WNOHANG) == d->pid) {
			fprintf(stderr, "orders: the service exited by itself\n");
			return -1;
		}
		while (next_create < c->nr_orders && d->orders[next_create].create_at <= now &&
		       !(ret = create(d, next_create)))
			next_create++;
		for (unsigned int i = 0; !ret && i < next_create; i++) {
			struct order *o = &d->orders[i];

			if (o->pay_at && !o->pay_done) {
				if (o->pay_at <= now)
					ret = pay(d, i);
				pending = true;
			}
		}
		if (ret < -1)
			return -1;
		if (next_create == c->nr_orders && !pending) {
			if (!last_deadline)
				for (unsigned int i = 0; i < c->nr_orders; i++)
					if (d->orders[i].deadline > last_deadline)
						last_deadline = d->orders[i].deadline;
			if (now >= last_deadline + GRACE_NS)
				return 0;
		}
		sleep_ns(STEP_NS);
	}
}

struct tally {
	unsigned int total, paid, cancelled, early, dbl, lost, wrong;
	unsigned int early_wakeups, starts, restored, due_down;
	unsigned int nr_lat, nr_lat_down;
	uint64_t *lat, *lat_down;
	uint64_t restart_at;
	int restart_pid;
};

/* Read the database and judge every order. */
static int judge(struct driver *d, struct tally *t)
{
	const struct driver_cfg *c = d->cfg;
	unsigned int n = c->nr_orders;
	unsigned int *terminal = calloc(n, sizeof(*terminal));
	int *closed_by = calloc(n, sizeof(*closed_by));	/* pid */
	bool *seen = calloc(n, sizeof(*seen));
	sqlite3_stmt *st;
	sqlite3 *db;

	t->lat = calloc(n, sizeof(uint64_t));
	t->lat_down = calloc(n, sizeof(uint64_t));
	if (!terminal || !closed_by || !seen || !t->lat || !t->lat_down ||
	    sqlite3_open_v2(c->db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		complain("orders: open %s for the check failed\n", c->db_path);
		return -1;
	}
	sqlite3_busy_timeout(db, 10000);

	/* The starts of the service: the second one restored the orders. */
	if (sqlite3_prepare_v2(db, "SELECT at_ns, restored, pid FROM starts ORDER BY at_ns",
			       -1, &st, NULL) != SQLITE_OK)
		goto db_err;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (t->starts++ == 1) {
			t->restart_at = sqlite3_column_int64(st, 0);
			t->restored = sqlite3_column_int(st, 1);
			t->restart_pid = sqlite3_column_int(st, 2);
		}
	}
	sqlite3_finalize(st);

	if (sqlite3_prepare_v2(db, "SELECT order_id, what, pid FROM history", -1, &st,
			       NULL) != SQLITE_OK)
		goto db_err;
	while (sqlite3_step(st) == SQLITE_ROW) {
		uint64_t k = sqlite3_column_int64(st, 0) - ID_BASE;
		const char *what = (const char *)sqlite3_column_text(st, 1);

		if (!strcmp(what, "early-wakeup"))
			t->early_wakeups++;
		else if (k < n) {
			terminal[k]++;
			closed_by[k] = sqlite3_column_int(st, 2);
		}
	}
	sqlite3_finalize(st);

	if (sqlite3_prepare_v2(db, "SELECT id, deadline_ns, state, closed_ns FROM orders",
			       -1, &st, NULL) != SQLITE_OK)
		goto db_err;
	while (sqlite3_step(st) == SQLITE_ROW) {
		uint64_t k = sqlite3_column_int64(st, 0) - ID_BASE;
		uint64_t deadline = sqlite3_column_int64(st, 1);
		int state = sqlite3_column_int(st, 2);
		uint64_t closed = sqlite3_column_int64(st, 3);
		struct order *o;

		if (k >= n || seen[k]) {
			complain("orders: the database has an order %" PRIu64
				" nobody created\n", k + ID_BASE);
			t->wrong++;
			continue;
		}
		seen[k] = true;
		o = &d->orders[k];
		t->total++;
		if (state == ORDER_UNPAID) {
			complain("orders: order %" PRIu64 " is still unpaid %.1f s "
				"after its deadline\n", k + ID_BASE,
				(real_now() - deadline) / 1e9);
			t->lost++;
			continue;
		}
		if (terminal[k] > 1) {
			complain("orders: order %" PRIu64 " ended %u times\n",
				k + ID_BASE, terminal[k]);
			t->dbl++;
		} else if (!terminal[k]) {
			complain("orders: order %" PRIu64 " closed without history\n",
				k + ID_BASE);
			t->wrong++;
		}
		if (deadline != o->deadline) {
			complain("orders: order %" PRIu64 ": deadline %" PRIu64
				" in the database, %" PRIu64 " answered\n", k + ID_BASE,
				deadline, o->deadline);
			t->wrong++;
		}
		if (o->pay_done && o->pay_reply != (state == ORDER_PAID ? R_PAID : R_CANCELLED)) {
			complain("orders: order %" PRIu64 ": answered %s, the database "
				"says %s\n", k + ID_BASE,
				o->pay_reply == R_PAID ? "paid" : "cancelled",
				state == ORDER_PAID ? "paid" : "cancelled");
			t->wrong++;
		}
		if (state == ORDER_PAID) {
			t->paid++;
			if (closed >= deadline) {
				complain("orders: order %" PRIu64 " paid %.1f ms after "
					"its deadline\n", k + ID_BASE, (closed - deadline) / 1e6);
				t->wrong++;
			}
			continue;
		}
		t->cancelled++;
		if (closed < deadline ||
		    (o->pay_reply == R_CANCELLED && o->pay_reply_at < deadline)) {
			complain("orders: order %" PRIu64 " cancelled %.1f ms before "
				"its deadline\n", k + ID_BASE,
				(deadline - (closed < deadline ? closed : o->pay_reply_at)) / 1e6);
			t->early++;
			continue;
		}
		/* Due before the restart, closed by the restarted service. */
		if (t->restart_pid && closed_by[k] == t->restart_pid &&
		    deadline < t->restart_at) {
			t->due_down++;
			t->lat_down[t->nr_lat_down++] = closed - deadline;
		} else {
			t->lat[t->nr_lat++] = closed - deadline;
		}
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	for (unsigned int k = 0; k < n; k++)
		if (!seen[k]) {
			complain("orders: order %u is not in the database\n",
				k + ID_BASE);
			t->lost++;
		}
	qsort(t->lat, t->nr_lat, sizeof(uint64_t), cmp_u64);
	qsort(t->lat_down, t->nr_lat_down, sizeof(uint64_t), cmp_u64);
	free(terminal);
	free(closed_by);
	free(seen);
	return 0;
db_err:
	complain("orders: check: %s\n", sqlite3_errmsg(db));
	return -1;
}

int orders_drive(const struct driver_cfg *c)
{
	struct driver d = { .cfg = c, .sock = -1, .pid = -1 };
	struct tally t = { 0 };
	bool ok;

	d.orders = calloc(c->nr_orders, sizeof(*d.orders));
	if (!d.orders)
		return 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n1..1\n");
	printf("orders: %u orders over %llu s, each cancelled %llu ms after its "
	       "creation unless paid (tick %llu ms); ~70%% are paid at a random time "
	       "up to 1.5 timeouts; the service is killed with SIGKILL at %llu s\n",
	       c->nr_orders, (unsigned long long)(c->create_ns / NSEC_PER_SEC),
	       (unsigned long long)(c->timeout_ns / NSEC_PER_MSEC),
	       (unsigned long long)(c->tick_ns / NSEC_PER_MSEC),
	       (unsigned long long)(c->kill_at_ns / NSEC_PER_SEC));
	if (c->spawn && spawn(&d))
		return 1;
	if (drive(&d))
		return 1;
	disconnect(&d);
	if (c->spawn) {
		int status;

		kill(d.pid, SIGTERM);
		if (waitpid(d.pid, &status, 0) != d.pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			fprintf(stderr, "orders: the service did not stop cleanly "
				"(status %#x)\n", status);
			return 1;
		}
	}
	if (judge(&d, &t))
		return 1;

	ok = t.total == c->nr_orders && t.paid + t.cancelled == t.total && !t.early &&
	     !t.dbl && !t.lost && !t.wrong && !t.early_wakeups;
	if (c->kill_at_ns && (t.starts < 2 || !t.restored || !t.due_down)) {
		fprintf(stderr, "orders: the crash was not exercised: %u starts, %u orders "
			"restored, %u due while down\n", t.starts, t.restored, t.due_down);
		ok = false;
	}
	printf("orders: %llu requests answered, %llu attempts failed while the "
	       "service was down (each retried)\n", d.answered, d.failed);
	printf("orders: the service started %u times; at its restart it put back %u "
	       "unpaid orders from the database, and cancelled %u that had fallen due "
	       "before it started\n", t.starts, t.restored, t.due_down);
	printf("orders: cancelled after the deadline, by the service running then: p50 "
	       "%.1f ms, p99 %.1f ms, max %.1f ms; by the restarted one: max %.1f ms\n",
	       pct_ms(t.lat, t.nr_lat, 50),
	       pct_ms(t.lat, t.nr_lat, 99), t.nr_lat ? t.lat[t.nr_lat - 1] / 1e6 : 0,
	       t.nr_lat_down ? t.lat_down[t.nr_lat_down - 1] / 1e6 : 0);
	printf("orders: wrong=%u early_wakeups=%u restarts=%u restored=%u due_while_down=%u\n",
	       t.wrong, t.early_wakeups, t.starts ? t.starts - 1 : 0, t.restored, t.due_down);
	printf("%sok 1 orders: every order ended once, in time, across kill -9\n",
	       ok ? "" : "not ");
	printf("orders: total=%u paid=%u cancelled=%u early=%u double=%u lost=%u\n",
	       t.total, t.paid, t.cancelled, t.early, t.dbl, t.lost);
	return ok ? 0 : 1;
}
