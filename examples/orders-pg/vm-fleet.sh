#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The fleet in the test VM (busybox sh, the Debian root of vm/run.sh
# --lang at /debian, veth.ko beside this script): PostgreSQL in a network
# namespace of its own, three instances each in another, joined to it by
# a veth pair each, and the shop's load.
#
#   vm-fleet.sh check [ORDERS]   the twheel way through a kill -9, a cut
#                                and a restart: one "fleet:" line
#   vm-fleet.sh bench [ORDERS]   the ways, no failure, RUNS rounds: one
#                                "fleet-bench:" line each, the median
#                                and the spread of the rounds
#
# Knobs (environment): RATE orders a second (1000), TIMEOUT an order's
# time to be paid (15s: the seeds' 30 min scaled down 120 times), TICK
# the precision (100ms: the wheel's tick; each poller's period in the
# way polling, the fleet's in polling-equal), LEASE (3s), RUNS (3).
set -u

dir=$(cd "$(dirname "$0")" && pwd)
mode=${1:-check}
orders=${2:-1000000}
rate=${RATE:-1000}
timeout=${TIMEOUT:-15s}
tick=${TICK:-100ms}
runs=${RUNS:-3}
lease=${LEASE:-3s}
bin=$dir/orders-pg
pgbin=/usr/lib/postgresql/15/bin
data=/tmp/fleet-pg
log=/tmp/fleet
hosts="h1 h2 h3"
nhosts=$(echo "$hosts" | wc -w)

say() { echo "# fleet: $*"; }
fail() { echo "not ok 1 fleet: $*"; echo "fleet: failed=\"$*\""; cleanup; exit 1; }
# The network namespaces: each held by a process that sleeps in it
# (unshare), entered with nsenter: `ip netns` remounts / and /sys, which
# the guest's root, not a mount point, refuses.
nspid() { cat "$log-ns-$1"; }
ns() { _ns=$1; shift; in-debian nsenter -t "$(nspid "$_ns")" -n "$@"; }
# As the user postgres (no PAM: setpriv, not su), in db.
as_pg() { ns db setpriv --reuid postgres --regid postgres --clear-groups "$@"; }
secs() { case $1 in *ms) awk -v m="${1%ms}" 'BEGIN { print m / 1000 }' ;; *s) echo "${1%s}" ;; esac; }
# poll_ms WAY: the period of each poller of WAY, in ms. polling: the
# tick, on every instance (the seeds' readers' way: the fleet asks three
# times a tick). polling-equal: three ticks, so that the fleet asks once
# a tick on average, the precision of the wheel's tick.
poll_ms() {
	_t=$(awk -v t="$(secs "$tick")" 'BEGIN { printf "%d", t * 1000 }')
	case $1 in polling-equal) echo $((_t * nhosts)) ;; *) echo "$_t" ;; esac
}

cleanup() {
	# Gone, their wheels closed, before the module is unloaded (busybox
	# here has no pkill).
	# shellcheck disable=SC2046 # pids
	kill -KILL $(pidof orders-pg) 2>/dev/null
	for _ in $(seq 50); do pidof orders-pg >/dev/null || break; sleep 0.2; done
	[ -f "$data/postmaster.pid" ] && as_pg "$pgbin/pg_ctl" -D "$data" -m immediate stop >/dev/null 2>&1
	for n in db $hosts; do [ -f "$log-ns-$n" ] && kill "$(nspid "$n")" 2>/dev/null; rm -f "$log-ns-$n"; done
	for c in pg h1 h2 h3 load; do rmdir "/sys/fs/cgroup/fleet-$c" 2>/dev/null; done
}

# The network: db has 10.0.N.1 on the pair of host hN, which has 10.0.N.2.
net() {
	insmod "$dir/veth.ko" 2>/dev/null || grep -q '^veth ' /proc/modules || fail "veth.ko does not load"
	for n in db $hosts; do
		in-debian unshare --net sleep 1000000 &
		echo $! >"$log-ns-$n"
	done
	sleep 1
	for n in db $hosts; do ns "$n" ip link set lo up || fail "no network namespace $n"; done
	i=0
	for h in $hosts; do
		i=$((i + 1))
		in-debian ip link add "d$h" netns "$(nspid db)" type veth peer name eth0 netns "$(nspid "$h")" ||
			fail "veth for $h"
		ns db ip addr add "10.0.$i.1/24" dev "d$h"
		ns db ip link set "d$h" up
		ns "$h" ip addr add "10.0.$i.2/24" dev eth0
		ns "$h" ip link set eth0 up
	done
}

# PostgreSQL in db, in a cgroup of its own (its CPU is the peer's measure).
db() {
	rm -rf "$data" "$log-pg.log" && mkdir -p "$data" && in-debian chown postgres "$data" && chmod 700 "$data"
	as_pg "$pgbin/initdb" -D "$data" -U postgres -A trust >"$log-initdb.log" 2>&1 ||
		fail "initdb (see $log-initdb.log)"
	cat >>"$data/postgresql.conf" <<-EOF
	listen_addresses = '*'
	unix_socket_directories = '/tmp'
	max_connections = 100
	shared_buffers = 128MB
	shared_preload_libraries = 'pg_stat_statements, auto_explain'
	auto_explain.log_min_duration = '500ms'
	jit = off
	fsync = off
	EOF
	echo "host all all 10.0.0.0/16 trust" >>"$data/pg_hba.conf"
	mkdir -p /sys/fs/cgroup/fleet-pg
	sh -c "echo \$\$ >/sys/fs/cgroup/fleet-pg/cgroup.procs &&
		exec in-debian nsenter -t $(nspid db) -n setpriv --reuid postgres --regid postgres --clear-groups \
		$pgbin/postgres -D $data" >>"$log-pg.log" 2>&1 &
	for _ in $(seq 60); do
		as_pg "$pgbin/pg_isready" -q -h 127.0.0.1 && break
		sleep 1
	done
	as_pg "$pgbin/pg_isready" -q -h 127.0.0.1 || fail "PostgreSQL did not start (see $log-pg.log)"
	psql_db "CREATE ROLE svc LOGIN SUPERUSER" || fail "creating the role"
}

# A new database shop, with pg_stat_statements (which counts the
# instances' queries: those of the role svc).
newdb() {
	if ! psql_db "DROP DATABASE IF EXISTS shop WITH (FORCE)" || ! psql_db "CREATE DATABASE shop" ||
		! psql_db "CREATE EXTENSION pg_stat_statements" shop; then
		fail "creating the database"
	fi
}

psql_db() { ns db psql -q -h 127.0.0.1 -U postgres -d "${2:-postgres}" -c "$1" >/dev/null; }
query() { ns db psql -qAt -h 127.0.0.1 -U postgres -d shop -c "$1"; }
gen_dsn="host=127.0.0.1 user=postgres dbname=shop"
host_dsn() { echo "host=10.0.${1#h}.1 user=svc dbname=shop"; }

# in_cg NAME CMD...: CMD in the cgroup fleet-NAME (its CPU is counted).
in_cg() {
	_cg=/sys/fs/cgroup/fleet-$1
	shift
	mkdir -p "$_cg"
	# exec: run in the background, $! is the program's pid.
	exec sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$_cg" "$@"
}

# start WAY HOST: an instance of WAY in HOST; its pid to $log-HOST.pid.
start() {
	if [ "$1" = twheel ]; then
		in_cg "$2" in-debian nsenter -t "$(nspid "$2")" -n "$bin" serve -db "$(host_dsn "$2")" -name "$2" \
			-tick "$tick" -lease "$lease" ${PROFILE:+-cpuprofile "$log-$2.prof"} >>"$log-$2.log" 2>&1 &
	else
		in_cg "$2" in-debian nsenter -t "$(nspid "$2")" -n "$bin" poll -db "$(host_dsn "$2")" -name "$2" \
			-tick "$(poll_ms "$1")ms" >>"$log-$2.log" 2>&1 &
	fi
	echo $! >"$log-$2.pid"
}

cpu_us() { sed -n 's/^usage_usec //p' "/sys/fs/cgroup/fleet-${1:-pg}/cpu.stat" 2>/dev/null || echo 0; }
hosts_cpu() { echo $(($(cpu_us h1) + $(cpu_us h2) + $(cpu_us h3))); }
cpu_all() { for c in pg h1 h2 h3 load; do printf '%s=%s ' "$c" "$(cpu_us "$c")"; done; }
# pg_ticks: "PID TICKS KIND" for each process of the database's cgroup,
# KIND its title without a client's address and port.
pg_ticks() {
	while read -r p; do
		[ -r "/proc/$p/stat" ] || continue
		echo "$p $(awk '{ print $14 + $15 }' "/proc/$p/stat") $(tr '\0' ' ' <"/proc/$p/cmdline" |
			sed 's/[0-9.]*([0-9]*)//; s/ *$//' | cut -c1-60)"
	done </sys/fs/cgroup/fleet-pg/cgroup.procs
}
svc_calls() { query "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid WHERE r.rolname = 'svc'"; }

# run WAY FAILURES: the fleet of WAY, the load, then the judge.
run() {
	way=$1 failures=$2
	rm -f "$log"-h*.log "$log"-h*.pid "$log"-load.* "$log"-judge.*
	newdb
	if [ "$way" = null ]; then
		# The baseline: the load alone, on the polling way's schema (no
		# trigger), nobody cancelling.
		ns db "$bin" init -db "$gen_dsn" -way polling || fail "init"
	else
		ns db "$bin" init -db "$gen_dsn" -way "${way%-equal}" || fail "init"
		for h in $hosts; do start "$way" "$h"; done
	fi
	if [ "$way" = twheel ]; then
		# Every shard held and none above its instance's fair share
		# (shards / instances, rounded up) before the load starts: the
		# fixpoint of the lease rounds, where nobody gives back and
		# nothing is free to take (the first to start took them all,
		# and gives one back a round). 22, 22 and 20 is one.
		share=$(((64 + nhosts - 1) / nhosts)) since=$(date +%s) settled=f
		for _ in $(seq 120); do
			settled=$(query "SELECT count(*) = 64 AND count(DISTINCT owner) = $nhosts AND
				(SELECT max(n) FROM (SELECT count(*) AS n FROM leases GROUP BY owner) t) <= $share
				FROM leases WHERE expires > clock_timestamp()")
			[ "$settled" = t ] && break
			sleep 1
		done
		say "shares $(query "SELECT string_agg(n::text, ' ' ORDER BY n DESC) FROM (SELECT count(*) AS n
			FROM leases WHERE expires > clock_timestamp() GROUP BY owner) t") after $(($(date +%s) - since)) s$(
			[ "$settled" = t ] || echo ", not settled")"
	fi
	psql_db "SELECT pg_stat_statements_reset()" shop
	pg_ticks >"$log-ticks0"
	cpu0=$(cpu_us)
	hosts0=$(hosts_cpu)
	all0=$(cpu_all)
	t0=$(date +%s)
	in_cg load in-debian nsenter -t "$(nspid db)" -n "$bin" load -db "$gen_dsn" -orders "$orders" -rate "$rate" \
		-timeout "$timeout" >"$log-load.out" 2>"$log-load.log" &
	load=$!
	if [ "$failures" = 1 ]; then
		span=$((orders / rate))
		sleep $((span / 4))
		say "kill -9 h1 at $(($(date +%s) - t0)) s"
		kill -KILL "$(cat "$log-h1.pid")"
		sleep $((span / 5))
		say "cut h2 at $(($(date +%s) - t0)) s"
		ns h2 ip link set eth0 down
		sleep $(($(secs "$lease" | cut -d. -f1) * 3))
		ns h2 ip link set eth0 up
		say "h2 back at $(($(date +%s) - t0)) s"
		sleep $((span / 5))
		say "h1 restarted at $(($(date +%s) - t0)) s"
		start "$way" h1
	fi
	wait "$load" || fail "the load failed (see $log-load.log)"
	# Every deadline passed, and the bound after it.
	sleep $(($(secs "$timeout" | cut -d. -f1) + 2 * $(secs "$lease" | cut -d. -f1) + 2))
	cpu1=$(cpu_us)
	hosts1=$(hosts_cpu)
	say "$way: CPU us before: $all0"
	say "$way: CPU us after:  $(cpu_all) ($(($(date +%s) - t0)) s)"
	# Where the database's CPU went: its processes' (ticks of utime +
	# stime over the run, by kind: a backend by its role, database and
	# state), and the statements' execution time (pg_stat_statements).
	pg_ticks >"$log-ticks1"
	# The processes gone by then (the load's backends): the cgroup's
	# CPU less the others'.
	awk -v cg=$(((cpu1 - cpu0) / 10000)) 'NR == FNR { t0[$1] = $2; next }
		{ d = $2 - t0[$1]; $1 = ""; $2 = ""; sub(/^ +/, ""); k[$0] += d; all += d }
		END {
			if (cg > all) { k["(exited)"] = cg - all; all = cg }
			for (n in k) if (k[n] > 0) printf "%d %.0f%% %s\n", k[n], 100 * k[n] / (all ? all : 1), n
		}' \
		"$log-ticks0" "$log-ticks1" | sort -rn | head -n 8 | sed "s/^/# $way: db ticks: /"
	query "SELECT r.rolname, calls, round(total_exec_time), left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 70)
		FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid ORDER BY total_exec_time DESC LIMIT 6" |
		sed "s/^/# $way: db statements (role|calls|ms|query): /"
	calls=$(svc_calls)
	# The statements slower than half a second (auto_explain), by their
	# first line, and the plan of the first of them.
	slow=$(grep -c 'LOG:  duration:' "$log-pg.log")
	say "$way: statements over 500 ms: $slow"
	if [ "$slow" != 0 ]; then
		awk '/LOG:  duration:/ { want = 1; next }
			want == 1 && /Query Text:/ {
				t = $0; sub(/.*Query Text: */, "", t)
				if (t ~ /[A-Za-z]/) { print substr(t, 1, 90); want = 0 } else want = 2
				next
			}
			want == 2 && /[A-Za-z]/ { t = $0; gsub(/^[ \t]+/, "", t); print substr(t, 1, 90); want = 0 }' "$log-pg.log" | sort | uniq -c | sort -rn | head -n 5 | sed 's/^/# slow: /'
		awk '/LOG:  duration:/ { n++ } n == 1 { print } n == 2 { exit }' "$log-pg.log" | head -n 40 | sed 's/^/# slow plan: /'
	fi
	: >"$log-pg.log"
	judged=0
	if [ "$way" != null ]; then
		ns db "$bin" judge -db "$gen_dsn" -bound "$bound" >"$log-judge.out" 2>"$log-judge.log"
		judged=$?
	fi
	for h in $hosts; do [ -f "$log-$h.pid" ] && kill -TERM "$(cat "$log-$h.pid")" 2>/dev/null; done
	sleep 2
	if [ -n "${PROFILE:-}" ]; then
		for h in $hosts; do
			[ -s "$log-$h.prof" ] || continue
			echo "# profile $h begin"
			base64 "$log-$h.prof" | sed 's/^/# prof /'
			echo "# profile $h end"
			rm -f "$log-$h.prof"
		done
	fi
}

status=0
cleanup
net
db
trap 'echo "# left: $(ps -o pid,stat,args | grep -E "orders|postgres|sleep" | grep -v grep | tr "\n" ";")"; grep twheel /proc/modules | sed "s/^/# /"' EXIT
bound=$(awk -v l="$(secs "$lease")" -v t="$(secs "$tick")" 'BEGIN { printf "%dms", (l * 1.5 + t) * 1000 + 1000 }')
case $mode in
check)
	run twheel 1
	line=$(grep '^judge:' "$log-judge.out")
	sed 's/^/# /' "$log-judge.out"
	tail -n 3 "$log-load.log" | sed 's/^/# /'
	for h in $hosts; do
		echo "# $h: took $(grep -c took "$log-$h.log") shards, lost $(grep -c 'lost shard' "$log-$h.log"), gave back $(grep -c gives "$log-$h.log")"
		grep -E 'dropping|cancel:|listen:|lease round|stats' "$log-$h.log" | tail -n 6 | sed "s/^/# $h: /"
	done
	# shellcheck disable=SC2086 # its words
	set -- $line
	shift
	echo "fleet: $(echo "$*" | sed 's/^orders=\([0-9]*\) paid=[0-9]* cancelled=[0-9]* /orders=\1 instances=3 killed=1 partitioned=1 restarted=1 /')"
	if [ "$judged" = 0 ]; then echo "ok 1 fleet: nothing lost, early, twice or after payment, within the bound"; else
		echo "not ok 1 fleet: $(cat "$log-judge.log")"; status=1; fi ;;
bench)
	# RUNS rounds of the three, in turn: the load alone (the null
	# baseline: what placing and paying cost the database, which every
	# way includes), then each way. A line gives the median of the
	# rounds and their spread; the null's is a comment.
	: >"$log-bench"
	# A first run of the load, not counted (a warm-up); then each round
	# in another order (null twheel polling polling-equal, then twheel
	# polling polling-equal null, ...), so that no way always follows the
	# same one.
	run null 0
	ways="null twheel polling polling-equal"
	order=$ways
	for r in $(seq "$runs"); do
		for way in $order; do
			run "$way" 0
			if [ "$way" = null ]; then
				n=$orders p99=0
			else
				line=$(grep '^judge:' "$log-judge.out")
				sed "s/^/# round $r: $way: /" "$log-judge.out"
				grep -h 'stats' "$log"-h*.log | sed "s/^/# round $r: /"
				grep -h -E -A3 'panic|fatal' "$log"-h*.log | head -n 30 | sed 's/^/# /'
				n=$(echo "$line" | sed -n 's/.*orders=\([0-9]*\).*/\1/p')
				p99=$(echo "$line" | sed -n 's/.*p99_late_ms=\([0-9]*\).*/\1/p')
			fi
			# The database's CPU (its cgroup's) and the instances'.
			echo "$way $n $((cpu1 - cpu0)) $calls $p99 $((hosts1 - hosts0))" >>"$log-bench"
			awk -v r="$r" -v w="$way" -v per="$(poll_ms "$way")" -v n="$n" -v c=$((cpu1 - cpu0)) -v q="$calls" -v p="$p99" \
				-v h=$((hosts1 - hosts0)) 'BEGIN { printf "# round %d: fleet-bench: way=%s db_cpu_us_per_order=%.1f queries_per_order=%.3f p99_late_ms=%s host_cpu_us_per_order=%.1f period_ms=%d\n", r, w, c / n, q / n, p, h / n, per }'
		done
		# shellcheck disable=SC2086 # words
		order="$(echo $order | cut -d' ' -f2-) $(echo $order | cut -d' ' -f1)"
	done
	for way in $ways; do
		awk -v w="$way" -v per="$(poll_ms "$way")" -v rate="$rate" '
			function med(a, n,   i, j, t) {
				for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
				return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
			}
			$1 == w { k++; c[k] = $3 / $2; q[k] = $4 / $2; p[k] = $5; h[k] = $6 / $2 }
			END {
				cm = med(c, k); qm = med(q, k); pm = med(p, k); hm = med(h, k)
				printf "%sfleet-bench: way=%s db_cpu_us_per_order=%.1f queries_per_order=%.3f p99_late_ms=%d runs=%d db_cpu_min=%.1f db_cpu_max=%.1f p99_min=%d p99_max=%d host_cpu_us_per_order=%.1f period_ms=%d rate=%d\n", w == "null" ? "# " : "", w, cm, qm, pm, k, c[1], c[k], p[1], p[k], hm, per, rate
			}' "$log-bench"
	done ;;
esac
cleanup
exit $status
