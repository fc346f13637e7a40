// SPDX-License-Identifier: MIT
/*
 * The judge of a restart, and a stand-in for the service manager.
 *
 * fdstore_judge() takes the daemon's own records (the ids it added with
 * their deadlines, every expiry it read and which process read it, its
 * starts and stops) and a dump of the wheel itself (TWHEEL_IOC_DUMP on a
 * copy of the daemon's wheel fd, taken from the running daemon with
 * pidfd_getfd(2)), and holds every id to this: still live in the wheel
 * with its original deadline, or expired and read exactly once, never
 * early; none lost, none twice. It waits first for the test window to
 * pass, so that no id expires while it looks.
 *
 * fdstore_selfcheck() runs the daemon the way systemd does, for a
 * machine without systemd (the test VM): a notify socket ($NOTIFY_SOCKET)
 * that takes READY=1 and FDSTORE=1 with the fd, a restart by SIGTERM,
 * and the new process started with the stored fd as fd 3 and
 * LISTEN_PID, LISTEN_FDS, LISTEN_FDNAMES set, as sd_listen_fds(3) says.
 * The server test does the same with systemd itself (`systemctl restart`).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <twheel.h>

#include "fdstore.h"

#define CHECK_DIR	"/tmp/fdstore-check"
#define MAX_STARTS	16

/*
 * A wheel's fdinfo has its settings (tick_ns:) and serial (wheel:). The
 * fd's path is no proof: seen from another mount namespace (the
 * daemon's unit has its own) /dev/twheel may read differently.
 */
static bool is_wheel(int dir, const char *name)
{
	int fd = openat(dir, name, O_RDONLY | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	bool tick = false, serial = false;
	char line[128];

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		tick |= !strncmp(line, "tick_ns:", 8);
		serial |= !strncmp(line, "wheel:", 6);
	}
	fclose(f);
	return tick && serial;
}

int wheel_of_pid(int pid)
{
	char path[64];
	struct dirent *de;
	int fd = -1, pidfd;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo", pid);
	d = opendir(path);
	if (!d) {
		perror(path);
		return -1;
	}
	while (fd < 0 && (de = readdir(d)))
		if (de->d_name[0] != '.' && is_wheel(dirfd(d), de->d_name))
			fd = atoi(de->d_name);
	closedir(d);
	if (fd < 0) {
		fprintf(stderr, "fdstore: process %d holds no wheel\n", pid);
		return -1;
	}
	pidfd = pidfd_open(pid, 0);
	if (pidfd < 0 || (fd = pidfd_getfd(pidfd, fd, 0)) < 0) {
		perror("fdstore: pidfd_getfd");
		return -1;
	}
	close(pidfd);
	return fd;
}

struct start {
	int pid;
	uint64_t at;		/* CLOCK_MONOTONIC */
	long long wheel;	/* fdinfo's serial of the wheel */
	int adopted;
};

struct records {
	uint64_t nr_ids;
	uint64_t *deadline;	/* by id, 1..nr_ids */
	unsigned int *reads;	/* how many times each id's expiry was read */
	bool *live;
	struct start starts[MAX_STARTS];
	unsigned int nr_starts;
	unsigned long long early, wrong, waited, read_by_first, read_later;
};

static int read_added(int dir, struct records *r)
{
	int fd = openat(dir, "added", O_RDONLY | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	unsigned long long id, dl;
	size_t cap = 0;

	if (!f) {
		perror("fdstore: added");
		return -1;
	}
	while (fscanf(f, "%llu %llu", &id, &dl) == 2) {
		if (id != r->nr_ids + 1) {
			fprintf(stderr, "fdstore: added: id %llu out of order\n", id);
			return -1;
		}
		if (r->nr_ids + 1 >= cap) {
			cap = cap ? 2 * cap : 65536;
			r->deadline = realloc(r->deadline, cap * sizeof(*r->deadline));
			if (!r->deadline)
				return -1;
		}
		r->deadline[++r->nr_ids] = dl;
	}
	fclose(f);
	r->reads = calloc(r->nr_ids + 1, sizeof(*r->reads));
	r->live = calloc(r->nr_ids + 1, sizeof(*r->live));
	return r->nr_ids && r->reads && r->live ? 0 : -1;
}

static int read_log(int dir, struct records *r)
{
	int fd = openat(dir, "log", O_RDONLY | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	char line[256];

	if (!f) {
		perror("fdstore: log");
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		struct start s;
		unsigned long long at;

		if (sscanf(line, "start pid=%d mono_ns=%llu wheel=%lld adopted=%d",
			   &s.pid, &at, &s.wheel, &s.adopted) == 4 &&
		    r->nr_starts < MAX_STARTS) {
			s.at = at;
			r->starts[r->nr_starts++] = s;
		}
	}
	fclose(f);
	return 0;
}

static const struct start *start_of(const struct records *r, int pid)
{
	for (unsigned int i = 0; i < r->nr_starts; i++)
		if (r->starts[i].pid == pid)
			return &r->starts[i];
	return NULL;
}

static int read_expired(int dir, struct records *r)
{
	int fd = openat(dir, "expired", O_RDONLY | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	unsigned long long id, dl, ex, at;
	int pid;

	if (!f) {
		perror("fdstore: expired");
		return -1;
	}
	while (fscanf(f, "%llu %llu %llu %llu %d", &id, &dl, &ex, &at, &pid) == 5) {
		const struct start *s = start_of(r, pid);

		if (!id || id > r->nr_ids || dl != r->deadline[id] || !s) {
			complain("fdstore: expiry of id %llu (deadline %llu, read by "
				"%d) matches nothing added\n", id, dl, pid);
			r->wrong++;
			continue;
		}
		r->reads[id]++;
		if (ex < dl) {
			complain("fdstore: id %llu expired %llu ns early\n", id, dl - ex);
			r->early++;
		}
		if (s == &r->starts[0])
			r->read_by_first++;
		else
			r->read_later++;
		/* Expired before its reader started: it waited in the kept wheel. */
		r->waited += ex < s->at;
	}
	fclose(f);
	return 0;
}

/*
 * Every live id of the wheel, in bounded calls; from the start again if the
 * wheel's id index takes a new key meanwhile. Returns how many.
 */
static long long dump(int wfd, struct records *r)
{
	struct twheel_dump_entry e[4096];
	uint64_t cursor = 0;
	long long n = 0;

	while (cursor != TWHEEL_DUMP_END) {
		int got = twheel_dump(wfd, e, 4096, &cursor);

		if (got == -ESTALE) {
			memset(r->live, 0, (r->nr_ids + 1) * sizeof(*r->live));
			cursor = 0;
			n = 0;
			continue;
		}
		if (got < 0) {
			complain("fdstore: dump: %s\n", strerror(-got));
			return -1;
		}
		for (int i = 0; i < got; i++, n++) {
			uint64_t id = e[i].id;

			if (!id || id > r->nr_ids || r->live[id] ||
			    e[i].deadline_ns != r->deadline[id]) {
				complain("fdstore: dump lists id %llu (deadline %llu): "
					"not added so, or listed twice\n",
					(unsigned long long)id,
					(unsigned long long)e[i].deadline_ns);
				r->wrong++;
				continue;
			}
			r->live[id] = true;
		}
	}
	return n;
}

int fdstore_judge(const char *state_dir, int wfd)
{
	struct records r = { 0 };
	unsigned long long kept = 0, once = 0, lost = 0, twice = 0;
	uint64_t window_end = 0, now = mono_now();
	long long live, nr_dumped;
	bool same_wheel = true, ok;
	int dir = open(state_dir, O_DIRECTORY | O_CLOEXEC);

	if (dir < 0 || read_added(dir, &r)) {
		fprintf(stderr, "fdstore: no records in %s\n", state_dir);
		return 1;
	}
	/* Wait out the window (ids due within 10 min of now), then the reader. */
	for (uint64_t id = 1; id <= r.nr_ids; id++)
		if (r.deadline[id] < now + 600 * NSEC_PER_SEC && r.deadline[id] > window_end)
			window_end = r.deadline[id];
	if (window_end + 2 * NSEC_PER_SEC > now) {
		printf("fdstore: waiting %.1f s for the last ids of the window to expire\n",
		       (window_end + 2 * NSEC_PER_SEC - now) / 1e9);
		sleep_ns(window_end + 2 * NSEC_PER_SEC - now);
	}
	/*
	 * The expiry is done by whoever looks at the wheel: look (a poll
	 * that does not wait, which takes nothing) before each count, so
	 * that what is due is expired and counted, and quiet means that the
	 * daemon has read it.
	 */
	for (int quiet = 0, tries = 0; quiet < 2 && tries < 120; tries++) {
		struct pollfd look = { .fd = wfd, .events = POLLIN };

		poll(&look, 1, 0);
		quiet = fdinfo_value(wfd, "events_waiting") == 0 ? quiet + 1 : 0;
		sleep_ns(500 * NSEC_PER_MSEC);
	}
	if (read_log(dir, &r) || read_expired(dir, &r))
		return 1;
	nr_dumped = dump(wfd, &r);
	live = fdinfo_value(wfd, "live");
	if (nr_dumped < 0)
		return 1;

	for (uint64_t id = 1; id <= r.nr_ids; id++) {
		if (r.live[id] && !r.reads[id]) {
			kept++;
			continue;
		}
		if (!r.live[id] && r.reads[id] == 1) {
			once++;
			continue;
		}
		if (!r.live[id] && !r.reads[id])
			lost++;
		else
			twice++;
		if (lost + twice <= 5)
			fprintf(stderr, "fdstore: id %llu: %s, its expiry read %u times\n",
				(unsigned long long)id, r.live[id] ? "live" : "gone",
				r.reads[id]);
	}
	for (unsigned int i = 1; i < r.nr_starts; i++)
		same_wheel &= r.starts[i].adopted && r.starts[i].wheel == r.starts[0].wheel;
	same_wheel &= r.nr_starts >= 2 && !r.starts[0].adopted;

	ok = !lost && !twice && !r.early && !r.wrong && same_wheel && kept && once &&
	     r.waited && r.read_later && live == nr_dumped;
	printf("fdstore: %u starts of the daemon, the later ones %s; %lld ids live "
	       "(dump) of %lld (fdinfo)\n", r.nr_starts,
	       same_wheel ? "on the first one's wheel" : "NOT all on the first one's wheel",
	       nr_dumped, live);
	printf("fdstore: expiries read by the first process %llu, by later ones %llu, "
	       "of which %llu expired before their reader started (waited in the kept "
	       "wheel)\n", r.read_by_first, r.read_later, r.waited);
	printf("restart: double=%llu early=%llu wrong=%llu same_wheel=%s waited=%llu\n",
	       twice, r.early, r.wrong, same_wheel ? "yes" : "no", r.waited);
	printf("%sok 1 fdstore: every id kept or expired once across restarts\n",
	       ok ? "" : "not ");
	printf("restart: ids=%llu kept=%llu expired_once=%llu lost=%llu\n",
	       (unsigned long long)r.nr_ids, kept, once, lost);
	return ok ? 0 : 1;
}

/* ---- the stand-in service manager ---- */

struct manager {
	const char *self;
	const struct daemon_cfg *cfg;
	int notify;		/* our end of $NOTIFY_SOCKET */
	int stored;		/* the fd store: one fd, named "wheel" */
	pid_t pid;
};

static int start(struct manager *m)
{
	char populate[32], window[32], linger[32], tick[32];

	snprintf(populate, sizeof(populate), "%u", m->cfg->populate);
	snprintf(window, sizeof(window), "%llu",
		 (unsigned long long)(m->cfg->window_ns / NSEC_PER_SEC));
	snprintf(linger, sizeof(linger), "%llu",
		 (unsigned long long)(m->cfg->linger_ns / NSEC_PER_MSEC));
	snprintf(tick, sizeof(tick), "%llu",
		 (unsigned long long)(m->cfg->tick_ns / NSEC_PER_MSEC));
	m->pid = fork();
	if (m->pid < 0)
		return -1;
	if (m->pid)
		return 0;
	/* Its stdout goes to a journal, as systemd's does. */
	int journal = open(CHECK_DIR "/journal", O_WRONLY | O_CREAT | O_APPEND, 0644);

	if (journal < 0 || dup2(journal, 1) != 1)
		_exit(127);
	setenv("NOTIFY_SOCKET", CHECK_DIR "/notify", 1);
	if (m->stored >= 0) {
		char pid[16];

		/* sd_listen_fds(3): passed fds from 3 on, not close-on-exec. */
		if (m->stored == 3)
			fcntl(3, F_SETFD, 0);
		else if (dup2(m->stored, 3) != 3)
			_exit(127);
		snprintf(pid, sizeof(pid), "%d", getpid());
		setenv("LISTEN_PID", pid, 1);
		setenv("LISTEN_FDS", "1", 1);
		setenv("LISTEN_FDNAMES", WHEEL_FD_NAME, 1);
	}
	execl(m->self, "fdstore", "daemon", "--state", CHECK_DIR, "--populate", populate,
	      "--window", window, "--linger", linger, "-T", tick, (char *)NULL);
	_exit(127);
}

/* Take notifications until READY=1; keep a stored fd. */
static int wait_ready(struct manager *m)
{
	uint64_t until = mono_now() + 300 * NSEC_PER_SEC;

	while (mono_now() < until) {
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(sizeof(int) * 4)];
		} u;
		char msg[512];
		struct iovec iov = { .iov_base = msg, .iov_len = sizeof(msg) - 1 };
		struct msghdr mh = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
		};
		struct pollfd pfd = { .fd = m->notify, .events = POLLIN };
		struct cmsghdr *c;
		ssize_t n;

		if (waitpid(m->pid, NULL, WNOHANG) == m->pid) {
			fprintf(stderr, "fdstore: the daemon died before READY=1\n");
			return -1;
		}
		if (poll(&pfd, 1, 1000) <= 0)
			continue;
		n = recvmsg(m->notify, &mh, MSG_CMSG_CLOEXEC);
		if (n < 0)
			continue;
		msg[n] = 0;
		for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			int fd;

			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
				continue;
			memcpy(&fd, CMSG_DATA(c), sizeof(fd));
			if (strstr(msg, "FDSTORE=1") && strstr(msg, "FDNAME=" WHEEL_FD_NAME) &&
			    m->stored < 0)
				m->stored = fd;
			else
				close(fd);
		}
		if (strstr(msg, "READY=1"))
			return 0;
	}
	fprintf(stderr, "fdstore: no READY=1 from the daemon\n");
	return -1;
}

static int stop(struct manager *m)
{
	int status;

	kill(m->pid, SIGTERM);
	if (waitpid(m->pid, &status, 0) != m->pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		fprintf(stderr, "fdstore: the daemon failed (status %#x)\n", status);
		return -1;
	}
	return 0;
}

int fdstore_selfcheck(const char *self, const struct daemon_cfg *cfg,
		      uint64_t restart_after_ns)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = CHECK_DIR "/notify" };
	struct manager m = { .self = self, .cfg = cfg, .stored = -1 };
	int ret;

	mkdir(CHECK_DIR, 0700);
	unlink(CHECK_DIR "/notify");
	unlink(CHECK_DIR "/added");
	unlink(CHECK_DIR "/expired");
	unlink(CHECK_DIR "/log");
	unlink(CHECK_DIR "/journal");
	m.notify = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (m.notify < 0 || bind(m.notify, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("fdstore: notify socket");
		return 1;
	}
	printf("fdstore: a stand-in service manager starts the daemon with %u ids "
	       "(40%% due within %llu s), restarts it after %llu s (it lingers "
	       "%llu ms), then judges\n", cfg->populate,
	       (unsigned long long)(cfg->window_ns / NSEC_PER_SEC),
	       (unsigned long long)(restart_after_ns / NSEC_PER_SEC),
	       (unsigned long long)(cfg->linger_ns / NSEC_PER_MSEC));
	if (start(&m) || wait_ready(&m))
		return 1;
	if (m.stored < 0) {
		fprintf(stderr, "fdstore: the daemon stored no fd named " WHEEL_FD_NAME "\n");
		return 1;
	}
	sleep_ns(restart_after_ns);
	if (stop(&m) || start(&m) || wait_ready(&m))
		return 1;
	ret = fdstore_judge(CHECK_DIR, m.stored);
	if (stop(&m))
		ret = 1;
	return ret;
}
