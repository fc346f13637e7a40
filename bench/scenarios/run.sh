#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The scenario benchmark inside the test VM (vm/run.sh --lang --copy
# build/scenarios, from `make -C bench/scenarios run`): for each scenario
# its schedule, then every way in turn, each in a cgroup of its own, one
# `scenario:` row each (scenctl run). The null way of each runtime runs
# first: the others of that runtime are measured from it.
#
# From the kernel command line: SCEN=im,ride:20000:300 picks scenarios
# (NAME[:IDS[:SCALE]], default im,ride,orders at their full counts),
# WAYS=c:twheel-batch,java:netty picks ways (their runtime's null way is
# added). A way in a new runtime is a line of the table below.
set -eu

D=/opt/scenarios
SCEN=${SCEN:-im,ride,orders}
WAYS=${WAYS:-}

# runtime way resolution_ns server: every way of the table, in order.
table="
c null 0 -
c mapscan 0 -
c ring 0 -
c timerfd 0 -
c redis-zset 0 redis
c redis-keyspace 0 redis
c twheel-batch 0 -
c twheel-touch 0 -
java null 0 -
java netty 0 -
java kafka 1000000 -
java stpe 0 -
java delayqueue 0 -
java twheel 0 -
java twheel-touch 0 -
java twheel-netty 0 -
go null 0 -
go afterfunc 0 -
go gozero 0 -
go twheel 0 -
go twheel-touch 0 -
node null 0 -
node settimeout 1000000 -
node twheel 0 -
node twheel-touch 0 -
"

# Redis as a cache server runs: no persistence (an in-memory timer).
redis="exec /bin/in-debian redis-server --bind 127.0.0.1 --port 6379 --save '' --appendonly no --logfile /tmp/redis.log"

# One timerfd and epoll item per id: a million and more of each.
echo 4194304 >/proc/sys/fs/nr_open
echo 4194304 >/proc/sys/fs/epoll/max_user_watches
ip link set lo up

picked() {
	[ -z "$WAYS" ] && return 0
	[ "$2" = null ] && echo ",$WAYS," | grep -q ",$1:" && return 0
	echo ",$WAYS," | grep -q ",$1:$2,"
}

field() {
	echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

echo "# scen: machine kernel=$(uname -r) cpus=$(nproc) mem_kb=$(awk '/MemTotal/ { print $2 }' /proc/meminfo)" \
	"java=$(in-debian java -version 2>&1 | head -n 1 | tr ' ' _)" \
	"node=$(in-debian node --version) redis=$(in-debian redis-server --version | tr ' ' '\n' | sed -n 's/^v=//p')"
kwidle=$(/opt/scenarios/scenctl kwidle)
echo "# scen: kernel threads idle ns_per_s=$kwidle"
failed=0
for s in $(echo "$SCEN" | tr ',' ' '); do
	name=${s%%:*}
	rest=${s#"$name"}
	n=$(echo "$rest" | cut -d: -f2)
	k=$(echo "$rest" | cut -d: -f3)
	sched=/tmp/$name.sched
	start=$(date +%s)
	$D/scenctl gen "$name" ${n:+-n "$n"} ${k:+-k "$k"} -o "$sched" | sed 's/^scenctl:/# scen:/'
	echo "# scen: $name schedule made in $(( $(date +%s) - start )) s"
	base=
	echo "$table" >/tmp/ways
	while read -r rt way res server; do
		[ -n "$rt" ] || continue
		picked "$rt" "$way" || continue
		if [ "$name" = orders ] && [ "$way" = twheel-touch ]; then
			echo "# scen: orders $rt-$way skipped: no refreshes, nothing to touch"
			continue
		fi
		case $rt in
		c) set -- $D/scen-c "$way" "$sched" ;;
		java) set -- /bin/in-debian java -cp "$D/java:$D/java/lib/*" Scen "$way" "$sched" ;;
		go) set -- $D/scen-go "$way" "$sched" ;;
		node) set -- /bin/in-debian node $D/node/scen.js "$way" "$sched" ;;
		esac
		srv=
		if [ "$server" = redis ]; then
			srv=$redis
		fi
		start=$(date +%s)
		row=$($D/scenctl run -S "$sched" -w "$rt-$way" -c "/sys/fs/cgroup/scen/$rt-$way" \
			-r "$res" -i "$kwidle" ${base:+-b "$base"} \
			${srv:+-e "$srv"} -- "$@") || failed=1
		echo "$row"
		echo "# scen: $name $rt-$way seconds=$(( $(date +%s) - start ))"
		if [ "$way" = null ]; then
			base="$(field cpu_window_ns "$row"),$(field mem_max "$row")"
		fi
	done </tmp/ways
done
exit "$failed"
