#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The charts of docs/bench-*.md, from the result files in docs/data/
# (what the benchmarks printed in the runs the documents report), with
# gnuplot (Debian: gnuplot-nox). Run from anywhere; writes docs/*.png.
#
#   scripts/plot.sh
set -eu

docs=$(cd "$(dirname "$0")/../docs" && pwd)
data=$docs/data
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Median, minimum and maximum of the numbers on stdin, one a line.
stats() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR) printf "%g %g %g\n",
		(NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[1], v[NR] }'
}

# Field KEY=VALUE of the lines on stdin.
field() {
	tr ' ' '\n' | sed -n "s/^$1=//p"
}

common='set terminal pngcairo size 900,520 font "DejaVu Sans,10"
set grid ytics
set key top left
set style fill solid 0.8 border -1'

# ---- bench-core.png: the core against the heaps at 10^6, CPU ns per op ----
core() {
	local op impl
	for op in add refresh cancel expire; do
		printf '%s' "$op"
		for impl in twheel libuv-map libuv libevent; do
			printf ' %s' "$(grep "^# cpu: impl=$impl n=1000000 " "$data/core-runs.txt" |
				field "$op" | stats)"
		done
		echo
	done >"$tmp/core.dat"
	gnuplot <<EOF
$common
set output "$docs/bench-core.png"
set title "Wheel core vs timer heaps, 10^6 entries: CPU ns per operation (median of runs, min..max)"
set style data histogram
set style histogram errorbars gap 2 lw 1
set logscale y
set yrange [10:*]
set ylabel "ns per operation (log)"
plot "$tmp/core.dat" using 2:3:4:xtic(1) title "twheel", \
	'' using 5:6:7 title "libuv + uthash id map", \
	'' using 8:9:10 title "libuv (bare heap)", \
	'' using 11:12:13 title "libevent (bare heap)"
EOF
}

# ---- bench-device.png: one refresh stream four ways, CPU ns per refresh ----
device() {
	local f n impl
	for f in icount tcg; do
		for n in 1000 10000 100000 1000000; do
			printf '%s' "$n"
			for impl in twheel twheel-batch twheel-refresh-ids twheel-touch; do
				printf ' %s' "$(cat "$data"/dev-"$f"*.txt |
					grep "^devbench: impl=$impl n=$n op=refresh " |
					field ns | stats)"
			done
			echo
		done >"$tmp/dev-$f.dat"
		cat "$data"/dev-"$f"*.txt | grep '^devbench: impl=baseline ' | field ns |
			stats | cut -d' ' -f1 >"$tmp/null-$f"
		cat "$data"/dev-"$f"*.txt | grep '^devbench: impl=timerfd n=100000 op=refresh ' |
			field ns | stats | cut -d' ' -f1 >"$tmp/tfd-$f"
	done
	gnuplot <<EOF
$common
set terminal pngcairo size 1100,520 font "DejaVu Sans,10"
set output "$docs/bench-device.png"
set multiplot layout 1,2 title "A stream of 10^6 refreshes over n ids: CPU ns per refresh, the module's work included"
set style data histogram
set style histogram errorbars gap 2 lw 1
set logscale y
set yrange [20:20000]
set xlabel "n (ids)"
set key top right
null_i = $(cat "$tmp/null-icount"); tfd_i = $(cat "$tmp/tfd-icount")
null_t = $(cat "$tmp/null-tcg"); tfd_t = $(cat "$tmp/tfd-tcg")
set title "icount: guest ns = instructions"
set ylabel "ns per refresh (log)"
plot "$tmp/dev-icount.dat" using 2:3:4:xtic(1) title "TWHEEL\\\\_IOC\\\\_OP", \
	'' using 5:6:7 title "BATCH of 256", '' using 8:9:10 title "REFRESH of 256 ids", \
	'' using 11:12:13 title "touch table", \
	null_i with lines lw 2 dt 2 lc rgb "black" title "null ioctl", \
	tfd_i with lines lw 2 dt 3 lc rgb "red" title "timerfd re-arm (10^5)"
set title "TCG, wall-clock emulation, loaded host (median of runs)"
set ylabel ""
plot "$tmp/dev-tcg.dat" using 2:3:4:xtic(1) notitle, \
	'' using 5:6:7 notitle, '' using 8:9:10 notitle, '' using 11:12:13 notitle, \
	null_t with lines lw 2 dt 2 lc rgb "black" notitle, \
	tfd_t with lines lw 2 dt 3 lc rgb "red" notitle
unset multiplot
EOF
}

# ---- bench-ioctl-path.png: where the instructions of each path go ----
# Kernel functions by what they are for; the rest is "other".
category() {
	awk '
	function cat(f) {
		if (f == "[user]") return "user space"
		if (f ~ /^(entry_|do_syscall_64|x64_sys_call|syscall_|arch_exit_to_user|fpregs_assert|__x86_indirect_thunk|__x86_return_thunk|entry_SYSRETQ)/) return "syscall entry/exit"
		if (f ~ /^(__x64_sys_ioctl|fdget|__fget|do_vfs_ioctl|security_|tomoyo_|hook_file|bpf_lsm|apparmor|aa_)/) return "ioctl dispatch + LSM"
		if (f ~ /^(rep_movs|_copy_|__put_user|__get_user|copy_user|twheel_probe)/) return "user copies"
		if (f ~ /^(mutex_|__cond_resched|__mutex)/) return "lock"
		if (f ~ /^(ktime_get|read_tsc|twheel_present|tw_idle_to|__x64_sys_clock_gettime|vdso)/) return "clock"
		if (f ~ /^(hsiphash|tw_lookup|tw_index|twheel_index)/) return "id index"
		if (f ~ /^(tw_rearm|tw_link|tw_unlink|tw_clamp|tw_add|tw_remove)/) return "wheel move"
		if (f ~ /^(twheel_arm|tw_next_event|hrtimer_|__hrtimer|timerqueue_|enqueue_hrtimer|__remove_hrtimer|get_nohz|hrtimer)/) return "timer"
		if (f ~ /^(twheel_|tw_)/) return "twheel glue"
		if (f ~ /timerfd/) return "timerfd"
		return "other"
	}
	NF >= 3 && $3 != "[kernel" { sum[cat($3)] += $1 }
	END { for (c in sum) printf "%s\t%.1f\n", c, sum[c] }'
}

ioctl_path() {
	local cats op c
	cats="syscall entry/exit|ioctl dispatch + LSM|user copies|lock|clock|id index|wheel move|timer|twheel glue|timerfd|other|user space"
	{
		printf 'op'
		IFS='|'
		for c in $cats; do printf '\t"%s"' "$c"; done
		unset IFS
		echo
		for op in null refresh batch ids touch timerfd; do
			[ -f "$data/prof-$op.txt" ] || continue
			category <"$data/prof-$op.txt" >"$tmp/cat-$op"
			printf '%s' "$op"
			IFS='|'
			for c in $cats; do
				printf '\t%s' "$(awk -F'\t' -v c="$c" '$1 == c { v = $2 } END { print v + 0 }' "$tmp/cat-$op")"
			done
			unset IFS
			echo
		done
	} >"$tmp/path.dat"
	gnuplot <<EOF
$common
set output "$docs/bench-ioctl-path.png"
set title "Instructions per operation by what they do (icount profile, Debian 6.12, 10^5 ids)"
set style data histogram
set style histogram rowstacked
set boxwidth 0.6
set key outside right top
set ylabel "instructions (= guest ns under icount)"
set xtics ("null ioctl" 0, "TWHEEL_IOC_OP\nREFRESH" 1, "BATCH\n(per op)" 2, "REFRESH ids\n(per id)" 3, "touch\n(process only)" 4, "timerfd\nre-arm" 5)
plot for [i=2:13] "$tmp/path.dat" using i title columnheader(i)
EOF
}

# ---- bench-touch.png: the helper and a system call, natively ----
touch_chart() {
	local k
	for k in rng clock store helper null_syscall enotty_ioctl; do
		printf '%s %s\n' "$k" "$(grep '^# touchbench: rng_ns' "$data/touchbench.txt" |
			field "${k}_ns" | stats)"
	done >"$tmp/touch.dat"
	gnuplot <<EOF
$common
set output "$docs/bench-touch.png"
set title "twheel\\\\_touch() and its parts against a system call, host (median of runs, min..max)"
set style data histogram
set style histogram errorbars gap 1 lw 1
set logscale y
set yrange [1:5000]
set ylabel "ns per call, thread CPU time (log)"
set key off
plot "$tmp/touch.dat" using 2:3:4:xtic(1) lc rgb "#4477aa"
EOF
}

# ---- bench-lazy.png: lazy re-arms and module CPU, second by second ----
lazy() {
	local f
	for f in icount tcg; do
		[ -f "$data/lazy-$f.txt" ] || continue
		awk '/^# lazybench: t=/ {
			for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			t = v["t"]
			printf "%d %d %.4f\n", t, v["rearms"] - r, 100 * (v["module_ns"] - k) / 1e9
			r = v["rearms"]; k = v["module_ns"] }' "$data/lazy-$f.txt" >"$tmp/lazy-$f.dat"
	done
	gnuplot <<EOF
$common
set output "$docs/bench-lazy.png"
set title "10^6 ids touched 10x/s, 30 s timeout: lazy re-arms and the module's CPU, per second"
set xlabel "seconds"
set ylabel "re-arms per second"
set y2label "module CPU, % of one CPU"
set ytics nomirror
set y2tics
set yrange [0:*]
set y2range [0:*]
set key top right
files = "$(ls "$tmp"/lazy-*.dat 2>/dev/null | tr '\n' ' ')"
plot for [f in files] f using 1:2 with lines lw 2 title "re-arms/s (".(strstrt(f, "icount") ? "icount" : "TCG").")", \
	for [f in files] f using 1:3 axes x1y2 with lines dt 2 lw 2 title "module CPU % (".(strstrt(f, "icount") ? "icount" : "TCG").")"
EOF
}

# ---- bench-scenarios-NAME-PRECISION.png: a scenario's ways at one precision ----
scenarios() {
	local s p title unit
	[ -f "$data/scenarios.txt" ] || return 0
	for s in im ride orders; do
		for p in 1s 10ms; do
			grep "^scenario: name=$s precision=$p " "$data/scenarios.txt" |
				grep -v -- '-null ' | awk '{
				for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
				if (v["runs"] == 0) next
				printf "%s %s %s %s %d\n", v["way"] (v["wrong"] > 0 ? "(wrong)" : v["behind"] > 0 ? "(behind)" : ""),
					(v["cpu_ns_per_refresh"] > 1 ? v["cpu_ns_per_refresh"] : 1),
					(v["bytes_per_id"] > 1 ? v["bytes_per_id"] : 1),
					(v["p99_ms"] > 0.01 ? v["p99_ms"] : 0.01),
					(v["way"] ~ /twheel/ ? 4421546 : 12303291) }' >"$tmp/scen-$s-$p.dat"
			[ -s "$tmp/scen-$s-$p.dat" ] || continue
			case $s in
			im) title="IM gateway: 100k connections, offline after 30 s silent"; unit=refresh ;;
			ride) title="Ride-hailing: 1M drivers, offline after 10 min silent"; unit=refresh ;;
			orders) title="Orders: 1M open, cancelled after 30 min unpaid"; unit=order ;;
			esac
			gnuplot <<EOF
$common
set terminal pngcairo size 1300,560 font "DejaVu Sans,9"
set output "$docs/bench-scenarios-$s-$p.png"
set multiplot layout 1,3 title "$title, precision $p (twheel in blue; medians; docs/bench-scenarios.md)"
set boxwidth 0.7
set xrange [-0.6:*]
set xtics rotate by -60 font ",8"
set logscale y
set key off
set title "CPU per $unit net of the null way (guest ns, log)"
plot "$tmp/scen-$s-$p.dat" using 0:2:5:xtic(1) with boxes lc rgb variable
set title "bytes per id (log)"
plot "$tmp/scen-$s-$p.dat" using 0:3:5:xtic(1) with boxes lc rgb variable
set title "detection lateness p99 (ms, log)"
plot "$tmp/scen-$s-$p.dat" using 0:4:5:xtic(1) with boxes lc rgb variable
unset multiplot
EOF
		done
	done
}

core
device
ioctl_path
touch_chart
lazy
scenarios
echo "plot: wrote $(cd "$docs" && ls bench-*.png | tr '\n' ' ')"
