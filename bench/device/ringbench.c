// SPDX-License-Identifier: GPL-2.0
/*
 * ringbench: refreshes in the same io_uring as the socket receives that
 * cause them, against the ioctl after each receive.
 *
 * A server on io_uring receives its packets as SQEs; each packet names an
 * id to keep alive. A sender thread writes ids (8 bytes each) into a
 * stream socket; the receiver gets them with IORING_OP_RECV, up to BATCH
 * ids a receive, and refreshes each batch of ids with TWHEEL_IOC_REFRESH
 * (the compact refresh, one timeout for all), four ways:
 *
 *	recv	the receives alone: what every way below pays anyway
 *	ioctl	a receive through the ring, then ioctl(TWHEEL_IOC_REFRESH)
 *	ring	the refresh as an IORING_OP_URING_CMD in the same ring,
 *		submitted with the next receive: one io_uring_enter for both
 *	sqpoll	the same on a ring with IORING_SETUP_SQPOLL: the kernel's
 *		poller thread submits, the receiver enters only to wait
 *
 * For each: the receiver's system calls per refresh (counted by the
 * kernel: a hist trigger on raw_syscalls:sys_enter for the receiving
 * thread; "-1" where tracefs has none), and the CPU per refresh of the
 * receiver, of the SQPOLL thread (iou-sqp-*, part of the process) and of
 * the kworkers (bench.h), the sender left out: it does the same
 * work in every way. "net" subtracts the recv way's CPU per id: what the
 * refresh itself costs.
 *
 *	ringbench [REFRESHES [IDS [BATCH]]]	default 1000000 100000 64
 *
 * Lines: "ringbench: way=W refreshes=N syscalls_per_refresh=S
 * cpu_ns_per_refresh=C net_ns_per_refresh=D sqpoll_ns_per_refresh=P".
 * Needs kernels with ring commands (5.19 and later) for ring and sqpoll,
 * and root for the trigger (the VM runs it as root).
 */
#include <pthread.h>
#include <sys/socket.h>
#include <liburing.h>

#include "bench.h"
#include "twheel_uring.h"

#define TIMEOUT_NS	(600 * NSEC_PER_SEC)	/* nothing expires during a run */
#define MAX_BATCH	1024

enum way { W_RECV, W_IOCTL, W_RING, W_SQPOLL, W_NR };
static const char *const way_name[W_NR] = { "recv", "ioctl", "ring", "sqpoll" };

static uint64_t n_refresh = 1000000, n_ids = 100000;
static unsigned int batch = 64;
static int sock[2];

/* The ids the sender writes, in an order no cache predicts. */
static void *sender(void *arg)
{
	uint64_t buf[MAX_BATCH], x = 0x9e3779b97f4a7c15ULL, sent = 0;

	(void)arg;
	while (sent < n_refresh) {
		unsigned int n = 0, i;
		size_t len, off = 0;

		for (i = 0; i < batch && sent + n < n_refresh; i++, n++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[i] = x % n_ids;
		}
		len = n * sizeof(buf[0]);
		while (off < len) {
			ssize_t w = write(sock[0], (char *)buf + off, len - off);

			if (w <= 0)
				die("write");
			off += w;
		}
		sent += n;
	}
	return NULL;
}

/* The tracefs directory, or NULL. */
static const char *tracefs(void)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	unsigned int i;
	char path[128];

	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/events/raw_syscalls/sys_enter/trigger", dirs[i]);
		if (!access(path, W_OK))
			return dirs[i];
	}
	return NULL;
}

static int trigger(pid_t tid, bool on)
{
	const char *dir = tracefs();
	char path[128], cmd[128];
	int fd, ret;

	if (!dir)
		return -1;
	snprintf(path, sizeof(path), "%s/events/raw_syscalls/sys_enter/trigger", dir);
	snprintf(cmd, sizeof(cmd), "%shist:keys=common_pid:vals=hitcount if common_pid == %d",
		 on ? "" : "!", (int)tid);
	/* Appended: O_TRUNC would clear every trigger of the event. */
	fd = open(path, O_WRONLY | O_APPEND);
	if (fd < 0)
		return -1;
	ret = write(fd, cmd, strlen(cmd)) == (ssize_t)strlen(cmd) ? 0 : -1;
	close(fd);
	return ret;
}

/*
 * System calls of @tid since its trigger was set, or -1: the hist file's
 * line "{ common_pid: TID } hitcount: N" (padded with spaces), none if
 * it made no call.
 */
static long long syscalls_of(pid_t tid)
{
	const char *dir = tracefs();
	char path[128], buf[16384], *p;

	if (!dir)
		return -1;
	snprintf(path, sizeof(path), "%s/events/raw_syscalls/sys_enter/hist", dir);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	for (p = buf; (p = strstr(p, "common_pid:")); ) {
		char *end;
		long pid = strtol(p + strlen("common_pid:"), &end, 10);

		p = end;
		if (pid != tid)
			continue;
		p = strstr(p, "hitcount:");
		return p ? strtoll(p + strlen("hitcount:"), NULL, 10) : -1;
	}
	return 0;
}

/* Run time of this process's SQPOLL threads (iou-sqp-*), in ns. */
static uint64_t sqpoll_ns(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	uint64_t sum = 0;

	if (!d)
		die("/proc/self/task");
	while ((de = readdir(d))) {
		char path[300], buf[128];

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", de->d_name);
		if (read_file(path, buf, sizeof(buf)) <= 0 || strncmp(buf, "iou-sqp", 7))
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat", de->d_name);
		if (read_file(path, buf, sizeof(buf)) > 0)
			sum += strtoull(buf, NULL, 10);
	}
	closedir(d);
	return sum;
}

static struct io_uring_sqe *sqe_of(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		die("io_uring_get_sqe");
	return sqe;
}

#define UD_RECV		1
#define UD_CMD		2

struct result {
	uint64_t refreshed, cpu, sqp, kt;
	long long calls;
};

/*
 * Receive every id the sender writes and refresh them the way @w says.
 * A receive may end inside an id: its bytes wait for the next one.
 */
static void receive(int fd, enum way w, struct result *r)
{
	static uint64_t rx[2][MAX_BATCH + 1], ids[2][MAX_BATCH];
	struct twheel_refresh_args args[2];
	unsigned int cur = 0, carry = 0, inflight_cmds = 0, wait_nr = 1;
	struct io_uring_params p = { 0 };
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	uint64_t got = 0, cpu0, sqp0, kt0;
	pthread_t th;
	pid_t tid = gettid();
	int ret;

	if (w == W_SQPOLL) {
		p.flags = IORING_SETUP_SQPOLL;
		p.sq_thread_idle = 1000;
	}
	ret = io_uring_queue_init_params(8, &ring, &p);
	if (ret) {
		errno = -ret;
		die("io_uring_queue_init");
	}
	memset(r, 0, sizeof(*r));
	kt0 = kthreads_ns();
	sqp0 = sqpoll_ns();
	/* Counted from here: the sender's start and a few reads aside, the loop's. */
	r->calls = trigger(tid, true) ? -1 : 0;
	cpu0 = thread_cpu_ns();
	if (pthread_create(&th, NULL, sender, NULL))
		die("pthread_create");

	sqe = sqe_of(&ring);
	io_uring_prep_recv(sqe, sock[1], rx[cur], batch * sizeof(uint64_t), 0);
	io_uring_sqe_set_data64(sqe, UD_RECV);
	while (got < n_refresh || inflight_cmds) {
		struct io_uring_cqe *cqe;
		unsigned int n, bytes, head, seen = 0;
		int res = 0;
		bool recvd = false;

		/*
		 * Wait for the receive, and for the command submitted with it
		 * (it completes first, inline): one entry into the kernel for
		 * both, where a wait for one completion would return at the
		 * command's and enter again for the receive.
		 */
		if (w == W_SQPOLL) {
			io_uring_submit(&ring);
			ret = io_uring_wait_cqe_nr(&ring, &cqe, wait_nr);
		} else {
			ret = io_uring_submit_and_wait(&ring, wait_nr);
		}
		if (ret < 0) {
			errno = -ret;
			die("io_uring wait");
		}
		io_uring_for_each_cqe(&ring, head, cqe) {
			seen++;
			if (io_uring_cqe_get_data64(cqe) == UD_CMD) {
				inflight_cmds--;
				if (cqe->res < 0) {
					errno = -cqe->res;
					die("ring command REFRESH");
				}
			} else {
				recvd = true;
				res = cqe->res;
			}
		}
		io_uring_cq_advance(&ring, seen);
		wait_nr = 1;
		if (!recvd)
			continue;
		if (res <= 0) {
			errno = res ? -res : EPIPE;
			die("recv");
		}
		bytes = carry + res;
		n = bytes / sizeof(uint64_t);
		carry = bytes % sizeof(uint64_t);
		got += n;
		memcpy(ids[cur], rx[cur], n * sizeof(uint64_t));
		if (carry)
			memcpy(rx[cur ^ 1], (char *)rx[cur] + n * sizeof(uint64_t), carry);
		args[cur] = (struct twheel_refresh_args){
			.ids = (uintptr_t)ids[cur], .count = n,
			.flags = TWHEEL_OPF_TIMEOUT, .timeout_ns = TIMEOUT_NS,
		};
		if (n && w == W_IOCTL) {
			ret = ioctl(fd, TWHEEL_IOC_REFRESH, &args[cur]);
			if (ret != (int)n)
				die("ioctl REFRESH");
		} else if (n && (w == W_RING || w == W_SQPOLL)) {
			sqe = sqe_of(&ring);
			twheel_prep_uring_refresh(sqe, fd, &args[cur]);
			io_uring_sqe_set_data64(sqe, UD_CMD);
			inflight_cmds++;
			wait_nr++;
		}
		r->refreshed += n;
		cur ^= 1;
		/* The next receive; the loop's submit sends it with the command. */
		if (got < n_refresh || carry) {
			sqe = sqe_of(&ring);
			io_uring_prep_recv(sqe, sock[1], (char *)rx[cur] + carry,
					   batch * sizeof(uint64_t) - carry, 0);
			io_uring_sqe_set_data64(sqe, UD_RECV);
		} else {
			wait_nr = inflight_cmds ? inflight_cmds : 1;
		}
	}
	r->cpu = thread_cpu_ns() - cpu0;
	if (r->calls == 0) {
		r->calls = syscalls_of(tid);
		trigger(tid, false);
	}
	r->sqp = sqpoll_ns() - sqp0;
	r->kt = kthreads_ns() - kt0;
	pthread_join(th, NULL);
	io_uring_queue_exit(&ring);
}

/* Whether the kernel takes ring commands (5.19 and later): a QUERY as one. */
static bool ring_commands(int fd)
{
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	struct twheel_op op;
	int res;

	if (io_uring_queue_init(2, &ring, 0))
		return false;
	twheel_prep_query(&op, 0);
	twheel_prep_uring_op(sqe_of(&ring), fd, &op);
	if (io_uring_submit_and_wait(&ring, 1) < 0 || io_uring_peek_cqe(&ring, &cqe)) {
		io_uring_queue_exit(&ring);
		return false;
	}
	res = cqe->res;
	io_uring_queue_exit(&ring);
	return res == 0 || res == -ENOENT;
}

int main(int argc, char **argv)
{
	struct result res[W_NR];
	uint64_t *all, kt_idle;
	double recv_per;
	unsigned int nf;
	bool has_cmds;
	int fd, w;

	if (argc > 1)
		n_refresh = strtoull(argv[1], NULL, 0);
	if (argc > 2)
		n_ids = strtoull(argv[2], NULL, 0);
	if (argc > 3)
		batch = strtoul(argv[3], NULL, 0);
	if (!n_refresh || !n_ids || !batch || batch > MAX_BATCH) {
		fprintf(stderr, "usage: ringbench [REFRESHES [IDS [BATCH<=%d]]]\n", MAX_BATCH);
		return 2;
	}
	fd = twheel_open(O_CLOEXEC);
	if (fd < 0 || twheel_setup(fd, NSEC_PER_MSEC, TIMEOUT_NS, CLOCK_MONOTONIC, 0) < 0)
		die("/dev/twheel");
	all = calloc(n_ids, sizeof(*all));
	if (!all)
		die("calloc");
	for (uint64_t i = 0; i < n_ids; i++)
		all[i] = i;
	if (twheel_refresh_ids(fd, all, n_ids, TIMEOUT_NS, TWHEEL_OPF_ADD_IF_ABSENT,
			       NULL, &nf) < 0 || nf)
		die("adding the ids");
	free(all);
	kt_idle = kthreads_idle_ns();
	printf("# ringbench: refreshes=%llu ids=%llu batch=%u kthreads_idle_ns_per_s=%llu\n",
	       (unsigned long long)n_refresh, (unsigned long long)n_ids, batch,
	       (unsigned long long)kt_idle);
	has_cmds = ring_commands(fd);
	for (w = 0; w < W_NR; w++) {
		if ((w == W_RING || w == W_SQPOLL) && !has_cmds)
			continue;
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock))
			die("socketpair");
		receive(fd, w, &res[w]);
		close(sock[0]);
		close(sock[1]);
	}
	recv_per = (double)res[W_RECV].cpu / n_refresh;
	for (w = 0; w < W_NR; w++) {
		const struct result *r = &res[w];
		double cpu = (double)(r->cpu + r->sqp + r->kt) / n_refresh;

		if ((w == W_RING || w == W_SQPOLL) && !has_cmds) {
			printf("ringbench: way=%s skipped: no ring commands before 5.19\n",
			       way_name[w]);
			continue;
		}
		printf("ringbench: way=%s refreshes=%llu syscalls_per_refresh=%.4f cpu_ns_per_refresh=%.0f net_ns_per_refresh=%.0f sqpoll_ns_per_refresh=%.0f\n",
		       way_name[w], (unsigned long long)r->refreshed,
		       r->calls < 0 ? -1.0 : (double)r->calls / n_refresh, cpu,
		       cpu - recv_per, (double)r->sqp / n_refresh);
	}
	close(fd);
	return 0;
}
