#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The scenario benchmark's results into docs/: the rows and '# scen:'
# lines of a run (vm/run.sh's results.txt) into docs/data/scenarios.txt,
# which scripts/plot.sh draws (`make charts`), and the tables, the goals and
# the headline table into docs/bench-scenarios.md, around the prose of
# bench/scenarios/doc.md.in (the @TOKENS@ there), and the headline table
# into bench/scenarios/README.md and the main README (between their
# headline markers).
#
#   bench/scenarios/report.sh RESULTS [HOST_NOTES]
#
# HOST_NOTES: a file of lines about the host during the run (its load,
# how long the run took), written into the document as they are.
#
# A second run of some ways only (the JVM's under one TCG thread, say:
# bench/scenarios/README.md) gets a document of its own, its rows
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

grep -E '^(scenario|# scen):' "$results" >"$data"
[ -n "$notes" ] && sed 's/^/# host: /' "$notes" >>"$data"
grep -q '^scenario:' "$data" || { echo "report.sh: no scenario rows in $results" >&2; exit 1; }

# One table per scenario, then the goals of twheel's best way, from the rows.
awk -v tmp="$tmp" '
function f(k) { return v[k] }
function ms(x) { return sprintf("%.1f", x) }
function human(ns) { return ns >= 10000 ? sprintf("%.1f µs", ns / 1000) : sprintf("%d ns", ns) }
/^scenario:/ {
	delete v
	for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	s = v["name"]; w = v["way"]
	if (!(s in nw)) order[++ns] = s
	if (v["failed"] == 1) { fail[s, ++nf[s]] = w; next }
	k = ++nw[s]
	way[s, k] = w; cpu[s, k] = v["cpu_ns_per_refresh"]; mem[s, k] = v["bytes_per_id"]
	p50[s, k] = v["late_p50_ms"]; p99[s, k] = v["late_p99_ms"]; mx[s, k] = v["late_max_ms"]
	wrong[s, k] = v["wrong"]; ops[s] = v["refreshes"]
	note = ""
	if (v["early"] > 0) note = note v["early"] " early, "
	if (v["live_reported"] > 0) note = note v["live_reported"] " live reported, "
	if (v["twice"] > 0) note = note v["twice"] " twice, "
	if (v["lost"] > 0) note = note v["lost"] " of " v["expected"] " missed, "
	if (v["unknown"] > 0) note = note v["unknown"] " unknown, "
	if (v["late_refresh"] > 0) note = note v["late_refresh"] " expired before the stalled replay sent their refresh (not counted), "
	if (v["after_end"] > 0) note = note v["after_end"] " reported after the end (not judged), "
	if (v["early_within_res"] > 0) note = note v["early_within_res"] " under 1 ms early (ms API), "
	if (v["lag_max_ms"] > 100) note = note "replay lag up to " ms(v["lag_max_ms"]) " ms, "
	sub(/, $/, "", note)
	notes[s, k] = note
	kern[s, k] = v["kernel_ns"]
}
END {
	for (o = 1; o <= ns; o++) {
		s = order[o]
		out = tmp "/table-" s
		print "| way | CPU per " (s == "orders" ? "order" : "refresh") " | bytes per id | lateness p50 / p99 / max (ms) | wrong | notes |" >out
		print "|---|---:|---:|---:|---:|---|" >out
		best = ""; bi = 0
		for (k = 1; k <= nw[s]; k++) {
			w = way[s, k]
			if (w ~ /-null$/) continue
			mark = wrong[s, k] > 0 ? " **wrong**" : ""
			printf "| %s%s | %s | %d | %s / %s / %s | %d | %s |\n", w, mark, human(cpu[s, k]),
				mem[s, k], p50[s, k], p99[s, k], mx[s, k], wrong[s, k], notes[s, k] >out
			if (w ~ /twheel/ && wrong[s, k] == 0 && (bi == 0 || cpu[s, k] < cpu[s, bi])) bi = k
		}
		for (k = 1; k <= nf[s]; k++)
			print "| " fail[s, k] " | failed to run | | | | |" >out
		# The goals, against every other way (and the best in-process p99).
		g = tmp "/goals-" s
		if (!bi) { print "No twheel way of this scenario was right." >g; continue }
		cheaper = 1; smaller = 1; bp99 = -1; worse = ""
		for (k = 1; k <= nw[s]; k++) {
			w = way[s, k]
			if (k == bi || w ~ /-null$/ || w ~ /twheel/) continue
			if (cpu[s, k] <= cpu[s, bi]) { cheaper = 0; worse = worse " " w " (CPU " human(cpu[s, k]) ")" }
			if (mem[s, k] <= mem[s, bi]) { smaller = 0; worse = worse " " w " (" mem[s, k] " bytes)" }
			if (w !~ /^c-redis/ && wrong[s, k] == 0 && (bp99 < 0 || p99[s, k] < bp99)) { bp99 = p99[s, k]; bw = w }
		}
		printf "- best twheel way: **%s**, %s per %s, %d bytes per id, p99 %s ms, %d wrong\n",
			way[s, bi], human(cpu[s, bi]), s == "orders" ? "order" : "refresh", mem[s, bi], p99[s, bi], wrong[s, bi] >g
		printf "- less CPU than every other way: %s\n", cheaper ? "yes" : "no" >g
		printf "- fewer bytes per id than every other way: %s\n", smaller ? "yes" : "no" >g
		if (worse != "") printf "- ways that beat it on CPU or memory:%s\n", worse >g
		if (bp99 >= 0)
			printf "- p99 lateness no worse than the best right in-process peer (%s, %s ms): %s\n",
				bw, bp99, p99[s, bi] <= bp99 ? "yes" : "no, " sprintf("%.1f", p99[s, bi] - bp99) " ms more" >g
		print "- 0 wrong: " (wrong[s, bi] == 0 ? "yes" : "no") >g
		# The headline: each right peer against the best twheel way.
		h = tmp "/headline-" s
		for (k = 1; k <= nw[s]; k++) {
			w = way[s, k]
			if (w ~ /-null$/ || w ~ /twheel/) continue
			printf "| %s | %s, %d B%s | %.1fx the CPU, %.1fx the memory |\n", w, human(cpu[s, k]), mem[s, k],
				(wrong[s, k] > 0 ? " (wrong)" : ""), cpu[s, k] / (cpu[s, bi] > 0 ? cpu[s, bi] : 1),
				mem[s, k] / (mem[s, bi] > 0 ? mem[s, bi] : 1) >h
		}
		printf "%s: %s, %d B per id", s, human(cpu[s, bi]), mem[s, bi] >(tmp "/best-" s)
	}
}' "$data"

# The headline across scenarios: each peer's CPU and bytes, and twheel's best
# way's, one column per scenario.
awk '
/^scenario:/ && !/ failed=1/ {
	delete v
	for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	s = v["name"]; w = v["way"]
	ran[s] = 1
	if (w ~ /-null$/) next
	cpu[s, w] = v["cpu_ns_per_refresh"]; mem[s, w] = v["bytes_per_id"]; bad[s, w] = v["wrong"] > 0
	if (!(w in seen)) { seen[w] = 1; if (w !~ /twheel/) peers[++np] = w }
	if (w ~ /twheel/ && !bad[s, w] && (!(s in best) || cpu[s, w] < cpu[s, best[s]])) best[s] = w
}
function human(ns) { return ns >= 10000 ? sprintf("%.0f µs", ns / 1000) : ns >= 1000 ? sprintf("%.1f µs", ns / 1000) : sprintf("%d ns", ns) }
function cell(s, w) {
	if (!((s, w) in cpu)) return "not run"
	return human(cpu[s, w]) ", " mem[s, w] " B" (bad[s, w] ? " (wrong)" : "")
}
END {
	n = split("im ride orders", sc, " ")
	print "| | IM gateway (30 s) | ride-hailing (10 min) | orders (30 min) |"
	print "|---|---|---|---|"
	printf "| **twheel** (best way) |"
	for (j = 1; j <= n; j++) printf " %s |", (sc[j] in best) ? "**" cell(sc[j], best[sc[j]]) "** (" best[sc[j]] ")" : (sc[j] in ran) ? "none right" : "not run"
	print ""
	for (k = 1; k <= np; k++) {
		printf "| instead of %s |", peers[k]
		for (j = 1; j <= n; j++) printf " %s |", cell(sc[j], peers[k])
		print ""
	}
}' "$data" >"$tmp/headline-all"
# bench/scenarios/README.md and the main README carry it, between their markers.
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

# The machine and the scales, from the '# scen:' lines.
machine=$(sed -n 's/^# scen: machine //p' "$data" | head -n 1)
scales=$(sed -n 's/^# scen: \(im\|ride\|orders\): /| \1 | /p' "$data" | sed 's/$/ |/')
host=$(sed -n 's/^# host: //p' "$data" | sed 's/^/    /')
seconds=$(sed -n 's/^# scen: .* seconds=\([0-9]*\)$/\1/p' "$data" | awk '{ t += $1 } END { print t + 0 }')

fill() {
	local t=$1
	[ -f "$tmp/$t" ] && cat "$tmp/$t" || echo "(not run)"
}

{
	while IFS= read -r line; do
		case $line in
		@MACHINE@) echo "    $machine" ;;
		@HOST@) [ -n "$host" ] && echo "$host" || echo "    (no host notes)" ;;
		@SECONDS@) echo "$seconds" ;;
		@SCALES@) echo "$scales" ;;
		@TABLE-*@) t=${line#@TABLE-}; fill "table-${t%@}" ;;
		@GOALS-*@) t=${line#@GOALS-}; fill "goals-${t%@}" ;;
		@HEADLINE-*@) t=${line#@HEADLINE-}; echo "Best twheel way: $(fill "best-${t%@}")."; echo
			echo "| instead of | it costs (CPU, bytes per id) | that is |"; echo "|---|---:|---|"
			fill "headline-${t%@}" ;;
		*) printf "%s\n" "${line//@SECONDS@/$seconds}" ;;
		esac
	done <"$template"
} >"$doc"
echo "report.sh: wrote $doc and $data"
