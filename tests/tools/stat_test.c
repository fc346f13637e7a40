// SPDX-License-Identifier: GPL-2.0
/*
 * twheel-stat(1) against a known set of wheels: this process holds wheels
 * of different ticks, clocks and timeouts, with ids live and events
 * waiting, one shared by dup, one not set up and one with a touch table
 * that a touch has re-armed; a child holds a wheel it shares with us and
 * one of its own, opened as another user, under a name that needs
 * escaping. Every row of `--json -p PID`, `--json` and the table must
 * match /proc/PID/fdinfo of its descriptor, one row per descriptor and
 * none other; a missing module exits 1, a usage error 2. The child opens
 * its wheel through a node of its own (/dev/twheel is root's), which
 * the tool must find by device number all the same. A wheel held in a
 * pid namespace of its own is listed under the pid it has in ours.
 *
 * The tool's own source is compiled into this program, its main()
 * renamed, and run in a forked child with stdout and stderr in pipes:
 * the VM gets no second binary to place and find by path, and what runs
 * is the code that ships, byte for byte, with getopt state fresh in each
 * child. (Only its installation is not tested here.)
 */
#define main twheel_stat_main
#include "../../tools/twheel-stat.c"
#undef main

#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "twheel_test.h"
#include "kselftest_harness.h"

#define OUT_MAX		(256 * 1024)
#define CHILD_NODE	"/tmp/stat_test-twheel"
#define CHILD_UID	65534
/* A process name with what JSON must escape: quote, backslash, tab, newline. */
#define CHILD_COMM	"tw\"st\\a\tt\nx"

/* ---- running the tool ---- */

struct run {
	int status;			/* exit status, or -1 if it did not exit */
	char out[OUT_MAX];
	char err[4096];
};

/* All of @fd until EOF; what does not fit in @buf is read and dropped. */
static void slurp(int fd, char *buf, size_t size)
{
	char spill[256];
	size_t n = 0;
	ssize_t r;

	while (n < size - 1 && (r = read(fd, buf + n, size - 1 - n)) > 0)
		n += r;
	buf[n] = 0;
	while (read(fd, spill, sizeof(spill)) > 0)
		;
}

/*
 * Run twheel-stat with @args (NULL-terminated) in a child, after
 * @prepare() there if given; collect its output and exit status.
 */
static void run_stat_in(struct run *r, const char *const *args, void (*prepare)(void))
{
	char *argv[16];
	int out[2], err[2], argc = 0, status;
	pid_t pid;

	argv[argc++] = "twheel-stat";
	while (*args && argc < 15)
		argv[argc++] = (char *)*args++;
	argv[argc] = NULL;
	memset(r, 0, sizeof(*r));
	r->status = -1;
	if (pipe(out) || pipe(err))
		return;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		dup2(out[1], 1);
		dup2(err[1], 2);
		close(out[0]);
		close(out[1]);
		close(err[0]);
		close(err[1]);
		if (prepare)
			prepare();
		optind = 0;	/* glibc: start getopt afresh */
		status = twheel_stat_main(argc, argv);
		fflush(stdout);
		fflush(stderr);
		_exit(status);
	}
	close(out[1]);
	close(err[1]);
	slurp(out[0], r->out, sizeof(r->out));
	slurp(err[0], r->err, sizeof(r->err));
	close(out[0]);
	close(err[0]);
	if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status))
		r->status = WEXITSTATUS(status);
}

static void run_stat(struct run *r, const char *const *args)
{
	run_stat_in(r, args, NULL);
}

/* ---- a small JSON reader: one array of flat objects ---- */

#define MAX_ROWS	64
#define MAX_KEYS	24

struct row {
	int nkeys;
	char key[MAX_KEYS][32];
	char str[MAX_KEYS][64];		/* string values, unescaped */
	unsigned long long num[MAX_KEYS];
	int kind[MAX_KEYS];		/* 's', 'n', 't' (true), 'f' (false) */
};

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

/* A JSON string at @p into @buf; the end, or NULL if malformed. */
static const char *json_string(const char *p, char *buf, size_t size)
{
	size_t n = 0;

	if (*p++ != '"')
		return NULL;
	while (*p && *p != '"') {
		char c = *p++;

		if ((unsigned char)c < 0x20)
			return NULL;	/* control characters must be escaped */
		if (c == '\\') {
			unsigned int u;

			switch (*p++) {
			case '"': c = '"'; break;
			case '\\': c = '\\'; break;
			case '/': c = '/'; break;
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'u':
				if (sscanf(p, "%4x", &u) != 1 || u > 0x7f)
					return NULL;
				c = u;
				p += 4;
				break;
			default:
				return NULL;
			}
		}
		if (n + 1 < size)
			buf[n++] = c;
	}
	buf[n] = 0;
	return *p == '"' ? p + 1 : NULL;
}

/* Parse @s, which must be exactly one array of flat objects; rows or -1. */
static int json_rows(const char *s, struct row *rows, int max)
{
	const char *p = skip_ws(s);
	int n = 0;

	if (*p++ != '[')
		return -1;
	p = skip_ws(p);
	if (*p == ']')
		return *skip_ws(p + 1) ? -1 : 0;
	for (;;) {
		struct row *r = &rows[n];

		if (n == max || *p++ != '{')
			return -1;
		memset(r, 0, sizeof(*r));
		for (;;) {
			int k = r->nkeys;

			if (k == MAX_KEYS)
				return -1;
			p = json_string(skip_ws(p), r->key[k], sizeof(r->key[k]));
			if (!p)
				return -1;
			p = skip_ws(p);
			if (*p++ != ':')
				return -1;
			p = skip_ws(p);
			if (*p == '"') {
				p = json_string(p, r->str[k], sizeof(r->str[k]));
				if (!p)
					return -1;
				r->kind[k] = 's';
			} else if (!strncmp(p, "true", 4) || !strncmp(p, "false", 5)) {
				r->kind[k] = *p;
				p += *p == 't' ? 4 : 5;
			} else {
				char *end;

				if (*p < '0' || *p > '9')
					return -1;
				errno = 0;
				r->num[k] = strtoull(p, &end, 10);
				if (errno)
					return -1;
				p = end;
				r->kind[k] = 'n';
			}
			r->nkeys++;
			p = skip_ws(p);
			if (*p == '}')
				break;
			if (*p++ != ',')
				return -1;
		}
		n++;
		p = skip_ws(p + 1);
		if (*p == ']')
			return *skip_ws(p + 1) ? -1 : n;
		if (*p++ != ',')
			return -1;
		p = skip_ws(p);
	}
}

static int row_key(const struct row *r, const char *key)
{
	int i;

	for (i = 0; i < r->nkeys; i++)
		if (!strcmp(r->key[i], key))
			return i;
	return -1;
}

/* A numeric field, or -1 if absent or not a number. */
static long long row_num(const struct row *r, const char *key)
{
	int i = row_key(r, key);

	return i < 0 || r->kind[i] != 'n' ? -1 : (long long)r->num[i];
}

/* ---- fdinfo of any process ---- */

struct fdinfo {
	int nkeys;
	char key[32][32];
	unsigned long long val[32];
	int setup;
};

/* /proc/@pid/fdinfo/@fd: its decimal "key:\tvalue" lines; 0 or -1. */
static int fdinfo_of(pid_t pid, int fd, struct fdinfo *fi)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	f = fopen(path, "re");
	if (!f)
		return -1;
	memset(fi, 0, sizeof(*fi));
	fi->setup = 1;
	while (fgets(line, sizeof(line), f) && fi->nkeys < 32) {
		char *tab = strstr(line, ":\t"), *end;

		if (!tab)
			continue;
		*tab = 0;
		if (!strcmp(line, "setup")) {
			fi->setup = 0;
			continue;
		}
		errno = 0;
		fi->val[fi->nkeys] = strtoull(tab + 2, &end, 10);
		if (errno || end == tab + 2 || *end != '\n')
			continue;	/* pos, flags, mnt_id...: not decimal or not ours */
		snprintf(fi->key[fi->nkeys], sizeof(fi->key[0]), "%.31s", line);
		fi->nkeys++;
	}
	fclose(f);
	return 0;
}

static long long fdinfo_val(const struct fdinfo *fi, const char *key)
{
	int i;

	for (i = 0; i < fi->nkeys; i++)
		if (!strcmp(fi->key[i], key))
			return fi->val[i];
	return -1;
}

/*
 * Row @r must be descriptor @fd of @pid as its fdinfo shows it now:
 * every figure twheel-stat(1) names, present in both or in neither,
 * equal, and nothing else. Returns the number of mismatches, logged.
 */
static int row_matches(struct __test_metadata *_metadata, const struct row *r, pid_t pid,
		       int fd)
{
	struct fdinfo fi;
	int bad = 0, f, i;

	if (fdinfo_of(pid, fd, &fi)) {
		TH_LOG("no fdinfo for pid %d fd %d", pid, fd);
		return 1;
	}
	i = row_key(r, "setup");
	if (i < 0 || r->kind[i] != (fi.setup ? 't' : 'f')) {
		TH_LOG("pid %d fd %d: setup should be %s", pid, fd, fi.setup ? "true" : "false");
		bad++;
	}
	for (f = 0; f < NR_FIELDS; f++) {
		long long want = fdinfo_val(&fi, field_key[f]), got = row_num(r, field_key[f]);

		if (want != got) {
			TH_LOG("pid %d fd %d: %s is %lld in fdinfo, %lld in the JSON", pid, fd,
			       field_key[f], want, got);
			bad++;
		}
	}
	/* pid, command, fd, setup and the fields: nothing else. */
	for (i = 0; i < r->nkeys; i++) {
		for (f = 0; f < NR_FIELDS && strcmp(r->key[i], field_key[f]); f++)
			;
		if (f == NR_FIELDS && strcmp(r->key[i], "pid") && strcmp(r->key[i], "command") &&
		    strcmp(r->key[i], "fd") && strcmp(r->key[i], "setup")) {
			TH_LOG("pid %d fd %d: unexpected key %s", pid, fd, r->key[i]);
			bad++;
		}
	}
	return bad;
}

/* ---- the known wheels ---- */

enum { W_MS, W_BOOT, W_DUP, W_DUP2, W_UNSET, W_TOUCH, NR_W };

static int sync_pipe[2];

/*
 * The child: keeps the shared wheel @keep, drops the rest, becomes
 * another user with an awkward name, opens a wheel of its own through
 * CHILD_NODE, says which fd it got and waits to be killed, or to die
 * with its parent (a failed setup runs no teardown, and a wheel left
 * open would pin the module).
 */
static void child_main(int keep)
{
	int fd, i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (i = 3; i < 256; i++)
		if (i != keep && i != sync_pipe[1])
			close(i);
	prctl(PR_SET_NAME, CHILD_COMM);
	if (setresgid(CHILD_UID, CHILD_UID, CHILD_UID) || setresuid(CHILD_UID, CHILD_UID, CHILD_UID))
		_exit(1);
	fd = open(CHILD_NODE, O_RDWR);
	if (fd < 0 || twheel_setup(fd, 10 * NSEC_PER_MSEC, NSEC_PER_SEC, CLOCK_MONOTONIC, 0) ||
	    twheel_add(fd, 7, 3600 * NSEC_PER_SEC))
		_exit(2);
	if (write(sync_pipe[1], &fd, sizeof(fd)) != sizeof(fd))
		_exit(3);
	for (;;)
		pause();
}

FIXTURE(wheels) {
	int fd[NR_W];
	pid_t child;
	int child_fd;		/* the child's own wheel */
	struct twheel_touch touch;
	char comm[32];
};

FIXTURE_SETUP(wheels)
{
	struct twheel_setup_args ta = {
		.tick_ns = 2 * NSEC_PER_MSEC,
		.default_timeout_ns = 5 * NSEC_PER_MSEC,
		.clockid = CLOCK_MONOTONIC,
		.flags = TWHEEL_SETUPF_TOUCH,
		.touch_slots = 100,
	};
	unsigned int maj, min;
	struct twheel_op op;
	char dev[32];
	uint64_t until;
	int i;

	if (geteuid())
		SKIP(return, "needs root: the child becomes another user");
	/* A node anyone may open, for the child: the same device, another name. */
	ASSERT_LT(0, read_file("/sys/class/misc/twheel/dev", dev, sizeof(dev)));
	ASSERT_EQ(2, sscanf(dev, "%u:%u", &maj, &min));
	unlink(CHILD_NODE);
	if (mknod(CHILD_NODE, S_IFCHR | 0666, makedev(maj, min)) || chmod(CHILD_NODE, 0666))
		SKIP(return, "cannot make a device node in /tmp: %s", strerror(errno));

	/* Tick 1 ms, monotonic, 30 ms: three ids live for an hour, two events waiting. */
	self->fd[W_MS] = wheel_new(0, NSEC_PER_MSEC, 30 * NSEC_PER_MSEC, 1000);
	ASSERT_LE(0, self->fd[W_MS]);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, twheel_add(self->fd[W_MS], 100 + i, 3600 * NSEC_PER_SEC));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, twheel_add(self->fd[W_MS], 200 + i, 0));
	ASSERT_EQ(2, wait_waiting(self->fd[W_MS], 2));

	/* Tick 100 us, boottime, 1 s, the module's cap. */
	self->fd[W_BOOT] = twheel_open(0);
	ASSERT_LE(0, self->fd[W_BOOT]);
	ASSERT_EQ(0, twheel_setup(self->fd[W_BOOT], TWHEEL_TICK_MIN_NS, NSEC_PER_SEC,
				  CLOCK_BOOTTIME, 0));
	ASSERT_EQ(0, twheel_add(self->fd[W_BOOT], 1, 3600 * NSEC_PER_SEC));

	/* Tick 1 s, an hour: two descriptors of one wheel, and the child's third. */
	self->fd[W_DUP] = wheel_new(0, NSEC_PER_SEC, 3600 * NSEC_PER_SEC, 0);
	ASSERT_LE(0, self->fd[W_DUP]);
	ASSERT_EQ(0, twheel_add(self->fd[W_DUP], 5, TWHEEL_TIMEOUT_DEFAULT));
	self->fd[W_DUP2] = dup(self->fd[W_DUP]);
	ASSERT_LE(0, self->fd[W_DUP2]);

	self->fd[W_UNSET] = twheel_open(0);
	ASSERT_LE(0, self->fd[W_UNSET]);

	/*
	 * A touch table: id 1 bound to slot 3 and touched, so that its
	 * deadline is re-armed once and then it expires; id 2 lives on.
	 */
	self->fd[W_TOUCH] = twheel_open(0);
	ASSERT_LE(0, self->fd[W_TOUCH]);
	ASSERT_EQ(0, twheel_setup_params(self->fd[W_TOUCH], &ta));
	ASSERT_EQ(0, twheel_touch_map(self->fd[W_TOUCH], ta.touch_slots, CLOCK_MONOTONIC,
				      &self->touch));
	twheel_prep_add(&op, 1, 20 * NSEC_PER_MSEC);
	twheel_prep_bind(&op, 3);
	ASSERT_EQ(0, twheel_submit_op(self->fd[W_TOUCH], &op));
	ASSERT_EQ(0, twheel_add(self->fd[W_TOUCH], 2, 3600 * NSEC_PER_SEC));
	sleep_ns(5 * NSEC_PER_MSEC);
	twheel_touch(&self->touch, 3);
	/* The re-arm and the expiry are done by whoever looks: a poll that does not wait. */
	until = mono_ns() + 10 * NSEC_PER_SEC;
	for (;;) {
		dev_look(self->fd[W_TOUCH]);
		if ((fdinfo_get(self->fd[W_TOUCH], "touch_rearms") >= 1 &&
		     fdinfo_get(self->fd[W_TOUCH], "events_waiting") >= 1) || mono_ns() >= until)
			break;
		sleep_ns(5 * NSEC_PER_MSEC);
	}
	ASSERT_EQ(1, fdinfo_get(self->fd[W_TOUCH], "touch_rearms"));
	ASSERT_EQ(1, fdinfo_get(self->fd[W_TOUCH], "events_waiting"));

	ASSERT_EQ(0, pipe(sync_pipe));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (self->child == 0)
		child_main(self->fd[W_DUP]);
	close(sync_pipe[1]);
	ASSERT_EQ(sizeof(int), read(sync_pipe[0], &self->child_fd, sizeof(int)))
		TH_LOG("the child could not open and set up a wheel through %s", CHILD_NODE);
	close(sync_pipe[0]);
	unlink(CHILD_NODE);
	ASSERT_LT(0, read_file("/proc/self/comm", self->comm, sizeof(self->comm)));
	self->comm[strcspn(self->comm, "\n")] = 0;
}

FIXTURE_TEARDOWN(wheels)
{
	int i;

	unlink(CHILD_NODE);
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	if (self->touch.slots)
		twheel_touch_unmap(&self->touch);
	for (i = 0; i < NR_W; i++)
		if (self->fd[i] >= 0)
			close(self->fd[i]);
}

static const char *pid_arg(pid_t pid)
{
	static char buf[4][16];
	static int n;

	snprintf(buf[n % 4], sizeof(buf[0]), "%d", pid);
	return buf[n++ % 4];
}

/* Which of our descriptors is @fd, or -1. */
static int which(const int *fds, int fd)
{
	int i;

	for (i = 0; i < NR_W; i++)
		if (fds[i] == fd)
			return i;
	return -1;
}

TEST_F(wheels, json_of_this_process_matches_fdinfo)
{
	static struct run r;
	static struct row rows[MAX_ROWS];
	const char *args[] = { "--json", "-p", pid_arg(getpid()), NULL };
	int n, i, seen[NR_W] = { 0 };
	long long wheel[NR_W];

	run_stat(&r, args);
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	EXPECT_STREQ("", r.err);
	n = json_rows(r.out, rows, MAX_ROWS);
	ASSERT_EQ(NR_W, n) TH_LOG("output: %s", r.out);
	for (i = 0; i < n; i++) {
		long long fd = row_num(&rows[i], "fd");
		int w = which(self->fd, fd), k = row_key(&rows[i], "command");

		ASSERT_LE(0, w) TH_LOG("row %d: fd %lld is none of ours", i, fd);
		seen[w]++;
		EXPECT_EQ(getpid(), row_num(&rows[i], "pid"));
		ASSERT_LE(0, k);
		EXPECT_STREQ(self->comm, rows[i].str[k]);
		EXPECT_EQ(0, row_matches(_metadata, &rows[i], getpid(), fd));
		wheel[w] = row_num(&rows[i], "wheel");
	}
	for (i = 0; i < NR_W; i++) {
		int times = seen[i], fd = self->fd[i];

		EXPECT_EQ(1, times) TH_LOG("descriptor %d listed %d times", fd, times);
	}
	/* dup shares the wheel; every other descriptor is a wheel of its own. */
	EXPECT_EQ(wheel[W_DUP], wheel[W_DUP2]);
	for (i = 0; i < NR_W; i++) {
		int j;

		for (j = i + 1; j < NR_W; j++) {
			if (!(i == W_DUP && j == W_DUP2)) {
				EXPECT_NE(wheel[i], wheel[j]);
			}
		}
	}
	/* The figures the fixture made, which the rows matched. */
	EXPECT_EQ(3, fdinfo_get(self->fd[W_MS], "live"));
	EXPECT_EQ(2, fdinfo_get(self->fd[W_MS], "events_waiting"));
	EXPECT_EQ(CLOCK_BOOTTIME, fdinfo_get(self->fd[W_BOOT], "clockid"));
	EXPECT_EQ(100, fdinfo_get(self->fd[W_TOUCH], "touch_slots"));
	EXPECT_EQ(1, fdinfo_get(self->fd[W_TOUCH], "touch_rearms"));
}

TEST_F(wheels, json_of_every_process_has_the_childs_wheels)
{
	static struct run r;
	static struct row rows[MAX_ROWS];
	const char *args[] = { "--json", NULL };
	int n, i, mine = 0, childs = 0;
	long long shared = -1, dup_wheel = fdinfo_get(self->fd[W_DUP], "wheel");

	run_stat(&r, args);
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	n = json_rows(r.out, rows, MAX_ROWS);
	ASSERT_LE(NR_W + 2, n) TH_LOG("output: %s", r.out);
	for (i = 0; i < n; i++) {
		long long pid = row_num(&rows[i], "pid"), fd = row_num(&rows[i], "fd");
		int k = row_key(&rows[i], "command");

		ASSERT_LE(0, k);
		if (pid == getpid()) {
			mine++;
			EXPECT_LE(0, which(self->fd, fd));
			EXPECT_EQ(0, row_matches(_metadata, &rows[i], pid, fd));
		} else if (pid == self->child) {
			childs++;
			EXPECT_STREQ(CHILD_COMM, rows[i].str[k]);
			EXPECT_EQ(0, row_matches(_metadata, &rows[i], pid, fd));
			if (fd == self->fd[W_DUP]) {
				shared = row_num(&rows[i], "wheel");
				/* Charged to whoever opened it, not to who holds it. */
				EXPECT_EQ(0, row_num(&rows[i], "uid"));
			} else {
				EXPECT_EQ(self->child_fd, fd);
				EXPECT_EQ(CHILD_UID, row_num(&rows[i], "uid"));
				EXPECT_EQ(1, row_num(&rows[i], "live"));
			}
		}
	}
	EXPECT_EQ(NR_W, mine);
	EXPECT_EQ(2, childs);
	EXPECT_EQ(dup_wheel, shared);
}

TEST_F(wheels, json_of_the_child_lists_only_its_wheels)
{
	static struct run r;
	static struct row rows[MAX_ROWS];
	const char *args[] = { "-j", "--pid", pid_arg(self->child), NULL };
	int n, i;

	run_stat(&r, args);
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	n = json_rows(r.out, rows, MAX_ROWS);
	ASSERT_EQ(2, n) TH_LOG("output: %s", r.out);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(self->child, row_num(&rows[i], "pid"));
		EXPECT_EQ(0, row_matches(_metadata, &rows[i], self->child,
					 row_num(&rows[i], "fd")));
	}
}

/* The table's duration column for @ns as twheel-stat(1) shows the round values we use. */
static const char *dur(unsigned long long ns)
{
	switch (ns) {
	case 100000ULL: return "100us";
	case 1000000ULL: return "1ms";
	case 2000000ULL: return "2ms";
	case 5000000ULL: return "5ms";
	case 30000000ULL: return "30ms";
	case 1000000000ULL: return "1s";
	case 3600000000000ULL: return "1h";
	default: return "?";
	}
}

TEST_F(wheels, table_of_this_process_matches_fdinfo)
{
	static const char header[] =
		"    PID COMMAND           FD  WHEEL    UID    TICK TIMEOUT CLOCK       LIVE    WAITING    EXPIRED LATE_MAX    TOUCH";
	static struct run r;
	const char *args[] = { "-p", pid_arg(getpid()), NULL };
	char *line, *save = NULL;
	int rows = 0, seen[NR_W] = { 0 }, i;

	run_stat(&r, args);
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	line = strtok_r(r.out, "\n", &save);
	ASSERT_NE(NULL, line);
	EXPECT_STREQ(header, line);
	while ((line = strtok_r(NULL, "\n", &save))) {
		char comm[32], tick[16], tmo[16], clk[16], late[16], touch[16];
		long long pid, fd, wheel, uid, live, waiting, expired;
		struct fdinfo fi;
		int w;

		rows++;
		ASSERT_LE(5, sscanf(line, "%lld %31s %lld %lld %lld %15s %15s %15s %lld %lld %lld %15s %15s",
				    &pid, comm, &fd, &wheel, &uid, tick, tmo, clk, &live, &waiting,
				    &expired, late, touch)) TH_LOG("row: %s", line);
		w = which(self->fd, fd);
		ASSERT_LE(0, w) TH_LOG("row: %s", line);
		seen[w]++;
		EXPECT_EQ(getpid(), pid);
		EXPECT_STREQ(self->comm, comm);
		ASSERT_EQ(0, fdinfo_of(getpid(), fd, &fi));
		EXPECT_EQ(fdinfo_val(&fi, "wheel"), wheel);
		EXPECT_EQ(fdinfo_val(&fi, "uid"), uid);
		if (!fi.setup) {
			EXPECT_NE(NULL, strstr(line, "(not set up)")) TH_LOG("row: %s", line);
			continue;
		}
		EXPECT_STREQ(dur(fdinfo_val(&fi, "tick_ns")), tick);
		EXPECT_STREQ(dur(fdinfo_val(&fi, "default_timeout_ns")), tmo);
		EXPECT_STREQ(fdinfo_val(&fi, "clockid") == CLOCK_BOOTTIME ? "boot" : "mono", clk);
		EXPECT_EQ(fdinfo_val(&fi, "live"), live);
		EXPECT_EQ(fdinfo_val(&fi, "events_waiting"), waiting);
		EXPECT_EQ(fdinfo_val(&fi, "expired_total"), expired);
		if (fdinfo_val(&fi, "touch_slots")) {
			EXPECT_EQ(fdinfo_val(&fi, "touch_slots"), strtoll(touch, NULL, 10));
		} else {
			EXPECT_STREQ("-", touch);
		}
	}
	EXPECT_EQ(NR_W, rows);
	for (i = 0; i < NR_W; i++) {
		int times = seen[i];

		EXPECT_EQ(1, times);
	}
}

/* A process name can hold any byte but NUL: none may reach the table raw. */
TEST_F(wheels, table_shows_each_descriptor_on_one_line_whatever_the_name)
{
	static struct run r;
	const char *args[] = { "-p", pid_arg(self->child), NULL };
	char *line, *save = NULL;
	int rows = 0;

	run_stat(&r, args);
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	line = strtok_r(r.out, "\n", &save);
	ASSERT_NE(NULL, line);
	while ((line = strtok_r(NULL, "\n", &save))) {
		long long pid;

		rows++;
		EXPECT_EQ(1, sscanf(line, "%lld", &pid)) TH_LOG("row: %s", line);
		EXPECT_EQ(self->child, pid);
		EXPECT_EQ(NULL, strchr(line, '\t')) TH_LOG("row: %s", line);
		EXPECT_NE(NULL, strstr(line, " tw\"st\\a?t?x ")) TH_LOG("row: %s", line);
	}
	EXPECT_EQ(2, rows) TH_LOG("output: %s", r.out);
}

TEST(a_process_without_wheels_lists_none)
{
	static struct run r;
	static struct row rows[MAX_ROWS];
	const char *json[] = { "--json", "-p", "1", NULL };
	const char *table[] = { "-p", "1", NULL };
	int fd = wheel_new(0, NSEC_PER_MSEC, 0, 0);

	/* Ours is not init's: pid 1 has no wheel. */
	ASSERT_LE(0, fd);
	run_stat(&r, json);
	EXPECT_EQ(0, r.status);
	EXPECT_EQ(0, json_rows(r.out, rows, MAX_ROWS)) TH_LOG("output: %s", r.out);
	EXPECT_STREQ("[]\n", r.out);
	run_stat(&r, table);
	EXPECT_EQ(0, r.status);
	/* The header alone. */
	EXPECT_EQ(0, strncmp(r.out, "    PID COMMAND", 15));
	EXPECT_EQ(strlen(r.out) - 1, (size_t)(strchr(r.out, '\n') - r.out)) TH_LOG("output: %s", r.out);
	close(fd);
}

/*
 * A process in a pid namespace of its own (a container's init, pid 1 in
 * there) cannot hide its wheel from the tool run in ours: it is listed
 * under the pid it has here, once, and its row matches its fdinfo.
 */
TEST(wheel_in_a_pid_namespace_is_listed_under_our_pid)
{
	static struct run r;
	static struct row rows[MAX_ROWS];
	const char *args[] = { "--json", NULL };
	/* pid here, pid in its namespace, its wheel's fd: one write, from the helper. */
	int pfd[2], info[3], n, i, found = 0;
	pid_t helper, inner;

	ASSERT_EQ(0, pipe(pfd));
	helper = fork();
	ASSERT_LE(0, helper);
	if (helper == 0) {
		int cfd[2];

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (pipe(cfd) || unshare(CLONE_NEWPID))
			_exit(4);
		info[0] = fork();
		if (info[0] == 0) {
			int fd = wheel_new(0, 10 * NSEC_PER_MSEC, NSEC_PER_SEC, 0);

			info[1] = getpid();
			info[2] = fd;
			if (fd < 0 || twheel_add(fd, 1, 3600 * NSEC_PER_SEC) ||
			    write(cfd[1], &info[1], 2 * sizeof(int)) != 2 * sizeof(int))
				_exit(2);
			for (;;)
				pause();
		}
		if (info[0] < 0 || read(cfd[0], &info[1], 2 * sizeof(int)) != 2 * sizeof(int) ||
		    write(pfd[1], info, sizeof(info)) != sizeof(info))
			_exit(3);
		waitpid(info[0], NULL, 0);
		_exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], info, sizeof(info)) != sizeof(info)) {
		waitpid(helper, NULL, 0);
		SKIP(return, "no wheel in a pid namespace (unshare(CLONE_NEWPID) needs CAP_SYS_ADMIN)");
	}
	close(pfd[0]);
	inner = info[0];
	EXPECT_EQ(1, info[1]);

	run_stat(&r, args);
	EXPECT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	n = json_rows(r.out, rows, MAX_ROWS);
	EXPECT_LE(1, n) TH_LOG("output: %s", r.out);
	for (i = 0; i < n; i++) {
		if (row_num(&rows[i], "pid") != inner)
			continue;
		found++;
		EXPECT_EQ(info[2], row_num(&rows[i], "fd"));
		EXPECT_EQ(1, row_num(&rows[i], "live"));
		EXPECT_EQ(0, row_matches(_metadata, &rows[i], inner, info[2]));
	}
	EXPECT_EQ(1, found) TH_LOG("pid %d (1 in its namespace) listed %d times", inner, found);
	if (inner > 1)
		kill(inner, SIGKILL);
	waitpid(helper, NULL, 0);
}

TEST(a_pid_that_does_not_exist_lists_none)
{
	static struct run r;
	const char *args[] = { "--json", "-p", "4194303", NULL };

	if (!kill(4194303, 0))
		SKIP(return, "pid 4194303 exists");
	run_stat(&r, args);
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("[]\n", r.out);
}

TEST(usage_errors_exit_2_with_usage_on_stderr)
{
	static const char *const cases[][4] = {
		{ "-p", "0", NULL }, { "-p", "abc", NULL }, { "-p", "-3", NULL },
		{ "-p", "12abc", NULL }, { "-p", "99999999999999999999", NULL },
		{ "-p", "", NULL }, { "-p", NULL }, { "--bogus", NULL }, { "-x", NULL },
		{ "extra", NULL }, { "--json", "extra", NULL },
	};
	static struct run r;
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		run_stat(&r, cases[i]);
		EXPECT_EQ(2, r.status) TH_LOG("twheel-stat %s %s: exit %d, stdout: %s", cases[i][0],
					     cases[i][1] ? cases[i][1] : "", r.status, r.out);
		EXPECT_STREQ("", r.out) TH_LOG("twheel-stat %s", cases[i][0]);
		EXPECT_NE(0, r.err[0]) TH_LOG("twheel-stat %s: nothing on stderr", cases[i][0]);
	}
}

TEST(help_exits_0_with_usage_on_stdout)
{
	static struct run r;
	const char *args[] = { "--help", NULL };

	run_stat(&r, args);
	EXPECT_EQ(0, r.status);
	EXPECT_EQ(0, strncmp(r.out, "usage: twheel-stat", 18)) TH_LOG("stdout: %s", r.out);
	EXPECT_STREQ("", r.err);
}

/*
 * Without the module there is no /sys/class/misc/twheel. Unloading it
 * would take it from every other test; hiding it does the same for the
 * tool alone: an empty tmpfs over /sys/class/misc, in a mount namespace
 * of the tool's process only.
 */
static void hide_the_module(void)
{
	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("none", "/sys/class/misc", "tmpfs", 0, NULL))
		_exit(99);
}

TEST(without_the_module_exits_1)
{
	static struct run r;
	const char *args[] = { "--json", NULL };

	run_stat_in(&r, args, hide_the_module);
	if (r.status == 99)
		SKIP(return, "cannot hide /sys/class/misc (needs root and mount namespaces)");
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("", r.out);
	EXPECT_NE(NULL, strstr(r.err, "not loaded")) TH_LOG("stderr: %s", r.err);
}

TEST_HARNESS_MAIN
