#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The scenario benchmark's results into docs/: the rows and '# scen:'
# lines of one run or more (vm/run.sh's results.txt) into
# docs/data/scenarios.txt, with the `scenario:` and `verdict:` rows that
# rows.awk makes of all their runs (scripts/plot.sh draws the charts from
# them, `make charts`), and the tables, verdicts and goals into
# docs/bench-scenarios.md, around the prose of bench/scenarios/doc.md.in
# (the @TOKENS@ there), and the headline (the verdicts, one language a
# column) into bench/scenarios/README.md and the main README (between
# their headline markers).
#
#   bench/scenarios/report.sh RESULTS[,RESULTS...] [HOST_NOTES]
#
# Several RESULTS: boots that ran different ways (or scenarios) of one
# table; their runs are pooled, the rows say nothing of which boot made
# them (the '# scen:' lines in the data file do). HOST_NOTES: a file of
# lines about the host during the run (its load, how long the run took,
# which boot ran what), written into the document as they are.
#
# REPORT_NOTES: a Markdown file of what the run covers and shows, put in
# the document where its template says @NOTES@.
#
# A second run of some ways only gets a document of its own, its rows
# compared with each other only: REPORT_DOC, REPORT_DATA and
# REPORT_TEMPLATE name its document, data file and template, and
# REPORT_HEADLINE=0 leaves the READMEs' headline to the full run.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
results=$1
notes=${2:-}
data=${REPORT_DATA:-$top/docs/data/scenarios.txt}
doc=${REPORT_DOC:-$top/docs/bench-scenarios.md}
template=${REPORT_TEMPLATE:-$here/doc.md.in}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# kv(), med() and label(), for the awk programs below.
fields=$(cat "$here/fields.awk")

: >"$tmp/runs"
for f in $(echo "$results" | tr ',' ' '); do
	grep -E '^(scenario-run|# scen):' "$f" >>"$tmp/runs" || true
done
grep -q '^scenario-run:' "$tmp/runs" || { echo "report.sh: no scenario rows in $results" >&2; exit 1; }
{
	cat "$tmp/runs"
	awk -f "$here/rows.awk" "$tmp/runs"
	[ -z "$notes" ] || sed 's/^/# host: /' "$notes"
} >"$data"

# Per scenario and precision: the table of its ways (medians of their runs,
# the spread of CPU, what went wrong in any run), the verdicts of rows.awk
# and the issue's goals; the headline of the verdicts.
awk -v tmp="$tmp" "$fields"'
function human(ns) {
	if (ns == "-") return "-"
	return (ns >= 10000 || ns <= -10000) ? sprintf("%.1f µs", ns / 1000) : sprintf("%d ns", ns)
}
function add(k, name, n) { if (n + 0 > worst[k, name] + 0) worst[k, name] = n }
/^scenario-run:/ {
	kv()
	k = v["name"] SUBSEP v["precision"] SUBSEP v["way"]
	if (v["failed"] == 1) { failed[k]++; next }
	add(k, "early", v["early"]); add(k, "live", v["live_reported"]); add(k, "twice", v["twice"])
	add(k, "unknown", v["unknown"]); add(k, "late_refresh", v["late_refresh"]); add(k, "after_end", v["after_end"])
	add(k, "early_res", v["early_within_res"]); add(k, "lag", v["lag_max_ms"]); add(k, "kernel", v["kernel_ns"])
	if (v["lost"] + 0 > 0) { add(k, "lost", v["lost"]); expected[k] = v["expected"] }
	p50[k] = p50[k] " " v["late_p50_ms"]; pmax[k] = pmax[k] " " v["late_max_ms"]
	ops[v["name"]] = v["refreshes"]
	if (v["same_as"] != "") same[k] = v["same_as"]
	if (v["heap_live"] + 0 > 0) heap[k] = 1
	next
}
/^scenario:/ {
	kv()
	s = v["name"]; p = v["precision"]; w = v["way"]
	if (!(s in sseen)) { sseen[s] = 1; sorder[++ns] = s }
	if (!((s, p) in pseen)) { pseen[s, p] = 1; prec[s, ++np[s]] = p }
	k = s SUBSEP p SUBSEP w
	nw[s, p]++; way[s, p, nw[s, p]] = w
	runs[k] = v["runs"]; cpu[k] = v["cpu_ns_per_refresh"]; mn[k] = v["min"]; mx[k] = v["max"]
	mem[k] = v["bytes_per_id"]; p99[k] = v["p99_ms"]; wrong[k] = v["wrong"]; behind[k] = v["behind"]
	next
}
/^verdict:/ {
	kv()
	s = v["name"]; p = v["precision"]; l = v["lang"]
	nv[s, p]++; vl[s, p, nv[s, p]] = l
	vt[s, p, l] = v["twheel"]; vn[s, p, l] = v["native"]; vc[s, p, l] = v["cpu_ratio"]; vb[s, p, l] = v["bytes_ratio"]
	langs[l] = 1
}
END {
	for (o = 1; o <= ns; o++) {
		s = sorder[o]
		unit = s == "orders" ? "order" : "refresh"
		out = tmp "/table-" s
		g = tmp "/goals-" s
		for (q = 1; q <= np[s]; q++) {
			p = prec[s, q]
			print "### Precision " label(p) >out
			print "" >out
			print "| way | runs | CPU per " unit ", median (min–max) | bytes per id | lateness p50 / p99 / max (ms) | wrong | behind | notes |" >out
			print "|---|---:|---:|---:|---:|---:|:-:|---|" >out
			for (i = 1; i <= nw[s, p]; i++) {
				w = way[s, p, i]; k = s SUBSEP p SUBSEP w
				if (w ~ /-null$/) continue
				if (runs[k] == 0) { printf "| %s | 0 | failed to run | | | | | %s |\n", w, failed[k] " failed" >out; continue }
				note = ""
				if (same[k] != "") note = note "the runs at " label(same[k]) " (no tick), "
				if (worst[k, "early"] > 0) note = note worst[k, "early"] " early, "
				if (worst[k, "live"] > 0) note = note worst[k, "live"] " live reported, "
				if (worst[k, "twice"] > 0) note = note worst[k, "twice"] " twice, "
				if (worst[k, "lost"] > 0) note = note worst[k, "lost"] " of " expected[k] " not reported" (behind[k] ? " (fell behind)" : "") ", "
				if (worst[k, "unknown"] > 0) note = note worst[k, "unknown"] " unknown, "
				if (worst[k, "late_refresh"] > 0) note = note worst[k, "late_refresh"] " expired before the stalled replay sent their refresh (not counted), "
				if (worst[k, "after_end"] > 0) note = note worst[k, "after_end"] " reported after the end (not judged), "
				if (worst[k, "early_res"] > 0) note = note "up to " worst[k, "early_res"] " under 1 ms early (ms API), "
				if (worst[k, "lag"] > 100) note = note "replay lag up to " sprintf("%.0f", worst[k, "lag"]) " ms, "
				if (failed[k]) note = note failed[k] " runs failed, "
				sub(/, $/, "", note)
				printf "| %s%s | %d | %s (%s–%s) | %d | %.2f / %.2f / %.2f | %s | %s | %s |\n", w,
					(wrong[k] > 0 ? " **wrong**" : ""), runs[k], human(cpu[k]), human(mn[k]), human(mx[k]),
					mem[k], med(p50[k]), p99[k], med(pmax[k]), wrong[k], (behind[k] ? "**yes**" : ""), note >out
			}
			print "" >out
			print "![" (s == "im" ? "IM gateway" : s == "ride" ? "Ride-hailing" : "Orders") ", " label(p) "](bench-scenarios-" s "-" p ".png)" >out
			print "" >out
			if (!nv[s, p]) continue
			print "Verdicts at " label(p) " (twheel'"'"'s best way against the best native way of its language, both right and on time; medians):" >out
			print "" >out
			print "| language | twheel | native | CPU | bytes per id | p99 (ms) | goal | met |" >out
			print "|---|---|---|---:|---:|---:|---|---|" >out
			for (i = 1; i <= nv[s, p]; i++) {
				l = vl[s, p, i]; t = vt[s, p, l]; n = vn[s, p, l]
				kt = s SUBSEP p SUBSEP t; kn = s SUBSEP p SUBSEP n
				if (l == "c") {
					# The issue: c-twheel-touch against the ring with lazy re-arm.
					goal = "c-twheel-touch ≤ c-ring-lazy (CPU, bytes)"
					a = s SUBSEP p SUBSEP "c-twheel-touch"; b = s SUBSEP p SUBSEP "c-ring-lazy"
					if (!(a in runs) || !(b in runs) || !runs[a] || !runs[b]) met = "not run"
					else if (wrong[a] > 0) met = "no: wrong"
					else met = (cpu[a] <= cpu[b] && mem[a] <= mem[b]) ? "yes" : \
						sprintf("no: %.2fx the CPU, %.2fx the bytes", cpu[a] / (cpu[b] > 0 ? cpu[b] : 1), mem[a] / (mem[b] > 0 ? mem[b] : 1))
				} else {
					goal = "≤ 0.5x (CPU, bytes)"
					if (vc[s, p, l] == "-") met = "no verdict"
					# From the medians, not the ratios rounded to two places.
					else met = (2 * cpu[kt] <= cpu[kn] && 2 * mem[kt] <= mem[kn]) ? "yes" : "no"
				}
				pp = (t != "none" && n != "none") ? sprintf("%.2f / %.2f", p99[kt], p99[kn]) : "-"
				printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", l, t, n,
					(vc[s, p, l] == "-" ? "-" : sprintf("%.2fx", vc[s, p, l]) " (" human(cpu[kt]) " / " human(cpu[kn]) ")"),
					(vb[s, p, l] == "-" ? "-" : sprintf("%.2fx", vb[s, p, l]) " (" mem[kt] " / " mem[kn] ")"), pp, goal, met >out
			}
			print "" >out
			for (i = 1; i <= nv[s, p]; i++) {
				l = vl[s, p, i]
				printf "- %s, %s: %s\n", label(p), l, vt[s, p, l] == "none" ? "no twheel way right and on time" : \
					vn[s, p, l] == "none" ? "no native way right and on time" : \
					(vc[s, p, l] != "-" && vc[s, p, l] < 1 ? "twheel costs less CPU" : "twheel costs more CPU") " and " \
					(vb[s, p, l] != "-" && vb[s, p, l] < 1 ? "fewer bytes per id" : "more bytes per id") \
					"; twheel p99 " (vt[s, p, l] == "none" || vn[s, p, l] == "none" ? "-" : \
					p99[s SUBSEP p SUBSEP vt[s, p, l]] + 0 <= p99[s SUBSEP p SUBSEP vn[s, p, l]] + 0 ? "no worse than the native way'"'"'s" : "worse than the native way'"'"'s") >g
			}
		}
	}
	# The headline: one row per scenario and precision, one column per language.
	h = tmp "/headline-all"
	print "In each language, twheel'"'"'s best way against the best native way, both right and on time: its CPU per refresh (per order placed, for orders) and bytes per id over the native'"'"'s, medians of the runs (under 1: twheel costs less; `docs/bench-scenarios.md`):" >h
	print "" >h
	nl = split("c go java node", L, " ")
	printf "| scenario, precision |" >h
	for (j = 1; j <= nl; j++) printf " %s |", L[j] == "c" ? "C" : L[j] == "go" ? "Go" : L[j] == "java" ? "Java" : "Node" >h
	print "" >h
	printf "|---|" >h
	for (j = 1; j <= nl; j++) printf "---|" >h
	print "" >h
	split("im ride orders", S, " ")
	for (o = 1; o <= 3; o++) {
		s = S[o]
		for (q = 1; q <= np[s]; q++) {
			p = prec[s, q]
			printf "| %s, %s |", s == "im" ? "IM gateway" : s == "ride" ? "ride-hailing" : "orders", label(p) >h
			for (j = 1; j <= nl; j++) {
				l = L[j]
				if (!((s, p, l) in vt)) { printf " not run |" >h; continue }
				if (vc[s, p, l] == "-") { printf " no verdict (%s / %s) |", vt[s, p, l], vn[s, p, l] >h; continue }
				printf " **%.2fx** CPU, **%.2fx** bytes of %s (%s) |", vc[s, p, l], vb[s, p, l], vn[s, p, l], vt[s, p, l] >h
			}
			print "" >h
		}
	}
}' "$data"

# Where twheel's CPU goes, per scenario: each twheel way's counters (the
# medians of its runs; the drivers that count them, C and Go, say how
# many loop turns, system calls and reads a window took), the CPU of the
# kernel threads beside it, and what its binding adds to the C way of
# the same semantics (the same system calls, so the difference is the
# binding and its runtime: the user work).
awk -v tmp="$tmp" "$fields"'
/^scenario-run:/ {
	kv()
	if (v["way"] !~ /twheel/ || v["failed"] == 1 || v["refreshes"] + 0 <= 0 || v["window_s"] + 0 <= 0) next
	k = v["name"] SUBSEP v["precision"] SUBSEP v["way"]
	if (!(k in seen)) { seen[k] = 1; order[++n] = k }
	w = v["window_s"]; r = v["refreshes"]
	kern[k] = kern[k] " " v["kernel_ns"] / r
	if ("turns" in v) {
		counted[k] = 1
		turns[k] = turns[k] " " v["turns"] / w
		sys[k] = sys[k] " " (v["ioctls"] + v["reads"]) / r
		rd[k] = rd[k] " " v["reads"] / w
		if ("empty_reads" in v) empty[k] = empty[k] " " v["empty_reads"]
	}
	next
}
/^scenario:/ {
	kv()
	cpu[v["name"], v["precision"], v["way"]] = v["cpu_ns_per_refresh"]
}
END {
	for (i = 1; i <= n; i++) {
		k = order[i]; split(k, f, SUBSEP)
		s = f[1]; p = f[2]; w = f[3]
		out = tmp "/breakdown-" s
		if (!(s in head)) {
			head[s] = 1
			print "Where twheel'"'"'s CPU goes (medians of the runs, in the window): the loop'"'"'s turns, its system calls and reads of the wheel, as the C and Go drivers count them (the Java and Node drivers do not: their bindings make the calls), the CPU of the kernel threads (`kworker`, `twheel*`) beside the way, and what a binding adds per refresh to the C way of the same semantics, which makes the same system calls: its own and its runtime'"'"'s user work." >out
			print "" >out
			print "| precision | way | loop turns a second | system calls per refresh (ioctl + read) | reads a second | empty reads | kernel threads, ns per refresh | CPU per refresh | over the C way |" >out
			print "|---|---|---:|---:|---:|---:|---:|---:|---:|" >out
		}
		c = w; sub(/^[a-z]+-/, "c-", c); sub(/^c-twheel$/, "c-twheel-batch", c)
		cw = s SUBSEP p SUBSEP c
		over = (w ~ /^c-/ || !(cw in cpu) || cpu[cw] == "-" || cpu[k] == "-") ? "" : \
			sprintf("%+d ns (%s)", cpu[k] - cpu[cw], c)
		if (w ~ /netty$/) over = ""
		printf "| %s | %s | %s | %s | %s | %s | %.0f | %s | %s |\n", label(p), w,
			counted[k] ? sprintf("%.0f", med(turns[k])) : "-",
			counted[k] ? sprintf("%.4f", med(sys[k])) : "-",
			counted[k] ? sprintf("%.1f", med(rd[k])) : "-",
			counted[k] && empty[k] != "" ? sprintf("%d", med(empty[k])) : "-",
			med(kern[k]), (k in cpu) ? cpu[k] : "-", over >out
	}
}' "$data"

# The verdict lines as make prints them.
grep '^verdict:' "$data" >"$tmp/verdicts" || true

# bench/scenarios/README.md and the main README carry the headline, between their markers.
[ "${REPORT_HEADLINE:-1}" = 0 ] ||
for readme in "$here/README.md" "$top/README.md"; do
	grep -qx '<!-- headline start -->' "$readme" || {
		echo "report.sh: no headline markers in $readme" >&2
		exit 1
	}
	awk -v f="$tmp/headline-all" '
	/^<!-- headline start -->$/ { print; while ((getline l <f) > 0) print l; close(f); skip = 1; next }
	/^<!-- headline end -->$/ { skip = 0 }
	!skip' "$readme" >"$tmp/readme" && cat "$tmp/readme" >"$readme"
done

# The machine and the schedules, from the '# scen:' lines.
machine=$(sed -n 's/^# scen: machine //p' "$data" | sort -u | sed 's/^/    /')
scales=$(sed -n 's/^# scen: \(im\|ride\|orders\): /| \1 | /p' "$data" | sort -u | sed 's/$/ |/')
host=$(sed -n 's/^# host: //p' "$data" | sed 's/^/    /')
seconds=$(sed -n 's/^# scen: .* seconds=\([0-9]*\)$/\1/p' "$data" | awk '{ t += $1 } END { print t + 0 }')

# A scenario missing from the results: how to run it.
fill() {
	local t=$1
	if [ -f "$tmp/$t" ]; then
		cat "$tmp/$t"
	elif [ "${t#table-}" != "$t" ]; then
		echo "Not in the runs this document was written from: \`make -C bench/scenarios run SCEN=${t#table-}\` runs it."
	fi
}

{
	while IFS= read -r line; do
		case $line in
		@MACHINE@) echo "$machine" ;;
		@HOST@) [ -n "$host" ] && echo "$host" || echo "    (no host notes)" ;;
		@SECONDS@) echo "$seconds" ;;
		@SCALES@) echo "$scales" ;;
		@VERDICTS@) sed 's/^/    /' "$tmp/verdicts" ;;
		@NOTES@) [ -n "${REPORT_NOTES:-}" ] && cat "$REPORT_NOTES" || echo "(no notes)" ;;
		@HEADLINE@) fill headline-all ;;
		@TABLE-*@) t=${line#@TABLE-}; fill "table-${t%@}" ;;
		@GOALS-*@) t=${line#@GOALS-}; fill "goals-${t%@}" ;;
		@BREAKDOWN-*@) t=${line#@BREAKDOWN-}; fill "breakdown-${t%@}" ;;
		*) printf "%s\n" "${line//@SECONDS@/$seconds}" ;;
		esac
	done <"$template"
} >"$doc"
echo "report.sh: wrote $doc and $data"
