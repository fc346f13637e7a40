#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR MIT
#
# The Java binding's benchmark in the test VM (vm/run.sh --lang --copy
# DIR, DIR from `make vm-files`): BindingBench's binding-bench lines for
# 10^5 and 10^6 ids, twheel against HashedWheelTimer, Kafka's
# SystemTimer, ScheduledThreadPoolExecutor and DelayQueue; with
# twheel.jmh=1 on the kernel command line (make bench JMH=1) also the
# JMH benchmark, briefly (one fork, 3 x 1 s). Serial GC: the heap after a
# full GC is then the live objects, and no GC threads share the CPUs. C1
# only: under software emulation C2 takes so long to compile that much
# of a stream would run interpreted.
set -eu

dir=
for d in /opt/*; do
	[ -f "$d/lib/twheel.jar" ] && dir=$d
done
[ -n "$dir" ] || { echo "vm-bench.sh: no Java binding files in /opt (make vm-files)"; exit 1; }
# twheel.bench.impls=A,B on the kernel command line: only those ways.
impls=$(tr ' ' '\n' </proc/cmdline | sed -n 's/^twheel\.bench\.impls=//p' | tr ',' ' ')
[ -n "$impls" ] || impls="twheel twheel-refresh-ids twheel-touch twheel-timer hashedwheeltimer
	kafka-systemtimer scheduledthreadpoolexecutor delayqueue"
# twheel.bench.n=N,M: only those numbers of ids (-icount runs take 10^5).
sizes=$(tr ' ' '\n' </proc/cmdline | sed -n 's/^twheel\.bench\.n=//p' | tr ',' ' ')
[ -n "$sizes" ] || sizes="100000 1000000"
# twheel.bench.paced=RATE,SECONDS and twheel.bench.timeout_ms=MS: the
# timers' steady state at RATE refreshes a second (BindingBench.runPaced).
props=
for p in paced timeout_ms; do
	v=$(tr ' ' '\n' </proc/cmdline | sed -n "s/^twheel\.bench\.$p=//p")
	[ -z "$v" ] || props="$props -Dbench.$p=$v"
done
rc=0
idle=-Dbench.idle=true
# One JVM per way and n: none inherits another's garbage or compiled code.
for n in $sizes; do
	for impl in $impls; do
		in-debian java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xms2g -Xmx2g -Xshare:auto $idle $props \
			-Dbench.impls="$impl" -cp "$dir/lib/*" org.twheel.bench.BindingBench "$n" || rc=1
		idle=
	done
done
if grep -q 'twheel.jmh=1' /proc/cmdline; then
	# JMH's forked JVM reports to its parent over loopback. It runs with
	# BindingBench's flags: with C2 and G1, forks died of SIGILL in
	# compiled code under TCG.
	ip link set lo up
	in-debian java -cp "$dir/lib/*" org.openjdk.jmh.Main -f 1 -wi 2 -w 1s -i 3 -r 1s \
		-jvmArgs '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xms2g -Xmx2g' RefreshBenchmark
fi
exit $rc
