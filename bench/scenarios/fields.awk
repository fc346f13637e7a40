# SPDX-License-Identifier: GPL-2.0
#
# Functions of report.sh's awk programs, put before each of them.

# The KEY=VALUE fields of the line into v[], numbers as numbers.
function kv(    i, eq, x) {
	delete v
	for (i = 2; i <= NF; i++) {
		eq = index($i, "=")
		if (!eq) continue
		x = substr($i, eq + 1)
		v[substr($i, 1, eq - 1)] = x ~ /^-?[0-9]+(\.[0-9]+)?$/ ? x + 0 : x
	}
}

# The median of the space-separated numbers of s (0 if none).
function med(s,    n, a, i, j, t) {
	n = split(s, a, " ")
	if (!n) return 0
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}

# A precision as the document writes it.
function label(p) { return p == "1s" ? "1 s" : p == "10ms" ? "10 ms" : p }
