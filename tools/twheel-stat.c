// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * twheel-stat: list every open timing wheel on the machine, in the manner
 * of ss(8) and lsof(8).
 *
 * A wheel is found by its descriptors: every /proc/PID/fd/FD whose target
 * is the /dev/twheel character device (compared by device number, taken
 * from /sys/class/misc/twheel/dev, so renamed or bind-mounted nodes are
 * found too). Its settings and counters come from /proc/PID/fdinfo/FD;
 * one wheel shared by several descriptors or processes (dup, fork,
 * SCM_RIGHTS) shows once per descriptor, with the same WHEEL number.
 *
 * Reads only /proc and /sys; needs root to see other users' processes.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* The fdinfo lines shown, in output order; absent ones print as "-". */
enum field {
	F_WHEEL, F_UID, F_TICK, F_DEFAULT, F_CLOCK, F_MAX, F_LIVE, F_WAITING,
	F_EXPIRED, F_LATE_LAST, F_LATE_MAX, F_TOUCH_SLOTS, F_TOUCH_REARMS,
	F_USER_ENTRIES, NR_FIELDS
};

static const char *const field_key[NR_FIELDS] = {
	[F_WHEEL] = "wheel", [F_UID] = "uid", [F_TICK] = "tick_ns",
	[F_DEFAULT] = "default_timeout_ns", [F_CLOCK] = "clockid",
	[F_MAX] = "max_entries", [F_LIVE] = "live", [F_WAITING] = "events_waiting",
	[F_EXPIRED] = "expired_total", [F_LATE_LAST] = "lateness_last_ns",
	[F_LATE_MAX] = "lateness_max_ns", [F_TOUCH_SLOTS] = "touch_slots",
	[F_TOUCH_REARMS] = "touch_rearms", [F_USER_ENTRIES] = "user_entries",
};

struct wheel_fd {
	int pid;
	int fd;
	char comm[64];
	bool setup;
	bool has[NR_FIELDS];
	unsigned long long val[NR_FIELDS];
};

static struct wheel_fd *found;
static size_t nr_found, cap_found;
static unsigned int unreadable;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: twheel-stat [-p PID] [--json]\n"
		"List every open /dev/twheel wheel: process, descriptor, settings and counters.\n"
		"  -p, --pid PID   only this process\n"
		"  -j, --json      one JSON array, one object per descriptor\n"
		"  -h, --help      this text\n");
}

/* The device number of /dev/twheel, from sysfs; false if not loaded. */
static bool twheel_devnum(dev_t *dev)
{
	unsigned int maj, min;
	FILE *f = fopen("/sys/class/misc/twheel/dev", "r");
	bool ok;

	if (!f)
		return false;
	ok = fscanf(f, "%u:%u", &maj, &min) == 2;
	fclose(f);
	if (ok)
		*dev = makedev(maj, min);
	return ok;
}

static void read_comm(int pid, char *buf, size_t size)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "r");
	if (!f || !fgets(buf, size, f))
		snprintf(buf, size, "?");
	if (f)
		fclose(f);
	buf[strcspn(buf, "\n")] = 0;
}

/* Parse "key:\tdecimal" lines of one fdinfo file into @w. */
static bool read_fdinfo(int pid, int fd, struct wheel_fd *w)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	f = fopen(path, "r");
	if (!f)
		return false;
	w->setup = true;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':'), *end;
		unsigned long long v;
		int i;

		if (!colon)
			continue;
		*colon = 0;
		if (!strcmp(line, "setup")) {
			w->setup = false;
			continue;
		}
		for (i = 0; i < NR_FIELDS; i++)
			if (!strcmp(line, field_key[i]))
				break;
		if (i == NR_FIELDS)
			continue;
		errno = 0;
		v = strtoull(colon + 1, &end, 10);
		if (errno || end == colon + 1 || (*end && *end != '\n'))
			continue;
		w->has[i] = true;
		w->val[i] = v;
	}
	fclose(f);
	return true;
}

static void add_found(const struct wheel_fd *w)
{
	if (nr_found == cap_found) {
		cap_found = cap_found ? 2 * cap_found : 64;
		found = realloc(found, cap_found * sizeof(*found));
		if (!found) {
			perror("twheel-stat");
			exit(2);
		}
	}
	found[nr_found++] = *w;
}

/* Every descriptor of @pid that is a wheel. */
static void scan_pid(int pid, dev_t dev)
{
	char path[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d) {
		/* Gone meanwhile, or another user's process without root. */
		if (errno == EACCES || errno == EPERM)
			unreadable++;
		return;
	}
	while ((de = readdir(d))) {
		struct wheel_fd w;
		char fdpath[96];
		struct stat st;
		int fd;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		fd = atoi(de->d_name);
		snprintf(fdpath, sizeof(fdpath), "%s/%d", path, fd);
		if (stat(fdpath, &st) || !S_ISCHR(st.st_mode) || st.st_rdev != dev)
			continue;
		memset(&w, 0, sizeof(w));
		w.pid = pid;
		w.fd = fd;
		read_comm(pid, w.comm, sizeof(w.comm));
		if (read_fdinfo(pid, fd, &w))
			add_found(&w);
	}
	closedir(d);
}

static void print_num(const struct wheel_fd *w, enum field f, int width)
{
	if (w->has[f])
		printf(" %*llu", width, w->val[f]);
	else
		printf(" %*s", width, "-");
}

/* A duration in ns as a short human figure. */
static void print_dur(const struct wheel_fd *w, enum field f, int width)
{
	char buf[32];
	double v = (double)w->val[f];

	if (!w->has[f])
		snprintf(buf, sizeof(buf), "-");
	else if (v >= 3600e9)
		snprintf(buf, sizeof(buf), "%.3gh", v / 3600e9);
	else if (v >= 1e9)
		snprintf(buf, sizeof(buf), "%.3gs", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, sizeof(buf), "%.3gms", v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, sizeof(buf), "%.3gus", v / 1e3);
	else
		snprintf(buf, sizeof(buf), "%.0fns", v);
	printf(" %*s", width, buf);
}

static void print_table(void)
{
	size_t i;

	printf("%7s %-15s %4s %6s %6s %7s %7s %5s %10s %10s %10s %8s %8s\n",
	       "PID", "COMMAND", "FD", "WHEEL", "UID", "TICK", "TIMEOUT", "CLOCK",
	       "LIVE", "WAITING", "EXPIRED", "LATE_MAX", "TOUCH");
	for (i = 0; i < nr_found; i++) {
		const struct wheel_fd *w = &found[i];

		printf("%7d %-15.15s %4d", w->pid, w->comm, w->fd);
		print_num(w, F_WHEEL, 6);
		print_num(w, F_UID, 6);
		if (!w->setup) {
			printf(" %7s\n", "(not set up)");
			continue;
		}
		print_dur(w, F_TICK, 7);
		print_dur(w, F_DEFAULT, 7);
		printf(" %5s", !w->has[F_CLOCK] ? "-" : w->val[F_CLOCK] == 7 ? "boot" :
		       w->val[F_CLOCK] == 1 ? "mono" : "?");
		print_num(w, F_LIVE, 10);
		print_num(w, F_WAITING, 10);
		print_num(w, F_EXPIRED, 10);
		print_dur(w, F_LATE_MAX, 8);
		if (w->has[F_TOUCH_SLOTS] && w->val[F_TOUCH_SLOTS])
			print_num(w, F_TOUCH_SLOTS, 8);
		else
			printf(" %8s", "-");
		printf("\n");
	}
}

/* JSON: strings need escaping only for what comm may hold. */
static void print_json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void print_json(void)
{
	size_t i;
	int f;

	printf("[");
	for (i = 0; i < nr_found; i++) {
		const struct wheel_fd *w = &found[i];

		printf("%s\n  {\"pid\": %d, \"command\": ", i ? "," : "", w->pid);
		print_json_string(w->comm);
		printf(", \"fd\": %d, \"setup\": %s", w->fd, w->setup ? "true" : "false");
		for (f = 0; f < NR_FIELDS; f++)
			if (w->has[f])
				printf(", \"%s\": %llu", field_key[f], w->val[f]);
		printf("}");
	}
	printf("%s]\n", nr_found ? "\n" : "");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool json = false;
	int only = 0, c;
	struct dirent *de;
	dev_t dev;
	DIR *d;

	while ((c = getopt_long(argc, argv, "p:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			only = atoi(optarg);
			if (only <= 0) {
				fprintf(stderr, "twheel-stat: bad pid '%s'\n", optarg);
				return 2;
			}
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	if (!twheel_devnum(&dev)) {
		fprintf(stderr, "twheel-stat: the twheel module is not loaded "
			"(no /sys/class/misc/twheel/dev)\n");
		return 1;
	}
	if (only) {
		scan_pid(only, dev);
	} else {
		d = opendir("/proc");
		if (!d) {
			perror("twheel-stat: /proc");
			return 2;
		}
		while ((de = readdir(d)))
			if (isdigit((unsigned char)de->d_name[0]))
				scan_pid(atoi(de->d_name), dev);
		closedir(d);
	}
	if (json)
		print_json();
	else
		print_table();
	if (unreadable && !json)
		fprintf(stderr, "twheel-stat: %u processes not readable (run as root to see all)\n",
			unreadable);
	free(found);
	return 0;
}
