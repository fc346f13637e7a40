#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR MIT
#
# The Python binding inside the test VM (busybox sh, in the guest):
#   vm/run.sh --lang --mem 3G --copy bindings/python KERNEL bindings/python/vm-test.sh
#   vm/run.sh --lang --mem 3G --copy bindings/python KERNEL -- sh /opt/python/vm-test.sh PART...
# PART: tests, example, readme, bench; without one, the first three (a
# few minutes; the bench is longer and wants -icount). The package is
# installed first as a user installs it: its wheel (dist/, which `make
# vm-files` builds on the host) with pip into a venv of the Debian root's
# python3 that also sees Debian's pytest and pytest-asyncio; everything
# then runs from that install, never from the source tree.
#   tests    pytest over tests/, one TAP line per test, then
#            "binding: lang=python kernel=K passed=N failed=N"
#   example  examples/offline_server.py (its "offline-server:" summary)
#   readme   the README's "From Python" example as it stands (dist/readme.py,
#            extracted by make vm-files); where $opt/install-host holds the
#            line of the host's make install-check, then that line as
#            "install: lang=python from=... fresh=yes example=ok|failed
#            no_module=...", example= from this run of the example (its
#            exit status: it exits 0 only once it has read an event)
#   bench    bench/bench.py ("binding-bench:" lines)
# Exit status 1 if any part failed.
set -u

opt=/opt/python
work=/tmp/twheel-python
venv=$work/venv
py=$venv/bin/python
kernel=$(uname -r)
status=0

install_wheel() {
	# (The venv's python is a link into the Debian root, dangling here.)
	[ -f "$work/installed" ] && return 0
	mkdir -p "$work"
	set -- "$opt"/dist/twheel-*.whl /debian/usr/share/python-wheels/pip-*.whl
	if [ ! -f "$1" ]; then
		echo "# no wheel in $opt/dist: run make -C bindings/python vm-files on the host"
		return 1
	fi
	# pip itself runs from the wheel Debian's python3-venv ships, into a
	# venv made without a pip of its own: putting pip into the venv
	# byte-compiles all of it, minutes under TCG.
	start=$(date +%s)
	in-debian python3 -m venv --without-pip --system-site-packages "$venv" >"$work/install.log" 2>&1 &&
		in-debian env PIP_DISABLE_PIP_VERSION_CHECK=1 "$py" "${2#/debian}/pip" install \
			--no-index --no-deps --no-compile "$1" >>"$work/install.log" 2>&1 && {
		echo "# $(basename "$1") installed with pip into $venv in $(($(date +%s) - start)) s"
		: >"$work/installed"
		return 0
	}
	sed 's/^/# /' "$work/install.log"
	return 1
}

# Run the installed package's python in the Debian root.
run_py() {
	in-debian env PYTHONDONTWRITEBYTECODE=1 "$py" "$@"
}

part_tests() {
	tap=$work/tests.tap
	: >"$tap"
	run_py -m pytest -p no:cacheprovider -q -rfE --durations=10 --tap "$tap" "$opt/tests" \
		>"$work/pytest.log" 2>&1
	rc=$?
	cat "$tap"
	passed=$(grep '^ok ' "$tap" | grep -vc '# SKIP')
	skipped=$(grep -c '^ok .* # SKIP' "$tap")
	failed=$(grep -c '^not ok ' "$tap")
	# A run that failed before any test (collection, an import) counts too.
	if [ "$rc" != 0 ] && [ "$failed" = 0 ]; then
		failed=1
	fi
	if [ "$failed" = 0 ]; then
		sed -n '/slowest 10 durations/,/^$/s/^/# /p' "$work/pytest.log"
	else
		sed 's/^/# /' "$work/pytest.log" | tail -n 200
	fi
	echo "# pytest exit=$rc skipped=$skipped"
	echo "binding: lang=python kernel=$kernel passed=$passed failed=$failed"
	[ "$failed" = 0 ]
}

part_example() {
	# Its clients reach it over loopback, which the guest leaves down.
	ip link set lo up
	run_py "$opt/examples/offline_server.py"
}

part_readme() {
	run_py "$opt/dist/readme.py"
	rc=$?
	if [ -f "$opt/install-host" ]; then
		result=failed
		[ "$rc" = 0 ] && result=ok
		sed -n "1s/ no_module=/ example=$result no_module=/; 1s/^/install: /p" \
			"$opt/install-host"
	fi
	return $rc
}

part_bench() {
	run_py "$opt/bench/bench.py"
}

[ $# -gt 0 ] || set -- tests example readme
install_wheel || {
	echo "binding: lang=python kernel=$kernel passed=0 failed=1"
	exit 1
}
for part in "$@"; do
	case $part in
	tests|example|readme|bench) "part_$part" || status=1 ;;
	*) echo "vm-test.sh: unknown part $part" >&2; status=1 ;;
	esac
done
exit $status
