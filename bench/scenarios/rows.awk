# SPDX-License-Identifier: GPL-2.0
#
# The rows of the scenario benchmark from its runs: awk -f rows.awk FILE...
# (run.sh in the VM, report.sh on the host). From the `scenario-run:`
# rows of scenctl run (one per run of a way), per scenario, precision and
# way, in the order they first came:
#
#   scenario: name=S precision=P way=W runs=N cpu_ns_per_refresh=MEDIAN
#     min=A max=B bytes_per_id=X p99_ms=Y wrong=Z behind=0|1
#
# the median of the runs' CPU per refresh and its spread, the median of
# their bytes per id and p99 lateness, the most wrong of any run, behind
# if any run fell behind (runs=0 and "-" for a way none of whose runs
# ended); then per scenario, precision and language (the way's prefix):
#
#   verdict: name=S precision=P lang=L twheel=W native=W2 cpu_ratio=R
#     bytes_ratio=Q
#
# twheel's best way of that language (least median CPU among its twheel
# rows with wrong=0 and behind=0) against its best native one (the same
# among the others, the null way aside), R and Q twheel's median CPU and
# bytes over the native's: under 1, twheel costs less. "none" and "-"
# where a side has no such row, or the native figure is not above 0.
# Busybox awk runs it: nothing beyond POSIX awk.

# The median of the space-separated numbers of s; their least and most
# into spread["lo"] and spread["hi"].
function median(s, spread,    n, a, i, j, t) {
	n = split(s, a, " ")
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
	spread["lo"] = a[1]; spread["hi"] = a[n]
	if (n % 2)
		return a[(n + 1) / 2] + 0
	return (a[n / 2] + a[n / 2 + 1]) / 2
}

function ratio(a, b) {
	return b > 0 ? sprintf("%.2f", a / b) : "-"
}

/^scenario-run:/ {
	delete v
	for (i = 2; i <= NF; i++) {
		eq = index($i, "=")
		if (eq)
			v[substr($i, 1, eq - 1)] = substr($i, eq + 1)
	}
	k = v["name"] SUBSEP v["precision"] SUBSEP v["way"]
	if (!(k in seen)) {
		seen[k] = 1
		keys[++nk] = k
		if (!((v["name"] SUBSEP v["precision"]) in rowseen)) {
			rowseen[v["name"] SUBSEP v["precision"]] = 1
			rows[++nr] = v["name"] SUBSEP v["precision"]
		}
	}
	if (v["failed"] == 1)
		next
	runs[k]++
	cpus[k] = cpus[k] " " v["cpu_ns_per_refresh"]
	mems[k] = mems[k] " " v["bytes_per_id"]
	p99s[k] = p99s[k] " " v["late_p99_ms"]
	if (v["wrong"] + 0 > wrong[k] + 0)
		wrong[k] = v["wrong"]
	if (v["behind"] + 0 > behind[k] + 0)
		behind[k] = v["behind"]
}

END {
	for (i = 1; i <= nk; i++) {
		k = keys[i]
		split(k, f, SUBSEP)
		if (!runs[k]) {
			printf "scenario: name=%s precision=%s way=%s runs=0 cpu_ns_per_refresh=- min=- max=- " \
			       "bytes_per_id=- p99_ms=- wrong=- behind=-\n", f[1], f[2], f[3]
			continue
		}
		cpu[k] = median(cpus[k], spread)
		mn = spread["lo"]; mx = spread["hi"]
		mem[k] = median(mems[k], spread)
		p99 = median(p99s[k], spread)
		printf "scenario: name=%s precision=%s way=%s runs=%d cpu_ns_per_refresh=%.0f min=%.0f max=%.0f " \
		       "bytes_per_id=%.0f p99_ms=%.2f wrong=%d behind=%d\n", f[1], f[2], f[3], runs[k],
		       cpu[k], mn, mx, mem[k], p99, wrong[k], behind[k]
	}
	nl = split("c java go node", langs, " ")
	for (r = 1; r <= nr; r++) {
		split(rows[r], f, SUBSEP)
		for (l = 1; l <= nl; l++) {
			tw = ""; nat = ""; any = 0
			for (i = 1; i <= nk; i++) {
				k = keys[i]
				split(k, g, SUBSEP)
				if (g[1] != f[1] || g[2] != f[2] || index(g[3], langs[l] "-") != 1)
					continue
				any = 1
				if (g[3] == langs[l] "-null" || !runs[k] || wrong[k] + 0 || behind[k] + 0)
					continue
				if (g[3] ~ /twheel/) {
					if (tw == "" || cpu[k] < cpu[tw])
						tw = k
				} else if (nat == "" || cpu[k] < cpu[nat]) {
					nat = k
				}
			}
			if (!any)
				continue
			tn = "none"; nn = "none"; cr = "-"; br = "-"
			if (tw != "") {
				split(tw, a, SUBSEP)
				tn = a[3]
			}
			if (nat != "") {
				split(nat, b, SUBSEP)
				nn = b[3]
			}
			if (tw != "" && nat != "") {
				cr = ratio(cpu[tw], cpu[nat])
				br = ratio(mem[tw], mem[nat])
			}
			printf "verdict: name=%s precision=%s lang=%s twheel=%s native=%s cpu_ratio=%s bytes_ratio=%s\n",
			       f[1], f[2], langs[l], tn, nn, cr, br
		}
	}
}
