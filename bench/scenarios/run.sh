#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The scenario benchmark inside the test VM (vm/run.sh --lang --copy
# build/scenarios, from `make -C bench/scenarios run`): for each scenario
# and precision its schedule, then every way in turn, each in a cgroup of
# its own, one `scenario-run:` row each (scenctl run), RUNS rounds of
# them; last the `scenario:` and `verdict:` rows of rows.awk (median and
# spread of each way's runs; twheel's best way against the best native
# one of its language). The null way of each runtime runs first in each
# round: the others of that runtime in that round are measured from it.
#
# From the kernel command line:
#   SCEN=im,ride:20000:300:10ms picks scenarios, NAME[:IDS[:SCALE[:PRECISION]]]
#     (default im,ride,orders at their full counts and default scales);
#     PRECISION is the row's precision in the seeds' time (1s, 10ms, or
#     both as 1s/10ms, the default), divided by the scale like every
#     other time constant;
#   WAYS=c:twheel-batch,java:netty picks ways (their runtime's null way is
#     added), WAYS=java,node every way of those runtimes;
#   RUNS=3 the rounds (default 3).
# A way in a new runtime is a line of the table below.
set -eu

D=/opt/scenarios
SCEN=${SCEN:-im,ride,orders}
WAYS=${WAYS:-}
RUNS=${RUNS:-3}

# runtime way resolution_ns server tick: every way of the table, in order.
# tick 1: the way takes the row's tick; 0: it has none (its runs are the
# same at every precision, so they are made once, at the first precision,
# and their rows stand for each: same_as= says which runs).
table="
c null 0 - 0
c mapscan 0 - 1
c ring 0 - 1
c ring-lazy 0 - 1
c timerfd 0 - 0
c redis-zset 0 redis 1
c redis-keyspace 0 redis 0
c redis-keyspace-effort 0 redis 0
c twheel-batch 0 - 1
c twheel-touch 0 - 1
java null 0 - 0
java netty 0 - 1
java netty-lazy 0 - 1
java kafka 1000000 - 1
java stpe 0 - 0
java delayqueue 0 - 0
java twheel 0 - 1
java twheel-touch 0 - 1
java twheel-netty 0 - 1
go null 0 - 0
go afterfunc 0 - 0
go afterfunc-lazy 0 - 0
go gozero 0 - 1
go twheel 0 - 1
go twheel-touch 0 - 1
node null 0 - 0
node settimeout 1000000 - 0
node settimeout-lazy 1000000 - 0
node twheel 0 - 1
node twheel-touch 0 - 1
"

# The JVM as a server's is set up: a fixed heap, touched at start, so that
# what the cgroup holds does not grow with the garbage (its live heap
# after a collection is measured apart: scenctl.c).
jvm="-Xms${JVM_HEAP:-2g} -Xmx${JVM_HEAP:-2g} -XX:+AlwaysPreTouch"

# Redis as a cache server runs: no persistence (an in-memory timer).
redis="exec /bin/in-debian redis-server --bind 127.0.0.1 --port 6379 --save '' --appendonly no --logfile /tmp/redis.log"

# One timerfd and epoll item per id: a million and more of each.
echo 4194304 >/proc/sys/fs/nr_open
echo 4194304 >/proc/sys/fs/epoll/max_user_watches
ip link set lo up

picked() {
	[ -z "$WAYS" ] && return 0
	echo ",$WAYS," | grep -q ",$1," && return 0
	[ "$2" = null ] && echo ",$WAYS," | grep -q ",$1:" && return 0
	echo ",$WAYS," | grep -q ",$1:$2,"
}

field() {
	echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

# A precision as scenctl gen -p takes it: 1s, 10ms, 250us or ns.
prec_ns() {
	case $1 in
	*ms) echo $(( ${1%ms} * 1000000 )) ;;
	*us) echo $(( ${1%us} * 1000 )) ;;
	*ns) echo "${1%ns}" ;;
	*s) echo $(( ${1%s} * 1000000000 )) ;;
	*) echo "$1" ;;
	esac
}

echo "# scen: machine kernel=$(uname -r) cpus=$(nproc) mem_kb=$(awk '/MemTotal/ { print $2 }' /proc/meminfo)" \
	"java=$(in-debian java -version 2>&1 | head -n 1 | tr ' ' _)" \
	"node=$(in-debian node --version) redis=$(in-debian redis-server --version | tr ' ' '\n' | sed -n 's/^v=//p')"
kwidle=$(/opt/scenarios/scenctl kwidle)
echo "# scen: kernel threads idle ns_per_s=$kwidle runs=$RUNS"
failed=0
: >/tmp/rows
echo "$table" >/tmp/ways
for s in $(echo "$SCEN" | tr ',' ' '); do
	name=${s%%:*}
	rest=${s#"$name"}
	n=$(echo "$rest" | cut -d: -f2)
	k=$(echo "$rest" | cut -d: -f3)
	precs=$(echo "$rest" | cut -d: -f4)
	first='' gather1=''
	for p in $(echo "${precs:-1s/10ms}" | tr '/' ' '); do
		sched=/tmp/$name-$p.sched
		start=$(date +%s)
		gen=$($D/scenctl gen "$name" ${n:+-n "$n"} ${k:+-k "$k"} -p "$(prec_ns "$p")" -o "$sched")
		echo "$gen" | sed 's/^scenctl:/# scen:/'
		echo "# scen: $name $p schedule made in $(( $(date +%s) - start )) s"
		gather=$(echo "$gen" | sed -n 's/.* gather \([0-9.]*\) ms.*/\1/p')
		# The tickless ways' runs at the first precision stand for this
		# one when the loop's wait is the same.
		copy=
		if [ -n "$first" ] && [ "$gather" = "$gather1" ]; then
			copy=$first
		fi
		[ -n "$first" ] || { first=$p; gather1=$gather; }
		r=1
		while [ "$r" -le "$RUNS" ]; do
			base=
			while read -r rt way res server tick; do
				[ -n "$rt" ] || continue
				picked "$rt" "$way" || continue
				# A null way is measured from nothing, not from the
				# null way of the runtime before it.
				[ "$way" != null ] || base=
				if [ "$name" = orders ] && [ "${way%-touch}" != "$way" ]; then
					[ "$r" = 1 ] && echo "# scen: orders $p $rt-$way skipped: no refreshes, nothing to touch"
					continue
				fi
				if [ -n "$copy" ] && [ "$tick" = 0 ]; then
					row=$(grep "^scenario-run: name=$name precision=$copy way=$rt-$way " /tmp/rows |
						sed -n "${r}p" | sed "s/ precision=$copy / precision=$p /; s/ run=[0-9]*\$/ same_as=$copy/")
				else
					# shellcheck disable=SC2086 # $jvm: a list of words
					case $rt in
					c) set -- $D/scen-c "$way" "$sched" ;;
					java) set -- /bin/in-debian java $jvm -cp "$D/java:$D/java/lib/*" Scen "$way" "$sched" ;;
					go) set -- $D/scen-go "$way" "$sched" ;;
					node) set -- /bin/in-debian node --expose-gc $D/node/scen.js "$way" "$sched" ;;
					esac
					srv=
					if [ "$server" = redis ]; then
						srv=$redis
					fi
					start=$(date +%s)
					row=$($D/scenctl run -S "$sched" -w "$rt-$way" -c "/sys/fs/cgroup/scen/$rt-$way" \
						-r "$res" -i "$kwidle" ${base:+-b "$base"} \
						${srv:+-e "$srv"} -- "$@") || failed=1
					echo "# scen: $name $p $rt-$way run=$r seconds=$(( $(date +%s) - start ))"
				fi
				[ -n "$row" ] || continue
				row="$row run=$r"
				echo "$row"
				echo "$row" >>/tmp/rows
				if [ "$way" = null ]; then
					base="$(field cpu_window_ns "$row"),$(field mem_max "$row"),$(field off_heap "$row"),$(field heap_live "$row")"
				fi
			done </tmp/ways
			r=$((r + 1))
		done
	done
done
awk -f $D/rows.awk /tmp/rows
exit "$failed"
