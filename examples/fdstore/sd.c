// SPDX-License-Identifier: MIT
/*
 * The two halves of systemd's protocol this daemon needs, written out
 * rather than taken from libsystemd: they are a few lines of documented,
 * stable interface (sd_notify(3), sd_listen_fds(3), systemd.io's "File
 * Descriptor Store"), this way the example shows exactly what crosses
 * between the daemon and the service manager, builds with no
 * libsystemd-dev, and links statically to run in the test VM too. With
 * libsystemd, sd_notify_fds() is sd_pid_notify_with_fds(0, 0, state,
 * fds, n) and sd_stored_fd() a loop over sd_listen_fds_with_names().
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fdstore.h"

#define LISTEN_FDS_START	3	/* SD_LISTEN_FDS_START */
#define MAX_FDS			16

/*
 * Send @state ("READY=1", "FDSTORE=1\nFDNAME=wheel", ...) to the service
 * manager, with @fds attached (SCM_RIGHTS). 1 if sent, 0 if there is no
 * service manager ($NOTIFY_SOCKET unset), -errno on failure.
 */
int sd_notify_fds(const char *state, const int *fds, unsigned int nr_fds)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * MAX_FDS)];
	} u;
	struct iovec iov = { .iov_base = (char *)state, .iov_len = strlen(state) };
	struct msghdr msg = { .msg_name = &sa, .msg_iov = &iov, .msg_iovlen = 1 };
	size_t len;
	int fd, ret = 1;

	if (!path || !*path)
		return 0;
	len = strlen(path);
	/* A path, or '@' for the abstract namespace; nothing else here. */
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(sa.sun_path) ||
	    nr_fds > MAX_FDS)
		return -EINVAL;
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@')
		sa.sun_path[0] = 0;
	msg.msg_namelen = offsetof(struct sockaddr_un, sun_path) + len;
	if (nr_fds) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * nr_fds);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nr_fds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nr_fds);
	}
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (sendmsg(fd, &msg, MSG_NOSIGNAL) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * The fd the service manager passed under @name (LISTEN_FDNAMES), or -1.
 * Passed fds start at 3 and are meant for this process only if
 * LISTEN_PID is its pid (else they were inherited by mistake). All are
 * made close-on-exec, those of other names closed, and the variables
 * removed, so that no child takes them for its own.
 */
int sd_stored_fd(const char *name)
{
	const char *pid = getenv("LISTEN_PID");
	const char *nfds = getenv("LISTEN_FDS");
	const char *names = getenv("LISTEN_FDNAMES");
	int n, found = -1;

	if (!pid || !nfds || strtol(pid, NULL, 10) != getpid())
		goto out;
	n = atoi(nfds);
	for (int i = 0; i < n; i++) {
		int fd = LISTEN_FDS_START + i;
		size_t len = names ? strcspn(names, ":") : 0;

		if (found < 0 && names && len == strlen(name) && !strncmp(names, name, len)) {
			found = fd;
			fcntl(fd, F_SETFD, FD_CLOEXEC);
		} else {
			close(fd);
		}
		if (names)
			names = names[len] ? names + len + 1 : NULL;
	}
out:
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return found;
}
