// SPDX-License-Identifier: MIT
/*
 * The order service: SQLite is the record of truth, twheel keeps the
 * deadlines, and every decision is taken by the database.
 *
 * An order is a row (id chosen by the client, created_ns, deadline_ns on
 * the wall clock, state unpaid/paid/cancelled, closed_ns) and, while it
 * is unpaid, an id in the wheel whose deadline is the row's. The wheel
 * runs on CLOCK_BOOTTIME (time asleep counts: an order due during a
 * suspend is due at resume); the row keeps CLOCK_REALTIME, the one clock
 * that means the same after a restart or a reboot.
 *
 *  create ID  INSERT OR IGNORE the row (a retried create is harmless),
 *             commit, then add the id to the wheel at its deadline
 *             (TWHEEL_OPF_ABSTIME).
 *  pay ID     UPDATE ... SET paid WHERE unpaid AND deadline > now, then
 *             cancel the id in the wheel. The row decides the race with
 *             the expiry: whichever reaches the database first wins, by
 *             the deadline, and the loser changes nothing.
 *  expiry     read from the wheel fd in the epoll loop; one transaction
 *             per read: UPDATE ... SET cancelled WHERE unpaid AND
 *             deadline <= now, for each id. An id already paid is left
 *             alone, a second expiry of the same order changes nothing.
 *
 * Each change of state writes one row of history in the same
 * transaction: the check counts exactly one per order.
 *
 * A crash loses nothing: the wheel dies with the process (nobody keeps
 * its fd), and on start the service puts back every unpaid order from
 * the database with its absolute deadline, in batches of
 * twheel_prep_add_at (one batch for up to 65536 orders). Deadlines that
 * passed while it was down fire at the next tick. An event read but not
 * yet committed when the process dies is simply read again: its order is
 * still unpaid in the database.
 *
 * Protocol: one line per request on a unix stream socket, one line in
 * answer: "create ID" -> "created ID DEADLINE_NS" | "exists ID
 * DEADLINE_NS STATE"; "pay ID" -> "paid ID" | "cancelled ID" | "unknown
 * ID". Both requests can be repeated safely.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <sqlite3.h>
#include <twheel.h>

#include "orders.h"

#define MAX_CLIENTS	1024	/* client fds stay below */
#define RESTORE_BATCH	65536	/* orders per twheel_batch at start */

static const char schema[] =
	"CREATE TABLE IF NOT EXISTS orders ("
	"  id INTEGER PRIMARY KEY,"	/* chosen by the client */
	"  created_ns INTEGER NOT NULL,"	/* CLOCK_REALTIME */
	"  deadline_ns INTEGER NOT NULL,"	/* cancelled if unpaid by then */
	"  state INTEGER NOT NULL DEFAULT 0,"	/* enum order_state */
	"  closed_ns INTEGER);"	/* when paid or cancelled */
	"CREATE INDEX IF NOT EXISTS orders_unpaid ON orders(id) WHERE state = 0;"
	"CREATE TABLE IF NOT EXISTS history ("
	"  order_id INTEGER NOT NULL, what TEXT NOT NULL,"
	"  at_ns INTEGER NOT NULL, pid INTEGER NOT NULL);"
	"CREATE TABLE IF NOT EXISTS starts ("
	"  pid INTEGER NOT NULL, at_ns INTEGER NOT NULL, restored INTEGER NOT NULL);";

enum stmt_idx {
	S_BEGIN, S_COMMIT, S_INSERT, S_GET, S_PAY, S_CANCEL, S_HISTORY,
	S_UNPAID, S_START, NR_STMTS
};

static const char *const stmt_sql[NR_STMTS] = {
	[S_BEGIN]   = "BEGIN IMMEDIATE",
	[S_COMMIT]  = "COMMIT",
	[S_INSERT]  = "INSERT OR IGNORE INTO orders (id, created_ns, deadline_ns) "
		      "VALUES (?1, ?2, ?3)",
	[S_GET]     = "SELECT state, deadline_ns FROM orders WHERE id = ?1",
	[S_PAY]     = "UPDATE orders SET state = 1, closed_ns = ?2 "
		      "WHERE id = ?1 AND state = 0 AND deadline_ns > ?2",
	[S_CANCEL]  = "UPDATE orders SET state = 2, closed_ns = ?2 "
		      "WHERE id = ?1 AND state = 0 AND deadline_ns <= ?2",
	[S_HISTORY] = "INSERT INTO history (order_id, what, at_ns, pid) "
		      "VALUES (?1, ?2, ?3, ?4)",
	[S_UNPAID]  = "SELECT id, deadline_ns FROM orders WHERE state = 0",
	[S_START]   = "INSERT INTO starts (pid, at_ns, restored) VALUES (?1, ?2, ?3)",
};

struct client {
	bool open;
	size_t len;
	char buf[256];
};

struct service {
	const struct daemon_cfg *cfg;
	sqlite3 *db;
	sqlite3_stmt *st[NR_STMTS];
	int wfd, lfd, sfd, ep;
	struct client clients[MAX_CLIENTS];
	unsigned long long created, paid, cancelled, early_wakeups;
};

uint64_t real_now(void)
{
	return twheel_now(CLOCK_REALTIME);
}

/* The database failed: stop. A restart restores everything from it. */
static void __attribute__((noreturn)) db_die(struct service *s, const char *what)
{
	fprintf(stderr, "orders: %s: %s\n", what, sqlite3_errmsg(s->db));
	exit(1);
}

/* Run a prepared statement to its end; returns sqlite3_changes(). */
static int run(struct service *s, enum stmt_idx i)
{
	int rc = sqlite3_step(s->st[i]);

	sqlite3_reset(s->st[i]);
	if (rc != SQLITE_DONE)
		db_die(s, stmt_sql[i]);
	return sqlite3_changes(s->db);
}

static void bind2(struct service *s, enum stmt_idx i, int64_t a, int64_t b)
{
	sqlite3_bind_int64(s->st[i], 1, a);
	sqlite3_bind_int64(s->st[i], 2, b);
}

static void history(struct service *s, uint64_t id, const char *what, uint64_t now)
{
	bind2(s, S_HISTORY, id, 0);
	sqlite3_bind_text(s->st[S_HISTORY], 2, what, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s->st[S_HISTORY], 3, now);
	sqlite3_bind_int64(s->st[S_HISTORY], 4, getpid());
	run(s, S_HISTORY);
}

/* The order's state and deadline; false if there is no such order. */
static bool get(struct service *s, uint64_t id, int *state, uint64_t *deadline)
{
	sqlite3_stmt *st = s->st[S_GET];
	int rc;

	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*state = sqlite3_column_int(st, 0);
		*deadline = sqlite3_column_int64(st, 1);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		db_die(s, stmt_sql[S_GET]);
	return rc == SQLITE_ROW;
}

/*
 * A wall-clock deadline on the wheel's clock. The wall clock is read
 * first, so the offset errs late, never early; a deadline already
 * passed becomes now, which fires at the next tick.
 */
static uint64_t wheel_deadline(uint64_t deadline_real)
{
	uint64_t real = real_now();
	uint64_t boot = twheel_now(CLOCK_BOOTTIME);

	return deadline_real > real ? deadline_real - real + boot : boot;
}

static void arm(struct service *s, uint64_t id, uint64_t deadline_real)
{
	struct twheel_op op;
	int ret;

	twheel_prep_add_at(&op, id, wheel_deadline(deadline_real));
	ret = twheel_submit_op(s->wfd, &op);
	if (ret < 0 && ret != -EEXIST) {
		/* Still in the database: a restart would put it back. */
		fprintf(stderr, "orders: wheel add %" PRIu64 ": %s\n", id, strerror(-ret));
		exit(1);
	}
}

/* In a transaction: cancel @id if it is unpaid and due. True if it was. */
static bool cancel_if_due(struct service *s, uint64_t id, uint64_t now)
{
	bind2(s, S_CANCEL, id, now);
	if (!run(s, S_CANCEL))
		return false;
	history(s, id, "cancelled", now);
	s->cancelled++;
	return true;
}

static void begin(struct service *s)
{
	run(s, S_BEGIN);
}

static void commit(struct service *s)
{
	run(s, S_COMMIT);
}

static void do_create(struct service *s, uint64_t id, char *reply, size_t size)
{
	uint64_t now = real_now(), deadline = now + s->cfg->timeout_ns;
	int state;

	begin(s);
	sqlite3_bind_int64(s->st[S_INSERT], 1, id);
	sqlite3_bind_int64(s->st[S_INSERT], 2, now);
	sqlite3_bind_int64(s->st[S_INSERT], 3, deadline);
	if (run(s, S_INSERT)) {
		commit(s);
		arm(s, id, deadline);
		s->created++;
		snprintf(reply, size, "created %" PRIu64 " %" PRIu64 "\n", id, deadline);
		return;
	}
	get(s, id, &state, &deadline);
	commit(s);
	snprintf(reply, size, "exists %" PRIu64 " %" PRIu64 " %d\n", id, deadline, state);
}

static void do_pay(struct service *s, uint64_t id, char *reply, size_t size)
{
	uint64_t now = real_now(), deadline;
	const char *answer = "unknown";
	bool cancel = false;
	int state;

	begin(s);
	bind2(s, S_PAY, id, now);
	if (run(s, S_PAY)) {
		history(s, id, "paid", now);
		s->paid++;
		answer = "paid";
		cancel = true;
	} else if (get(s, id, &state, &deadline)) {
		/* Unpaid here means due: the expiry has not been read yet. */
		if (state == ORDER_UNPAID)
			cancel = cancel_if_due(s, id, now);
		answer = state == ORDER_PAID ? "paid" : "cancelled";
	}
	commit(s);
	if (cancel)
		twheel_cancel(s->wfd, id);	/* ENOENT: expired meanwhile, no matter */
	snprintf(reply, size, "%s %" PRIu64 "\n", answer, id);
}

/* Every expiry waiting, one transaction per read. */
static int read_expired(struct service *s)
{
	struct twheel_event ev[256];

	for (;;) {
		int n = twheel_read_events(s->wfd, ev, 256);
		uint64_t now;

		if (n == -EAGAIN)
			return 0;
		if (n == -EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "orders: read expiries: %s\n", strerror(-n));
			return -1;
		}
		now = real_now();
		begin(s);
		for (int i = 0; i < n; i++) {
			uint64_t deadline;
			int state;

			if (cancel_if_due(s, ev[i].id, now) ||
			    !get(s, ev[i].id, &state, &deadline) ||
			    state != ORDER_UNPAID)
				continue;
			/*
			 * Unpaid but not yet due by the wall clock (it was
			 * set back): the database says wait. Arm it again.
			 */
			history(s, ev[i].id, "early-wakeup", now);
			s->early_wakeups++;
			arm(s, ev[i].id, deadline);
		}
		commit(s);
	}
}

static void client_line(struct service *s, int fd, char *line)
{
	char reply[128];
	uint64_t id;

	if (sscanf(line, "create %" SCNu64, &id) == 1)
		do_create(s, id, reply, sizeof(reply));
	else if (sscanf(line, "pay %" SCNu64, &id) == 1)
		do_pay(s, id, reply, sizeof(reply));
	else
		snprintf(reply, sizeof(reply), "error unknown request\n");
	/* Answers are short and the client waits for each: no queueing. */
	if (send(fd, reply, strlen(reply), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		s->clients[fd].open = false;
		close(fd);
	}
}

static void client_read(struct service *s, int fd)
{
	struct client *c = &s->clients[fd];

	for (;;) {
		ssize_t n = read(fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len);
		char *nl;

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			c->open = false;
			close(fd);
			return;
		}
		c->len += n;
		c->buf[c->len] = 0;
		while (c->open && (nl = strchr(c->buf, '\n'))) {
			*nl = 0;
			client_line(s, fd, c->buf);
			c->len -= nl + 1 - c->buf;
			memmove(c->buf, nl + 1, c->len + 1);
		}
		if (c->open && c->len == sizeof(c->buf) - 1) {
			c->open = false;	/* a line that long is no request */
			close(fd);
		}
		if (!c->open)
			return;
	}
}

static int watch(struct service *s, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &ev);
}

static void accept_all(struct service *s)
{
	int fd;

	while ((fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		if (fd >= MAX_CLIENTS || watch(s, fd)) {
			close(fd);
			continue;
		}
		s->clients[fd] = (struct client){ .open = true };
	}
}

static int open_db(struct service *s)
{
	if (sqlite3_open(s->cfg->db_path, &s->db) != SQLITE_OK)
		db_die(s, s->cfg->db_path);
	/*
	 * WAL with synchronous=NORMAL: a commit survives the process being
	 * killed (it is in the kernel's page cache); only a power loss can
	 * take the last commits, and they are then also lost to the client.
	 */
	if (sqlite3_exec(s->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
			 "PRAGMA busy_timeout=10000;", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(s->db, schema, NULL, NULL, NULL) != SQLITE_OK)
		db_die(s, "schema");
	for (int i = 0; i < NR_STMTS; i++)
		if (sqlite3_prepare_v2(s->db, stmt_sql[i], -1, &s->st[i], NULL) != SQLITE_OK)
			db_die(s, stmt_sql[i]);
	return 0;
}

static int open_wheel(struct service *s)
{
	int ret;

	s->wfd = twheel_open(O_CLOEXEC | O_NONBLOCK);
	if (s->wfd < 0) {
		fprintf(stderr, "orders: open %s: %s\n", TWHEEL_DEVICE, strerror(-s->wfd));
		return -1;
	}
	ret = twheel_setup(s->wfd, s->cfg->tick_ns, s->cfg->timeout_ns, CLOCK_BOOTTIME, 0);
	if (ret < 0) {
		fprintf(stderr, "orders: wheel setup: %s\n", strerror(-ret));
		return -1;
	}
	return 0;
}

/* Every unpaid order back into the wheel at its deadline. */
static int restore(struct service *s)
{
	sqlite3_stmt *st = s->st[S_UNPAID];
	struct twheel_op *ops = NULL;
	size_t n = 0, cap = 0, batches = 0, due = 0;
	uint64_t now = real_now();
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		uint64_t deadline = sqlite3_column_int64(st, 1);

		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			ops = realloc(ops, cap * sizeof(*ops));
			if (!ops) {
				fprintf(stderr, "orders: restore: out of memory\n");
				return -1;
			}
		}
		due += deadline <= now;
		twheel_prep_add_at(&ops[n++], sqlite3_column_int64(st, 0),
				   wheel_deadline(deadline));
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		db_die(s, stmt_sql[S_UNPAID]);
	for (size_t done = 0; done < n; batches++) {
		unsigned int count = n - done < RESTORE_BATCH ? n - done : RESTORE_BATCH;
		int ret = twheel_batch(s->wfd, ops + done, count);

		if (ret <= 0) {
			fprintf(stderr, "orders: restore batch: %s\n", strerror(-ret));
			return -1;
		}
		for (int i = 0; i < ret; i++)
			if (ops[done + i].result) {
				fprintf(stderr, "orders: restore %llu: %s\n",
					(unsigned long long)ops[done + i].id,
					strerror(-ops[done + i].result));
				return -1;
			}
		done += ret;
	}
	free(ops);
	sqlite3_bind_int64(s->st[S_START], 1, getpid());
	sqlite3_bind_int64(s->st[S_START], 2, now);
	sqlite3_bind_int64(s->st[S_START], 3, n);
	run(s, S_START);
	printf("orders: restored %zu unpaid orders (%zu already due) in %zu batch%s\n",
	       n, due, batches, batches == 1 ? "" : "es");
	return 0;
}

static int listen_unix(struct service *s)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (strlen(s->cfg->sock_path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "orders: socket path too long\n");
		return -1;
	}
	strcpy(sa.sun_path, s->cfg->sock_path);
	unlink(sa.sun_path);
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(s->lfd, 128)) {
		fprintf(stderr, "orders: listen on %s: %s\n", sa.sun_path, strerror(errno));
		return -1;
	}
	return 0;
}

int orders_daemon(const struct daemon_cfg *cfg)
{
	struct service *s = calloc(1, sizeof(*s));
	sigset_t mask;

	if (!s)
		return 1;
	s->cfg = cfg;
	setvbuf(stdout, NULL, _IOLBF, 0);
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	s->sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	s->ep = epoll_create1(EPOLL_CLOEXEC);
	if (s->sfd < 0 || s->ep < 0 || open_db(s) || open_wheel(s) || restore(s) ||
	    listen_unix(s) || watch(s, s->lfd) || watch(s, s->wfd) || watch(s, s->sfd))
		return 1;
	printf("orders: serving on %s, orders cancelled %llu ms after creation if unpaid\n",
	       cfg->sock_path, (unsigned long long)(cfg->timeout_ns / NSEC_PER_MSEC));

	for (;;) {
		struct epoll_event evs[64];
		int n = epoll_wait(s->ep, evs, 64, -1);

		if (n < 0 && errno != EINTR) {
			perror("orders: epoll_wait");
			return 1;
		}
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd == s->sfd) {
				printf("orders: stopping: created %llu, paid %llu, cancelled %llu, "
				       "early wake-ups %llu\n", s->created, s->paid,
				       s->cancelled, s->early_wakeups);
				sqlite3_close_v2(s->db);
				return 0;
			} else if (fd == s->lfd) {
				accept_all(s);
			} else if (fd == s->wfd) {
				if (read_expired(s))
					return 1;
			} else if (s->clients[fd].open) {
				client_read(s, fd);
			}
		}
	}
}
